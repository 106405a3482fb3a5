/**
 * The Streamable HTTP transport, for both eras: every message is its own POST, a request's reply
 * is one JSON body or an SSE stream of what the upstream says about it, and a legacy session adds
 * `Mcp-Session-Id`, the GET notification stream and a DELETE when the connection closes.
 *
 * It moves frames and reports HTTP outcomes in transport terms; which era a request belongs to
 * comes from the caller's hints, never from looking at the message.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Mailbox from "effect/Mailbox"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { messagesOf, messagesOfText, events } from "./internal/Sse.js"
import {
  broken,
  CancelReason,
  cancelled,
  DefaultMaxFrameBytes,
  headerValue,
  idKey,
  isOk,
  mediaType,
  readBody,
  rpcErrorOf,
  singleMessage,
  statusError,
  unreachable
} from "./internal/SseHttp.js"
import type { HttpDefinition } from "./ServerDefinition.js"
import type { Credentials } from "./UpstreamAuth.js"
import {
  callThroughStream,
  type Connection,
  LegacyHTTPRefusedError,
  type RequestHints,
  SessionExpired,
  TransportClosed,
  type TransportError
} from "./Transport.js"

/** Tunables of the Streamable HTTP transport. */
export interface HttpOptions {
  /** The largest JSON body or SSE event accepted from the upstream, in bytes (default 16 MiB). */
  readonly maxFrameBytes?: number
  /** How long the DELETE that ends a legacy session may take when the connection closes (default 2 s). */
  readonly closeTimeout?: Duration.DurationInput
  /** How long the `notifications/cancelled` POST for an abandoned legacy request may take (default 5 s). */
  readonly cancelTimeout?: Duration.DurationInput
  /** How many unsolicited messages are kept for a slow consumer before the oldest are dropped (default 1024). */
  readonly unsolicitedCapacity?: number
  /** OAuth for this server (UpstreamAuth): the Authorization header of each request, and what a 401/403 means. */
  readonly auth?: Credentials
}

const defaults = {
  maxFrameBytes: DefaultMaxFrameBytes,
  closeTimeout: "2 seconds",
  cancelTimeout: "5 seconds",
  unsolicitedCapacity: 1024
} as const

const SessionHeader = "mcp-session-id"
const VersionHeader = "mcp-protocol-version"
const AcceptBoth = "application/json, text/event-stream"

/** How long to wait before resuming a legacy response stream whose server named no `retry`. */
const DefaultRetryMs = 1000
/** The longest `retry` honoured: a server's typo must not park a request for days. */
const MaxRetryMs = 60_000
/** How many resumptions in a row may bring no event before a response stream is given up on. */
const MaxIdleResumptions = 3

/** How many times one POST is sent again after its authorization was refused and renewed. */
const MaxAuthRetries = 3

/** Statuses with which a server that is not Streamable HTTP at all refuses `initialize`. */
const refusalStatuses: ReadonlySet<number> = new Set([400, 404, 405])

const isResponseTo = (id: JsonRpc.RequestId) => (p: JsonRpc.Parsed): boolean => {
  const other = JsonRpc.isResponse(p.message) ? JsonRpc.idOf(p.message) : undefined
  return other !== undefined && idKey(other) === idKey(id)
}

/**
 * Opens a Streamable HTTP connection to `def.url`. Nothing is sent until the first message; the
 * scope owns the legacy session (DELETEd on close, bounded by `closeTimeout`) and the GET
 * notification stream. Requires an HttpClient, which the CLI provides (fetch or Node).
 */
export const openHttp = (
  def: HttpDefinition,
  options: HttpOptions = {}
): Effect.Effect<Connection, TransportError, Scope.Scope | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const maxFrameBytes = options.maxFrameBytes ?? defaults.maxFrameBytes
    const closeTimeout = options.closeTimeout ?? defaults.closeTimeout
    const cancelTimeout = options.cancelTimeout ?? defaults.cancelTimeout
    if (!URL.canParse(def.url)) return yield* new TransportClosed({ reason: `not a URL: ${def.url}` })

    // Trace ids of ours are no business of a third-party server's, so none are propagated.
    const client = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerPropagation(false))
    // Tying each exchange to a scope is what aborts a POST when its request stream is interrupted.
    const scoped = HttpClient.withScope(client)
    const session = yield* Ref.make<string | undefined>(undefined)
    // The GET stream and the DELETE have no hints of their own; they carry the version the
    // session's last legacy message named, as 2025-06-18+ servers expect on every request.
    const legacyVersion = yield* Ref.make<string | undefined>(undefined)
    const closedWith = yield* Deferred.make<TransportClosed>()
    const unsolicited = yield* Mailbox.make<JsonRpc.Parsed>({
      capacity: options.unsolicitedCapacity ?? defaults.unsolicitedCapacity,
      strategy: "sliding"
    })
    const fibers = yield* FiberSet.make()
    const streamOpen = yield* Ref.make(false)
    const source = `${def.name} (${def.url})`

    const ensureOpen = Effect.flatMap(Deferred.poll(closedWith), (done) =>
      done._tag === "Some" ? Effect.flatMap(done.value, Effect.fail) : Effect.void)
    const failOnClose = Effect.flatMap(Deferred.await(closedWith), Effect.fail)

    // Modern messages never carry a session id, and initialize starts a session rather than
    // continuing one; everything else carries the session once there is one.
    const sessionFor = (hints: RequestHints | undefined, method: string | undefined) =>
      Effect.map(Ref.get(session), (sid) => (hints?.era === "modern" || method === Method.Initialize ? undefined : sid))

    const expire = (sid: string) =>
      Effect.zipRight(
        Ref.update(session, (current) => (current === sid ? undefined : current)),
        Effect.fail(new SessionExpired({ sessionId: sid }))
      )

    const auth = options.auth
    const baseRequest = (
      request: HttpClientRequest.HttpClientRequest,
      hints: RequestHints | undefined,
      sid: string | undefined,
      authorization?: string | undefined
    ) =>
      request.pipe(
        HttpClientRequest.setHeaders(def.headers),
        HttpClientRequest.setHeaders(hints?.headers ?? {}),
        sid === undefined ? (r) => r : HttpClientRequest.setHeader(SessionHeader, sid),
        authorization === undefined ? (r) => r : HttpClientRequest.setHeader("authorization", authorization)
      )

    // GETs and DELETEs carry the token too; only a POST's refusal starts an authorization.
    const currentAuthorization: Effect.Effect<string | undefined> = auth === undefined
      ? Effect.sync(() => undefined)
      : Effect.orElseSucceed(auth.authorization, () => undefined)

    const post = Effect.fn("HttpTransport.post")(function*(
      body: string,
      hints: RequestHints | undefined,
      sid: string | undefined
    ) {
      const version = headerValue(hints?.headers, VersionHeader)
      if (hints?.era !== "modern" && version !== undefined) yield* Ref.set(legacyVersion, version)
      for (let attempt = 0;; attempt++) {
        const authorization = auth === undefined ? undefined : yield* auth.authorization
        const request = baseRequest(HttpClientRequest.post(def.url), hints, sid, authorization).pipe(
          HttpClientRequest.setHeader("accept", AcceptBoth),
          HttpClientRequest.bodyText(body, "application/json")
        )
        const response = yield* scoped.execute(request).pipe(Effect.mapError((e) => unreachable(def.url, e)))
        if (auth !== undefined && (response.status === 401 || response.status === 403) && attempt < MaxAuthRetries) {
          const verdict = yield* auth.refused({
            status: response.status,
            wwwAuthenticate: response.headers["www-authenticate"],
            sent: authorization,
            attempt
          })
          if (verdict === "retry") {
            yield* Effect.ignore(readBody(def.url, response, maxFrameBytes))
            continue
          }
        }
        const minted = response.headers[SessionHeader]
        if (minted !== undefined && minted.length > 0) yield* Ref.set(session, minted)
        return response
      }
    })

    // A refused body is read only to find a JSON-RPC message in it; one too large to hold is
    // reported as empty rather than replacing the status the caller needs to see.
    const refusedBody = (response: HttpClientResponse.HttpClientResponse) =>
      readBody(def.url, response, maxFrameBytes).pipe(
        Effect.catchTag("FrameTooLarge", () => Effect.succeed("")),
        Effect.catchTag("TransportClosed", () => Effect.succeed(""))
      )

    const toUnsolicited = (parsed: JsonRpc.Parsed) => Effect.asVoid(unsolicited.offer(parsed))

    /** Sends a notification or response: accepted is 2xx (202, or 200 from lenient servers). */
    const send = (message: JsonRpc.Notification | JsonRpc.Response, hints: RequestHints | undefined) =>
      Effect.scoped(Effect.gen(function*() {
        yield* ensureOpen
        const sid = yield* sessionFor(hints, undefined)
        const response = yield* post(JsonRpc.encodeFrame(message), hints, sid)
        if (isOk(response.status)) {
          // Reading the (normally empty) body lets the connection be reused.
          return yield* Effect.ignore(readBody(def.url, response, maxFrameBytes))
        }
        if (response.status === 404 && sid !== undefined) return yield* expire(sid)
        const body = yield* refusedBody(response)
        return yield* statusError(response.status, body, rpcErrorOf(singleMessage(body)))
      }))

    // Legacy servers do not read a closed POST as cancellation, so an abandoned legacy request is
    // cancelled explicitly, on the session it was sent on. Forked into the connection's scope so
    // the interruption that caused it is not held up by the round trip.
    const cancelUpstream = (id: JsonRpc.RequestId, hints: RequestHints | undefined, sid: string | undefined) => {
      const version = headerValue(hints?.headers, VersionHeader)
      const cancelHints: RequestHints = { era: "legacy", ...(version === undefined ? {} : { headers: { [VersionHeader]: version } }) }
      return Effect.scoped(
        Effect.flatMap(
          post(JsonRpc.encodeFrame(cancelled(id, CancelReason)), cancelHints, sid),
          (response) => Effect.ignore(readBody(def.url, response, maxFrameBytes))
        )
      ).pipe(
        Effect.timeout(cancelTimeout),
        Effect.catchAllCause((cause) => Effect.logDebug(`could not cancel request ${JSON.stringify(id)} on ${source}`, cause)),
        // Forked from a finalizer, it would inherit uninterruptibility and hold up the connection's close.
        Effect.interruptible
      )
    }

    // A resumed stream is fetched with the request's own headers and session, as its POST was.
    const resume = (lastEventId: string, hints: RequestHints | undefined, sid: string | undefined) =>
      Effect.gen(function*() {
        const request = baseRequest(HttpClientRequest.get(def.url), hints, sid, yield* currentAuthorization).pipe(
          HttpClientRequest.setHeader("accept", "text/event-stream"),
          HttpClientRequest.setHeader("last-event-id", lastEventId)
        )
        const response = yield* scoped.execute(request).pipe(Effect.mapError((e) => unreachable(def.url, e)))
        if (response.status === 404 && sid !== undefined) return yield* expire(sid)
        if (!isOk(response.status) || mediaType(response) !== "text/event-stream") {
          const body = yield* refusedBody(response)
          return yield* statusError(response.status, body, rpcErrorOf(singleMessage(body)))
        }
        return response
      })

    /**
     * A request's SSE reply, up to and including its response. A 2025-11-25 server may end the
     * stream early once it has sent an event id, and expects the client to resume with a GET
     * carrying Last-Event-ID after the `retry` delay it named; a modern stream that breaks has
     * lost its request (the caller re-issues it), so only legacy requests are resumed.
     */
    const sseReply = (
      response: HttpClientResponse.HttpClientResponse,
      req: JsonRpc.Request,
      answered: Ref.Ref<boolean>,
      resumable: { readonly hints: RequestHints | undefined; readonly sid: string | undefined } | undefined
    ): Stream.Stream<JsonRpc.Parsed, TransportError> => {
      const mine = isResponseTo(req.id)
      const cursor: {
        lastEventId: string | undefined
        retryMs: number | undefined
        events: number
        broke: TransportClosed | undefined
      } = { lastEventId: undefined, retryMs: undefined, events: 0, broke: undefined }
      const read = (r: HttpClientResponse.HttpClientResponse) =>
        events(r.stream.pipe(Stream.mapError((e) => broken(def.url, e))), maxFrameBytes, (ms) => {
          cursor.retryMs = ms
        }).pipe(
          Stream.tap((event) =>
            Effect.sync(() => {
              cursor.events++
              if (event.id !== undefined && event.id.length > 0) cursor.lastEventId = event.id
            })
          ),
          Stream.mapEffect((event) => messagesOf(event, source)),
          Stream.flattenIterables,
          // Only this request's response ends its stream; another id's response belongs to no one here.
          Stream.filterEffect((p) =>
            JsonRpc.isResponse(p.message) && !mine(p) ? Effect.as(toUnsolicited(p), false) : Effect.succeed(true)
          ),
          Stream.takeUntil(mine),
          Stream.tap((p) => (mine(p) ? Ref.set(answered, true) : Effect.void)),
          // A stream that broke off may be resumed like one the server ended; `next` decides.
          Stream.catchTag("TransportClosed", (e) => Stream.execute(Effect.sync(() => (cursor.broke = e))))
        )
      // `idle` counts resumptions in a row that brought nothing, so a server that keeps closing
      // empty streams is given up on rather than polled forever.
      const next = (idle: number): Stream.Stream<JsonRpc.Parsed, TransportError> =>
        Stream.unwrapScoped(Effect.gen(function*() {
          if (yield* Ref.get(answered)) return Stream.empty
          const lastEventId = cursor.lastEventId
          if (resumable === undefined || lastEventId === undefined || idle >= MaxIdleResumptions) {
            return yield* (cursor.broke ?? new TransportClosed({
              reason: `the response stream of request ${JSON.stringify(req.id)} on ${def.url} ended without its response`
            }))
          }
          cursor.broke = undefined
          yield* Effect.sleep(Math.min(cursor.retryMs ?? DefaultRetryMs, MaxRetryMs))
          const before = cursor.events
          const resumed = yield* resume(lastEventId, resumable.hints, resumable.sid)
          return read(resumed).pipe(Stream.concat(Stream.suspend(() => next(cursor.events > before ? 0 : idle + 1))))
        }))
      return read(response).pipe(Stream.concat(next(0)))
    }

    const jsonReply = (response: HttpClientResponse.HttpClientResponse, req: JsonRpc.Request, answered: Ref.Ref<boolean>) =>
      Effect.gen(function*() {
        const body = yield* readBody(def.url, response, maxFrameBytes)
        const messages = yield* messagesOfText(body, source)
        const reply = messages.find(isResponseTo(req.id))
        yield* Effect.forEach(messages.filter((p) => p !== reply), toUnsolicited, { discard: true })
        yield* Ref.set(answered, true)
        if (reply === undefined) return yield* statusError(response.status, body, undefined)
        return Stream.make(reply)
      })

    const refused = (response: HttpClientResponse.HttpClientResponse, req: JsonRpc.Request, sid: string | undefined) =>
      Effect.gen(function*() {
        // The session rule comes first: after a session ends the server answers 404 to its id,
        // whatever the body says.
        if (response.status === 404 && sid !== undefined) return yield* expire(sid)
        const body = yield* refusedBody(response)
        const parsed = singleMessage(body)
        // A modern server refuses with a 4xx *and* the request's JSON-RPC error (-32022 and
        // friends); that error is the answer the negotiation needs. A 5xx stays an HTTP error
        // whatever its body: the server is failing, and the probe must not read an era into it.
        if (response.status < 500 && parsed !== undefined && isResponseTo(req.id)(parsed)) return Stream.make(parsed)
        const rpcError = rpcErrorOf(parsed)
        if (req.method === Method.Initialize && refusalStatuses.has(response.status) && rpcError === undefined) {
          return yield* new LegacyHTTPRefusedError({ status: response.status })
        }
        return yield* statusError(response.status, body, rpcError)
      })

    const request = (req: JsonRpc.Request, hints?: RequestHints): Stream.Stream<JsonRpc.Parsed, TransportError> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        yield* ensureOpen
        const sid = yield* sessionFor(hints, req.method)
        const legacy = hints?.era === "legacy" || (hints?.era === undefined && sid !== undefined)
        // Clients must not cancel initialize; an abandoned one simply never becomes a session.
        const cancellable = legacy && req.method !== Method.Initialize
        // Set once nothing can be running upstream any more: answered, refused, or never sent.
        const answered = yield* Ref.make(false)
        yield* Effect.addFinalizer(() =>
          Effect.gen(function*() {
            if (!cancellable || (yield* Ref.get(answered)) || (yield* Deferred.isDone(closedWith))) return
            yield* FiberSet.run(fibers, cancelUpstream(req.id, hints, sid))
          })
        )
        const response = yield* post(JsonRpc.encodeFrame(req), hints, sid).pipe(
          Effect.tapError(() => Ref.set(answered, true))
        )
        if (!isOk(response.status)) {
          yield* Ref.set(answered, true)
          return yield* refused(response, req, sid)
        }
        switch (mediaType(response)) {
          case "text/event-stream":
            return sseReply(response, req, answered, legacy ? { hints, sid } : undefined)
          case "application/json":
            return yield* jsonReply(response, req, answered)
          default: {
            yield* Ref.set(answered, true)
            const body = yield* refusedBody(response)
            return yield* statusError(response.status, body, undefined)
          }
        }
      })).pipe(Stream.interruptWhen(failOnClose))

    const listen = (ready: Deferred.Deferred<void, TransportError>) =>
      Effect.gen(function*() {
        const sid = yield* Ref.get(session)
        const version = yield* Ref.get(legacyVersion)
        const request = baseRequest(HttpClientRequest.get(def.url), undefined, sid, yield* currentAuthorization).pipe(
          HttpClientRequest.setHeader("accept", "text/event-stream"),
          version === undefined ? (r) => r : HttpClientRequest.setHeader(VersionHeader, version)
        )
        const response = yield* scoped.execute(request).pipe(Effect.mapError((e) => unreachable(def.url, e)))
        if (response.status === 405) {
          yield* Effect.logDebug(`${source} offers no notification stream (405)`)
          return yield* Deferred.succeed(ready, undefined)
        }
        if (!isOk(response.status)) {
          if (response.status === 404 && sid !== undefined) return yield* expire(sid)
          const body = yield* refusedBody(response)
          return yield* statusError(response.status, body, rpcErrorOf(singleMessage(body)))
        }
        if (mediaType(response) !== "text/event-stream") {
          const body = yield* refusedBody(response)
          return yield* statusError(response.status, body, undefined)
        }
        yield* Deferred.succeed(ready, undefined)
        yield* events(response.stream.pipe(Stream.mapError((e) => broken(def.url, e))), maxFrameBytes).pipe(
          Stream.mapEffect((event) => messagesOf(event, source)),
          Stream.flattenIterables,
          Stream.runForEach(toUnsolicited)
        )
        yield* Effect.logDebug(`the notification stream of ${source} ended`)
      })

    const openNotificationStream: Effect.Effect<void, TransportError> = Effect.gen(function*() {
      yield* ensureOpen
      // One stream per session: servers refuse a second one (409) or split messages between them.
      if (yield* Ref.getAndSet(streamOpen, true)) return
      const ready = yield* Deferred.make<void, TransportError>()
      yield* FiberSet.run(
        fibers,
        Effect.scoped(listen(ready)).pipe(
          Effect.catchAll((e) =>
            Effect.zipRight(
              Deferred.fail(ready, e),
              Effect.logWarning(`the notification stream of ${source} failed: ${e.message}`)
            )
          ),
          Effect.ensuring(Effect.zipRight(
            Ref.set(streamOpen, false),
            Deferred.fail(ready, new TransportClosed({ reason: `connection to ${def.url} closed` }))
          ))
        )
      )
      yield* Deferred.await(ready)
    }).pipe(Effect.withSpan("HttpTransport.openNotificationStream"))

    const deleteSession = (sid: string) =>
      Effect.gen(function*() {
        const version = yield* Ref.get(legacyVersion)
        const request = baseRequest(HttpClientRequest.del(def.url), undefined, sid, yield* currentAuthorization).pipe(
          version === undefined ? (r) => r : HttpClientRequest.setHeader(VersionHeader, version)
        )
        const response = yield* scoped.execute(request)
        yield* Effect.logDebug(`ended session ${sid} on ${source}: HTTP ${response.status}`)
      }).pipe(
        Effect.scoped,
        // Finalizers run uninterruptibly; without this the timeout could not stop a hung DELETE.
        Effect.interruptible,
        Effect.timeout(closeTimeout),
        Effect.catchAllCause((cause) => Effect.logDebug(`could not end session ${sid} on ${source}`, cause))
      )

    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        // First, so in-flight requests fail with TransportClosed rather than cancel one by one.
        yield* Deferred.succeed(closedWith, new TransportClosed({ reason: `connection to ${def.url} closed` }))
        yield* FiberSet.clear(fibers)
        const sid = yield* Ref.get(session)
        if (sid !== undefined) yield* deleteSession(sid)
        yield* unsolicited.end
      })
    )

    const connection: Connection = {
      request,
      call: callThroughStream(request),
      notify: Effect.fn("HttpTransport.notify")(function*(notification: JsonRpc.Notification, hints?: RequestHints) {
        yield* send(notification, hints)
      }),
      respond: Effect.fn("HttpTransport.respond")(function*(response: JsonRpc.Response, hints?: RequestHints) {
        yield* send(response, hints)
      }),
      unsolicited: Mailbox.toStream(unsolicited),
      closed: Deferred.await(closedWith),
      stderrTail: Effect.succeed(""),
      openNotificationStream,
      wire: "streamable-http"
    }
    return connection
  })
