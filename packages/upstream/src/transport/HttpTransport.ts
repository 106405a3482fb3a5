/**
 * The Streamable HTTP transport, for both eras: every message is its own POST, a request's reply
 * is one JSON body or an SSE stream of what the upstream says about it, and a legacy session adds
 * `Mcp-Session-Id`, the GET notification stream and a DELETE when the connection closes.
 *
 * It moves frames and reports HTTP outcomes in transport terms; which era a request belongs to
 * comes from the caller's hints, never from looking at the message.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Mailbox from "effect/Mailbox"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as HttpExchange from "./internal/HttpExchange.js"
import { CutInPlace, inPlaceIn, type WaitingCall } from "./internal/InPlace.js"
import { DefaultMaxFrameBytes } from "./Sse.js"
import * as HttpNotificationStream from "./internal/HttpNotificationStream.js"
import * as HttpReplies from "./internal/HttpReplies.js"
import { newCursor, type ReadEnv, ReplyRead } from "./internal/ReplyRead.js"
import { cancelled, CancelReason, headerValue, isOk, rpcErrorOf, singleMessage, statusError } from "./internal/SseHttp.js"
import * as Wire from "./Wire.js"
import type { HttpDefinition } from "../ServerDefinition.js"
import type { Credentials } from "../auth/AuthModel.js"
import { type Connection, type RequestHints, TransportClosed, type TransportError } from "./Transport.js"

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
  /** What carries the exchanges (default: undici with kept-alive connections of the connection's own). */
  readonly wire?: Wire.Wire
}

/** How many messages tied to a request may wait for a slow reader of its stream. */
const TiedCapacity = 64

const defaults = {
  maxFrameBytes: DefaultMaxFrameBytes,
  closeTimeout: "2 seconds",
  cancelTimeout: "5 seconds",
  unsolicitedCapacity: 1024
} as const

/**
 * Opens a Streamable HTTP connection to `def.url`. Nothing is sent until the first message; the
 * scope owns the legacy session (DELETEd on close, bounded by `closeTimeout`) and the GET
 * notification stream.
 */
export const openHttp = (
  def: HttpDefinition,
  options: HttpOptions = {}
): Effect.Effect<Connection, TransportError, Scope.Scope> =>
  Effect.gen(function*() {
    const maxFrameBytes = options.maxFrameBytes ?? defaults.maxFrameBytes
    const closeTimeout = options.closeTimeout ?? defaults.closeTimeout
    const cancelTimeout = options.cancelTimeout ?? defaults.cancelTimeout
    if (!URL.canParse(def.url)) return yield* new TransportClosed({ reason: `not a URL: ${def.url}` })

    const wire = options.wire ?? (yield* Wire.make())
    const exchange = yield* HttpExchange.make(def, { maxFrameBytes, auth: options.auth, wire })
    const {
      baseHeaders,
      currentAuthorization,
      dispatch,
      expire,
      legacyVersion,
      post,
      postAuthorization,
      postRequest,
      refusedBody,
      renewed,
      session,
      sessionFor,
      source,
      took
    } = exchange
    const closedWith = yield* Deferred.make<TransportClosed>()
    const unsolicited = yield* Mailbox.make<JsonRpc.Parsed>({
      capacity: options.unsolicitedCapacity ?? defaults.unsolicitedCapacity,
      strategy: "sliding"
    })
    const fibers = yield* FiberSet.make()

    // Why the connection closed, once it has: read in place by every exchange as it begins.
    let closing: TransportClosed | undefined
    const ensureOpen = Effect.suspend(() => (closing === undefined ? Effect.void : Effect.fail(closing)))

    const toUnsolicited = (parsed: JsonRpc.Parsed) => Effect.asVoid(unsolicited.offer(parsed))
    const readEnv: ReadEnv = {
      maxFrameBytes,
      source,
      toUnsolicited: (parsed) => {
        unsolicited.unsafeOffer(parsed)
      },
      onBegin: took
    }
    const { refused, resumed } = HttpReplies.make(exchange, readEnv)
    const openNotificationStream = yield* HttpNotificationStream.make(exchange, { ensureOpen, fibers, toUnsolicited })

    // The steps run per message are generator functions made once per connection: one made per
    // call (`Effect.gen` inside the call) carried the whole call into old space (docs/performance.md,
    // What a call allocates).

    /** Sends a notification or response: accepted is 2xx (202, or 200 from lenient servers). */
    const send = Effect.fnUntraced(
      function*(message: JsonRpc.Notification | JsonRpc.Response, hints: RequestHints | undefined) {
        yield* ensureOpen
        const sid = sessionFor(hints, undefined)
        const response = yield* post(JsonRpc.encodeFrame(message), hints, sid)
        if (isOk(response.status)) {
          // Reading the (normally empty) body lets the connection be reused.
          return yield* Effect.ignore(response.text(maxFrameBytes))
        }
        if (response.status === 404 && sid !== undefined) return yield* expire(sid)
        const body = yield* refusedBody(response)
        return yield* statusError(response.status, body, rpcErrorOf(singleMessage(body)))
      },
      Effect.scoped
    )

    // Legacy servers do not read a closed POST as cancellation, so an abandoned legacy request is
    // cancelled explicitly, on the session it was sent on. Forked into the connection's scope so
    // the interruption that caused it is not held up by the round trip.
    const cancelUpstream = (id: JsonRpc.RequestId, hints: RequestHints | undefined, sid: string | undefined) => {
      const version = headerValue(hints?.headers, HttpExchange.VersionHeader)
      const cancelHints: RequestHints = { era: "legacy", ...(version === undefined ? {} : { headers: { [HttpExchange.VersionHeader]: version } }) }
      return Effect.scoped(
        Effect.flatMap(
          post(JsonRpc.encodeFrame(cancelled(id, CancelReason)), cancelHints, sid),
          (response) => Effect.ignore(response.text(maxFrameBytes))
        )
      ).pipe(
        Effect.timeout(cancelTimeout),
        Effect.catchAllCause((cause) => Effect.logDebug(`could not cancel request ${JSON.stringify(id)} on ${source}`, cause)),
        // Forked from a finalizer, it would inherit uninterruptibility and hold up the connection's close.
        Effect.interruptible
      )
    }

    // A failure that the connection's closing caused reads as the closing, whatever the socket said.
    const closingFirst = (e: TransportClosed): Effect.Effect<never, TransportClosed> => Effect.zipRight(ensureOpen, Effect.fail(e))

    /** What one request holds while it runs: its POST (the last one sent), and how that POST was read. */
    interface Held {
      sent: Wire.WireExchange | undefined
      read: ReplyRead | undefined
    }

    // The POST of a request, read in place; sent again while a refused authorization is renewed.
    // What is not the reply (a refusal, a body of another type) is read on the effectful path.
    const posted = (
      req: JsonRpc.Request,
      body: string,
      deliver: HttpReplies.Deliver,
      hints: RequestHints | undefined,
      sid: string | undefined,
      inPlace: WaitingCall | undefined,
      resumable: HttpReplies.Resumable | undefined,
      held: Held,
      attempt: number
    ): Effect.Effect<JsonRpc.Parsed, TransportError> =>
      Effect.flatMap(postAuthorization, (authorization) => {
        held.sent?.release()
        const read = new ReplyRead(req.id, newCursor(), true, readEnv)
        held.read = read
        held.sent = dispatch(postRequest(body, hints, sid, authorization, inPlace), read)
        return Effect.flatMap(read.reply(deliver), (reply): Effect.Effect<JsonRpc.Parsed, TransportError> => {
          if (reply !== undefined) return Effect.succeed(reply)
          const response = read.handedOver
          if (response === undefined) return resumed(read.cursor, read.broke, req, deliver, resumable)
          return Effect.flatMap(renewed(response, authorization, attempt), (again) => {
            if (again) return posted(req, body, deliver, hints, sid, inPlace, resumable, held, attempt + 1)
            if (!isOk(response.status)) return refused(response, req, sid)
            return Effect.flatMap(refusedBody(response), (text) => Effect.fail(statusError(response.status, text, undefined)))
          })
        })
      })

    /**
     * One request: its POST, the messages tied to it handed to `deliver` in order, and its
     * response. Ending early (interruption) aborts the POST, and cancels a legacy request on its
     * session; the connection's closing fails it with the reason.
     */
    const requestReply = (
      req: JsonRpc.Request,
      deliver: HttpReplies.Deliver,
      hints: RequestHints | undefined,
      inPlace?: WaitingCall
    ): Effect.Effect<JsonRpc.Parsed, TransportError> =>
      Effect.suspend(() => {
        if (closing !== undefined) return Effect.fail(closing)
        const sid = sessionFor(hints, req.method)
        const legacy = hints?.era === "legacy" || (hints?.era === undefined && sid !== undefined)
        // Clients must not cancel initialize; an abandoned one simply never becomes a session.
        const cancellable = legacy && req.method !== Method.Initialize
        const held: Held = { sent: undefined, read: undefined }
        const resumable = legacy ? { hints, sid } : undefined
        const reply = Effect.onExit(posted(req, JsonRpc.encodeFrame(req), deliver, hints, sid, inPlace, resumable, held, 0), () => {
          // Cancelled unless nothing can be running upstream any more: answered, refused, or never
          // sent (a POST a cut aborted may have reached the server: it is cancelled like any other).
          // Read before the release, whose abort of a POST not yet answered is no failure to send.
          const read = held.read
          const settled = read === undefined || read.answered || (read.unsent && inPlace?.isCut !== true)
          held.sent?.release()
          return !cancellable || settled || closing !== undefined ? Effect.void : Effect.asVoid(FiberSet.run(fibers, cancelUpstream(req.id, hints, sid)))
        })
        return Effect.catchTag(reply, "TransportClosed", closingFirst)
      })

    // A call running in place (internal/InPlace.ts) is cut short by the wire, which aborts the
    // exchange it waits on; however that failure reads, it is the cut. An answer that came first stands.
    const call: Connection["call"] = (req, onMessage, hints) =>
      Effect.withFiberRuntime((fiber) => {
        const inPlace = inPlaceIn(fiber)
        if (inPlace?.isCut === true) return Effect.die(new CutInPlace())
        const reply = Effect.map(requestReply(req, onMessage, hints, inPlace), (r) => (JsonRpc.isResponse(r.message) ? r.message : undefined))
        return inPlace === undefined
          ? reply
          : Effect.catchAllCause(reply, (cause) => (inPlace.isCut ? Effect.die(new CutInPlace()) : Effect.failCause(cause)))
      })

    // The stream form, for the few that want the messages as a Stream: the exchange runs beside
    // its reader, a bounded mailbox between them; what a slow reader has not taken yet waits in
    // the call's box, bounded as a stdio call's is (internal/CallBox.ts).
    const request = (req: JsonRpc.Request, hints?: RequestHints): Stream.Stream<JsonRpc.Parsed, TransportError> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        const mailbox = yield* Mailbox.make<JsonRpc.Parsed, TransportError>({ capacity: TiedCapacity })
        yield* Effect.forkScoped(
          requestReply(req, (parsed) => Effect.asVoid(mailbox.offer(parsed)), hints).pipe(
            Effect.matchCauseEffect({
              onSuccess: (reply) => Effect.zipRight(mailbox.offer(reply), mailbox.end),
              onFailure: (cause) => mailbox.failCause(cause)
            })
          )
        )
        return Mailbox.toStream(mailbox)
      }))

    const deleteSession = (sid: string) =>
      Effect.gen(function*() {
        const version = legacyVersion()
        const response = yield* wire.send({
          method: "DELETE",
          url: def.url,
          headers: baseHeaders(undefined, sid, yield* currentAuthorization, version === undefined ? {} : { [HttpExchange.VersionHeader]: version })
        })
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
        closing = new TransportClosed({ reason: `connection to ${def.url} closed` })
        yield* Deferred.succeed(closedWith, closing)
        // What is in flight fails now, with the reason above, rather than after the DELETE.
        yield* wire.abortInFlight
        yield* FiberSet.clear(fibers)
        const sid = session()
        if (sid !== undefined) yield* deleteSession(sid)
        yield* unsolicited.end
      })
    )

    const connection: Connection = {
      request,
      call,
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
      wire: "streamable-http",
      // Every wait of an exchange is on the wire, which a cut aborts, or goes out of place (an
      // authorization read or renewed, a stream resumed after a pause).
      cutsInPlace: true,
      sessionId: Effect.sync(session)
    }
    return connection
  })
