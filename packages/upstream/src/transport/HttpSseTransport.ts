/**
 * The deprecated 2024-11-05 HTTP+SSE transport, kept for upstreams that refuse `initialize` over
 * Streamable HTTP with a bare 400/404/405. One long GET carries everything the server says (the
 * `endpoint` event first, then `message` events); every client message is a POST to the endpoint
 * it named. Replies are matched to requests by id, since nothing else ties them together.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Mailbox from "effect/Mailbox"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { DefaultMaxFrameBytes, events, messagesOf, type SseEvent } from "./Sse.js"
import * as Waiting from "./internal/Waiting.js"
import { cancelled, CancelReason, idKey, isOk, mediaType, rpcErrorOf, singleMessage, statusError } from "./internal/SseHttp.js"
import * as Wire from "./Wire.js"
import type { HttpDefinition } from "../ServerDefinition.js"
import { callThroughStream, type Connection, type HTTPStatusError, type RequestHints, TransportClosed, type TransportError } from "./Transport.js"

/** Tunables of the HTTP+SSE transport. */
export interface HttpSseOptions {
  /** The largest SSE event accepted from the upstream, in bytes (default 16 MiB). */
  readonly maxFrameBytes?: number
  /** How long the stream may take to name its endpoint once it is open (default 30 s). */
  readonly endpointTimeout?: Duration.DurationInput
  /** How long the `notifications/cancelled` POST for an abandoned request may take (default 5 s). */
  readonly cancelTimeout?: Duration.DurationInput
  /** How many unsolicited messages are kept for a slow consumer before the oldest are dropped (default 1024). */
  readonly unsolicitedCapacity?: number
  /** What carries the exchanges (default: undici with kept-alive connections of the connection's own). */
  readonly wire?: Wire.Sender
}

const defaults = {
  maxFrameBytes: DefaultMaxFrameBytes,
  endpointTimeout: "30 seconds",
  cancelTimeout: "5 seconds",
  unsolicitedCapacity: 1024
} as const

/**
 * Where to look for the SSE endpoint: the configured URL, then `/sse` on its origin, which is
 * where HTTP+SSE servers conventionally put it when the configured URL is their message path.
 */
const candidates = (url: string): ReadonlyArray<string> => {
  const sse = new URL("/sse", url).href
  return sse === new URL(url).href ? [url] : [url, sse]
}

/**
 * Opens an HTTP+SSE connection: GETs the SSE stream (at `def.url`, or at `/sse` on its origin if
 * that answers with something other than an event stream) and waits for its `endpoint` event.
 * The scope owns the stream; closing it ends the connection, which is also how this transport's
 * session ends.
 */
export const openHttpSse = (
  def: HttpDefinition,
  options: HttpSseOptions = {}
): Effect.Effect<Connection, TransportError, Scope.Scope> =>
  Effect.gen(function*() {
    // Opening acquires the stream before it can fail (no endpoint, a refused POST URI), so it
    // runs in a scope of its own that a failed open closes at once, whatever the caller's scope.
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    return yield* make(def, options, scope).pipe(
      Scope.extend(scope),
      Effect.onExit((exit) => (Exit.isFailure(exit) ? Scope.close(scope, exit) : Effect.void))
    )
  })

const make = (
  def: HttpDefinition,
  options: HttpSseOptions,
  scope: Scope.Scope
): Effect.Effect<Connection, TransportError, Scope.Scope> =>
  Effect.gen(function*() {
    const maxFrameBytes = options.maxFrameBytes ?? defaults.maxFrameBytes
    const cancelTimeout = options.cancelTimeout ?? defaults.cancelTimeout
    if (!URL.canParse(def.url)) return yield* new TransportClosed({ reason: `not a URL: ${def.url}` })

    const wire = options.wire ?? (yield* Scope.extend(Wire.make(), scope))
    const fibers = yield* FiberSet.make()
    const closedWith = yield* Deferred.make<TransportClosed>()
    const unsolicited = yield* Mailbox.make<JsonRpc.Parsed>({
      capacity: options.unsolicitedCapacity ?? defaults.unsolicitedCapacity,
      strategy: "sliding"
    })
    const waiting = Waiting.make()
    const { callers, pending, progress } = waiting
    const source = `${def.name} (${def.url}, HTTP+SSE)`

    const close = (reason: TransportClosed) =>
      Effect.gen(function*() {
        if (!(yield* Deferred.succeed(closedWith, reason))) return
        yield* waiting.failAll(reason)
        yield* unsolicited.end
      })
    yield* Effect.addFinalizer(() => close(new TransportClosed({ reason: `connection to ${def.url} closed` })))

    const ensureOpen = Effect.flatMap(Deferred.poll(closedWith), (done) => done._tag === "Some" ? Effect.flatMap(done.value, Effect.fail) : Effect.void)

    const refusedBody = (response: Wire.WireResponse) =>
      response.text(maxFrameBytes).pipe(
        Effect.catchTag("FrameTooLarge", () => Effect.succeed("")),
        Effect.catchTag("TransportClosed", () => Effect.succeed(""))
      )

    // Each attempt gets its own scope under the connection's, so a refused attempt is released
    // at once and the accepted stream lives exactly as long as the connection.
    const attempt = (url: string) =>
      Effect.gen(function*() {
        const child = yield* Scope.fork(scope, ExecutionStrategy.sequential)
        const response = yield* wire.send({ method: "GET", url, headers: Wire.mergeHeaders(def.headers, { accept: "text/event-stream" }) }).pipe(
          Scope.extend(child),
          Effect.onError(() => Scope.close(child, Exit.void))
        )
        if (isOk(response.status) && mediaType(response) === "text/event-stream") {
          return { _tag: "Stream", url, response } as const
        }
        const body = yield* refusedBody(response)
        yield* Scope.close(child, Exit.void)
        return { _tag: "Refused", error: statusError(response.status, body, rpcErrorOf(singleMessage(body))) } as const
      })

    let opened: { readonly url: string; readonly response: Wire.WireResponse } | undefined
    let refusal: HTTPStatusError | undefined
    for (const url of candidates(def.url)) {
      const outcome = yield* attempt(url)
      if (outcome._tag === "Stream") {
        opened = outcome
        break
      }
      refusal = outcome.error
      yield* Effect.logDebug(`${url} is not an HTTP+SSE stream: HTTP ${outcome.error.status}`)
    }
    if (opened === undefined) {
      return yield* (refusal ?? new TransportClosed({ reason: `no HTTP+SSE stream at ${def.url}` }))
    }
    const sseUrl = opened.url

    const endpoint = yield* Deferred.make<string, TransportError>()

    // Server→client requests land here too: this transport cannot tell which call asked.
    const dispatch = (parsed: JsonRpc.Parsed) =>
      Effect.flatMap(waiting.route(parsed), (routed) => (routed ? Effect.void : Effect.asVoid(unsolicited.offer(parsed))))

    // The stream is the connection: when it ends, so does everything waiting on it.
    const ended = (reason: TransportClosed) => Effect.zipRight(close(reason), Deferred.fail(endpoint, reason))

    // Generator functions made once per connection, not per event or request: one made per call
    // carried the call into old space (docs/performance.md, What a call allocates).
    const onEvent = Effect.fnUntraced(
      function*(event: SseEvent) {
        if (event.event === "endpoint") {
          const target = URL.canParse(event.data.trim(), sseUrl) ? new URL(event.data.trim(), sseUrl) : undefined
          // Every POST carries the configured headers (credentials among them), so an endpoint
          // on another origin is refused rather than followed.
          if (target === undefined || target.origin !== new URL(sseUrl).origin) {
            return yield* Deferred.fail(
              endpoint,
              new TransportClosed({
                reason: `${sseUrl} named an unusable endpoint: ${JSON.stringify(event.data.slice(0, 200))}`
              })
            )
          }
          if (!(yield* Deferred.succeed(endpoint, target.href))) {
            yield* Effect.logDebug(`${source} named its endpoint again; keeping the first`)
          }
          return
        }
        if (!(yield* Deferred.isDone(endpoint))) {
          return yield* Effect.logWarning(`${source} sent a ${event.event ?? "message"} event before its endpoint; skipped`)
        }
        const messages = yield* messagesOf(event, source)
        yield* Effect.forEach(messages, dispatch, { discard: true })
      }
    )

    yield* events(Wire.stream(opened.response), maxFrameBytes).pipe(
      Stream.runForEach(onEvent),
      Effect.matchEffect({
        onFailure: (e) => ended(new TransportClosed({ reason: `the HTTP+SSE stream of ${sseUrl} failed: ${e.message}` })),
        onSuccess: () => ended(new TransportClosed({ reason: `the HTTP+SSE stream of ${sseUrl} ended` }))
      }),
      FiberSet.run(fibers)
    )

    const postUrl = yield* Deferred.await(endpoint).pipe(
      Effect.timeoutFail({
        duration: options.endpointTimeout ?? defaults.endpointTimeout,
        onTimeout: () => new TransportClosed({ reason: `${sseUrl} opened a stream but named no endpoint` })
      })
    )

    const post = Effect.fn("HttpSseTransport.post")(function*(message: JsonRpc.Message, hints: RequestHints | undefined) {
      const response = yield* wire.send({
        method: "POST",
        url: postUrl,
        headers: Wire.mergeHeaders(def.headers, hints?.headers, { "content-type": "application/json" }),
        body: JsonRpc.encodeFrame(message)
      })
      // The body (normally "Accepted") is read so the connection can be reused; replies come on the stream.
      if (isOk(response.status)) return yield* Effect.ignore(response.text(maxFrameBytes))
      const body = yield* refusedBody(response)
      return yield* statusError(response.status, body, rpcErrorOf(singleMessage(body)))
    }, Effect.scoped)

    const send = (message: JsonRpc.Message, hints: RequestHints | undefined) => Effect.zipRight(ensureOpen, post(message, hints))

    // Nothing ties a closed POST to a request on this transport, so an abandoned request is
    // cancelled explicitly; forked so the interruption that caused it is not held up.
    const cancelUpstream = (id: JsonRpc.RequestId, hints: RequestHints | undefined) =>
      post(cancelled(id, CancelReason), hints).pipe(
        Effect.timeout(cancelTimeout),
        Effect.catchAllCause((cause) => Effect.logDebug(`could not cancel request ${JSON.stringify(id)} on ${source}`, cause)),
        // Forked from a finalizer, it would inherit uninterruptibility and hold up the connection's close.
        Effect.interruptible
      )

    const opening = Effect.fnUntraced(
      function*(req: JsonRpc.Request, hints: RequestHints | undefined) {
        yield* ensureOpen
        const key = idKey(req.id)
        const token = Waiting.requestProgressKey(req.params)
        const box = yield* Mailbox.make<JsonRpc.Parsed, TransportError>()
        // Registered before the POST: the reply may overtake the POST's own 202.
        pending.set(key, box)
        if (token !== undefined) progress.set(token, box)
        if (hints?.caller !== undefined) callers.set(key, hints.caller)
        let refused = false
        yield* Effect.addFinalizer(() =>
          Effect.suspend(() => {
            const unanswered = pending.get(key) === box
            if (unanswered) {
              pending.delete(key)
              callers.delete(key)
            }
            if (token !== undefined && progress.get(token) === box) progress.delete(token)
            // Clients must not cancel initialize; an abandoned one simply never becomes a session.
            if (!unanswered || refused || req.method === Method.Initialize) return Effect.void
            return Effect.flatMap(
              Deferred.isDone(closedWith),
              (closed) => closed ? Effect.void : Effect.asVoid(FiberSet.run(fibers, cancelUpstream(req.id, hints)))
            )
          })
        )
        yield* post(req, hints).pipe(
          Effect.tapError(() => Effect.sync(() => (refused = true))),
          // A POST the closing overtook (aborted, or refused by a server that let go of the stream)
          // reads as the closing, whatever came back.
          Effect.catchAll((e) => Effect.zipRight(ensureOpen, Effect.fail(e)))
        )
        return Mailbox.toStream(box)
      }
    )
    const request = (req: JsonRpc.Request, hints?: RequestHints): Stream.Stream<JsonRpc.Parsed, TransportError> => Stream.unwrapScoped(opening(req, hints))

    const connection: Connection = {
      request,
      call: callThroughStream(request),
      notify: Effect.fn("HttpSseTransport.notify")(function*(notification: JsonRpc.Notification, hints?: RequestHints) {
        yield* send(notification, hints)
      }),
      respond: Effect.fn("HttpSseTransport.respond")(function*(response: JsonRpc.Response, hints?: RequestHints) {
        yield* send(response, hints)
      }),
      unsolicited: Mailbox.toStream(unsolicited),
      closed: Deferred.await(closedWith),
      stderrTail: Effect.succeed(""),
      // The one stream this transport has is already open: it is the connection.
      openNotificationStream: ensureOpen,
      wire: "http+sse"
    }
    return connection
  })
