/**
 * `/mcp`'s legacy POSTs (2024-11-05 … 2025-11-25): `initialize` minting a session, requests run
 * under their session (in place or in a fiber of their own) or tied to their POST, batches,
 * notifications and the host's answers to questions (HttpHost.ts has the whole endpoint).
 */
import * as Capabilities from "@mcpx-fx/protocol/Capabilities"
import * as Classify from "@mcpx-fx/protocol/Classify"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as HeaderCodec from "@mcpx-fx/protocol/HeaderCodec"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Meta from "@mcpx-fx/protocol/Meta"
import * as Method from "@mcpx-fx/protocol/Method"
import * as Revision from "@mcpx-fx/protocol/Revision"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type Backend, type QuestionChannel, QuestionRefused } from "../Backend.js"
import * as ClientDetach from "../ClientDetach.js"
import { BatchConcurrency } from "../Limits.js"
import { type Connection, makeConnection, negotiatedRevision, type RequestContext } from "../Server.js"
import * as Subscriptions from "../Subscriptions.js"
import { Backlog } from "./Backlog.js"
import { firstOf, Spoken } from "./FirstOf.js"
import type { Deps } from "./HttpParts.js"
import type { makeQuestions } from "./HttpQuestions.js"
import { mintId, type Session, type Sessions } from "./HttpSessions.js"
import * as Wire from "./HttpWire.js"

/** The legacy POST over the endpoint's shared parts. */
export const makeLegacy = (
  deps: Deps & {
    readonly backend: Backend["Type"]
    readonly sessions: Sessions
    readonly questions: ReturnType<typeof makeQuestions>
    /** A legacy POST without `Mcp-Session-Id` (other than `initialize`): served, or refused with 400. */
    readonly sessionless: "serve" | "refuse"
  }
) => {
  const { backend, questions, server, sessions, settled, withKeepAlive } = deps
  const sessionHeader = (request: HttpServerRequest.HttpServerRequest) => Wire.header(request, HeaderCodec.SessionIdHeader)

  interface Legacy {
    readonly session: Session | undefined
    readonly connection: Connection
    readonly revision: Revision.LegacyRevision | undefined
    /** The POST's, when its adapter can keep a dropped connection from interrupting it. */
    readonly detachable: ClientDetach.Detachable | undefined
  }

  const duplicate = (id: JsonRpc.RequestId) => JsonRpc.failure(id, ErrorCode.InvalidRequest, `Invalid Request: id ${JSON.stringify(id)} is already in flight`)

  /**
   * Runs a legacy POST's requests and answers it. In a session each runs in a fiber of its own
   * under the session (a dropped POST does not stop them; `notifications/cancelled` does);
   * without one they run in a scope tied to this POST, closed when the reply is written or the
   * client goes away. (A session's lone request that can say nothing first runs `inPlace`.)
   *
   * The reply is JSON unless a question had to be asked first: then the POST becomes an SSE
   * stream carrying the server→client request(s), then each reply as it comes.
   */
  const runRequests = (
    target: Legacy,
    requests: ReadonlyArray<JsonRpc.Request>,
    answered: ReadonlyArray<JsonRpc.Response>,
    batch: boolean,
    accept: Wire.Accepts
  ): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
    Effect.suspend(() => {
      // Made when something is first said: most requests say nothing before their reply.
      let outbound: Mailbox.Mailbox<JsonRpc.Message> | undefined
      const asked = new Spoken()
      // Whether anyone can still see this POST's stream: not once the reply is written, the
      // stream closed, or the handler was interrupted before it had a stream.
      let open = true
      const backlog = new Backlog("a legacy POST stream")
      const said = (box: Mailbox.Mailbox<JsonRpc.Message>, m: JsonRpc.Message) => {
        box.unsafeOffer(m)
        asked.raise()
        return true
      }
      const send = (m: JsonRpc.Message): Effect.Effect<boolean> =>
        Effect.suspend(() => {
          if (!open) return Effect.succeed(false)
          if (outbound !== undefined) {
            return backlog.admits(Option.getOrElse(outbound.unsafeSize(), () => 0), m)
              ? Effect.succeed(said(outbound, m))
              : Effect.as(backlog.refused, false)
          }
          return Effect.map(Mailbox.make<JsonRpc.Message>(), (made) => said(outbound ??= made, m))
        })
      const context: RequestContext = {
        connection: target.connection,
        ...(target.revision !== undefined ? { legacyRevision: target.revision } : {}),
        // A client that takes no event stream cannot be asked; the Backend answers for it.
        ...(accept.eventStream
          ? { questions: questions.channel(target.session?.id, send), notify: (n) => Effect.asVoid(send(n)) }
          : {}),
        ...(target.session !== undefined ? { subscriptions: { watches: target.session.watches } } : {})
      }
      const session = target.session
      // A batch's requests take turns; they never wait on anyone else's, nor anyone on them.
      const slots = batch ? Effect.unsafeMakeSemaphore(BatchConcurrency) : undefined
      const run = (r: JsonRpc.Request) => settled(r, slots === undefined ? server.handle(r, context) : slots.withPermits(1)(server.handle(r, context)))
      const replies = (exits: ReadonlyArray<Exit.Exit<JsonRpc.Response | undefined>>) =>
        exits.flatMap((e) => (Exit.isSuccess(e) && e.value !== undefined ? [e.value] : []))

      /** The reply once every request has ended, or the stream once one of them spoke first. */
      const answer = (
        fibers: ReadonlyArray<Fiber.RuntimeFiber<JsonRpc.Response | undefined>>,
        errors: ReadonlyArray<JsonRpc.Response>,
        exchange: Scope.CloseableScope | undefined,
        handOver: () => void
      ) =>
        Effect.map(firstOf(fibers, asked), (exits) => {
          if (exits !== undefined) {
            const all = [...errors, ...replies(exits)]
            const [first] = all
            if (first === undefined) return Wire.withheld()
            return Wire.reply(200, batch ? all : first, accept)
          }
          // Something must be streamed: the questions so far, later ones, and each reply when ready.
          const answers = Stream.fromIterable(fibers).pipe(
            Stream.mapEffect(Fiber.await, { concurrency: "unbounded", unordered: true }),
            Stream.filterMap((e) => (Exit.isSuccess(e) ? Option.fromNullable(e.value) : Option.none()))
          )
          // Raised only once something was offered, so the mailbox exists.
          const events = Stream.merge(Mailbox.toStream(outbound!), Stream.concat(Stream.fromIterable(errors), answers), {
            haltStrategy: "right"
          })
          handOver()
          // Without a session the stream owns the requests: closing it (the client went away)
          // closes their scope, which interrupts them.
          const ended = Effect.sync(() => {
            open = false
          })
          return Wire.eventStream(
            withKeepAlive(Stream.map(events, Wire.sseEvent)).pipe(
              Stream.ensuring(exchange === undefined ? ended : Effect.zipRight(ended, Scope.close(exchange, Exit.void)))
            )
          )
        })

      if (session !== undefined) {
        // In a session the requests belong to it; leaving this POST only stops what it may still say.
        let handedOver = false
        const errors: Array<JsonRpc.Response> = [...answered]
        const fibers: Array<Fiber.RuntimeFiber<JsonRpc.Response | undefined>> = []
        const startOne = (r: JsonRpc.Request) => {
          if (session.requests.has(r.id)) return Effect.sync(() => void errors.push(duplicate(r.id)))
          return Effect.map(session.requests.fork(r.id, run(r)), (fiber) => void fibers.push(fiber))
        }
        const start = requests.length === 1 ? startOne(requests[0]!) : Effect.forEach(requests, startOne, { discard: true })
        return Effect.zipRight(start, Effect.suspend(() => answer(fibers, errors, undefined, () => void (handedOver = true)))).pipe(
          Effect.onExit(() =>
            Effect.sync(() => {
              if (!handedOver) open = false
            })
          )
        )
      }
      return Effect.flatMap(Scope.make(), (exchange) => {
        let handedOver = false
        const release = Effect.suspend(() =>
          handedOver ? Effect.void : Effect.zipRight(Effect.sync(() => void (open = false)), Scope.close(exchange, Exit.void))
        )
        return Effect.flatMap(
          Effect.forEach(requests, (r) => Effect.forkIn(run(r), exchange)),
          (fibers) => answer(fibers, answered, exchange, () => void (handedOver = true))
        ).pipe(Effect.ensuring(release))
      })
    })

  /** Why the host of a request run in place is never asked (it declared nothing it could be asked). */
  const askedNothing: QuestionChannel = (q) =>
    Effect.fail(new QuestionRefused({ code: ErrorCode.MethodNotFound, message: `the host declared nothing it can be asked (${q.method})` }))
  // A cancelled request's reply, carried in its fiber's cause to the adapter (ClientDetach).
  const cancelled = Effect.suspend(() => Effect.die(Wire.withheld()))

  /**
   * A session's lone request, from a host that can be asked nothing and that asked to hear
   * nothing first (no progress token), over an adapter that can detach it from its client: it
   * runs in the POST's own fiber, which a dropped connection then no longer interrupts, while
   * `notifications/cancelled` and the session's end still do (SessionRequests). Nothing needs
   * to reach such a host before the reply, so whatever the call says all the same (a log
   * message) is not lost: it precedes the reply on an event stream once the call is done. Any
   * other request runs in a fiber of its own (`runRequests`), which costs a fork per request.
   */
  const inPlace = (session: Session, detachable: ClientDetach.Detachable, r: JsonRpc.Request, accept: Wire.Accepts) =>
    Effect.suspend((): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
      if (session.requests.has(r.id)) return Effect.succeed(Wire.reply(200, duplicate(r.id), accept))
      let said: Array<JsonRpc.Message> | undefined
      const send = (m: JsonRpc.Message) => Effect.sync(() => void (said ??= []).push(m))
      const context: RequestContext = {
        connection: session.connection,
        ...(accept.eventStream ? { questions: askedNothing, notify: send } : {}),
        subscriptions: { watches: session.watches }
      }
      detachable[ClientDetach.Detach]()
      return Effect.map(session.requests.inPlace(r.id, settled(r, server.handle(r, context)), cancelled), (response) => {
        if (said === undefined) return response === undefined ? Wire.withheld() : Wire.reply(200, response, accept)
        const events = response === undefined ? said : [...said, response]
        return Wire.eventStream(Stream.fromIterable(events.map(Wire.sseEvent)))
      })
    })

  /** Whether a session's request can run in place (see `inPlace`). */
  const fitsInPlace = (session: Session, r: JsonRpc.Request) =>
    Effect.map(Ref.get(session.connection.negotiated), (n) =>
      Option.isSome(n) && Capabilities.asksNothing(n.value.clientCapabilities) &&
      Meta.metaOf(r.params)?.[Meta.ProgressTokenKey] === undefined)

  const cancelledId = (n: JsonRpc.Notification): JsonRpc.RequestId | undefined => {
    const id = n.params?.requestId
    return typeof id === "string" || typeof id === "number" ? id : undefined
  }

  const legacyNotification = (target: Legacy, n: JsonRpc.Notification) => {
    if (n.method === Method.NotificationsCancelled) {
      const id = cancelledId(n)
      // Without a session there is nothing a cancellation could name.
      return target.session === undefined || id === undefined ? Effect.void : target.session.requests.cancel(id)
    }
    return Effect.asVoid(server.handle(n, { connection: target.connection }))
  }

  /**
   * A session is told of list changes it was declared, updates of resources it subscribed to and
   * (2025-11-25) its own tasks' changes, on its GET stream, once it is initialized; with no stream
   * open they are dropped. Task changes are followed beside: a store still opening must not hold
   * up the `initialize` that minted the session.
   */
  const forwardChanges = (session: Session) => {
    const send = (n: JsonRpc.Notification) => Effect.asVoid(sessions.notify(session.id, n))
    return Scope.extend(
      Effect.zipRight(
        Subscriptions.forwardToLegacy(
          backend,
          server.options.capabilities,
          session.watches,
          Effect.map(Ref.get(session.connection.negotiated), (n) => Option.isSome(n) && n.value.initialized),
          send
        ),
        Effect.forkScoped(server.followTasks(session.connection, send))
      ),
      session.scope
    )
  }

  /** `initialize` without a session: mints one, kept only if the initialize succeeds. */
  const initialize = (message: JsonRpc.Request, accept: Wire.Accepts) =>
    Effect.acquireUseRelease(
      sessions.create,
      (session) =>
        Effect.flatMap(server.handle(message, { connection: session.connection }), (response) => {
          if (response === undefined) {
            return Effect.succeed(Wire.reply(200, JsonRpc.failure(message.id, ErrorCode.InternalError, "Internal error"), accept))
          }
          if (!JsonRpc.isSuccess(response)) return Effect.succeed(Wire.reply(200, response, accept))
          return Effect.as(
            Effect.zipRight(sessions.register(session), forwardChanges(session)),
            Wire.reply(200, response, accept, { [HeaderCodec.SessionIdHeader]: session.id })
          )
        }),
      // Registered sessions are no longer pending, so this discards only a failed one.
      (session) => sessions.discard(session)
    ).pipe(
      Effect.catchTag("SessionsFull", (e) =>
        Effect.succeed(
          Wire.refuse(
            503,
            ErrorCode.InternalError,
            `Service Unavailable: all ${e.max} legacy sessions have requests in flight (transport.maxSessions); retry later`,
            { id: message.id, headers: { "retry-after": "1" } }
          )
        ))
    )

  const legacySingle = (target: Legacy, message: JsonRpc.Message, accept: Wire.Accepts) => {
    if (JsonRpc.isResponse(message)) {
      return Effect.map(
        questions.answer(target.session?.id, message),
        (routed) => routed ? Wire.accepted() : Wire.refuse(400, ErrorCode.InvalidRequest, "Invalid Request: no request is waiting for this response")
      )
    }
    if (JsonRpc.isNotification(message)) return Effect.as(legacyNotification(target, message), Wire.accepted())
    const { detachable, session } = target
    const forked = () => runRequests(target, [message], [], false, accept)
    if (session === undefined || detachable === undefined) return forked()
    return Effect.flatMap(fitsInPlace(session, message), (fits) => (fits ? inPlace(session, detachable, message, accept) : forked()))
  }

  const legacyBatch = (
    target: Legacy,
    elements: ReadonlyArray<Either.Either<JsonRpc.Parsed, JsonRpc.FrameError>>,
    accept: Wire.Accepts
  ) =>
    Effect.gen(function*() {
      const revision = target.session === undefined ? target.revision : yield* negotiatedRevision(target.connection)
      const effective = revision ?? Classify.DefaultLegacyRevision
      if (!Revision.allowsBatches(effective)) {
        return Wire.refuse(400, ErrorCode.InvalidRequest, `Invalid Request: ${effective} has no batches`)
      }
      const errors: Array<JsonRpc.Response> = []
      const requests: Array<JsonRpc.Request> = []
      // Notifications and answers land first, in order, before the batch's requests start.
      for (const element of elements) {
        if (Either.isLeft(element)) {
          errors.push(JsonRpc.frameErrorResponse(element.left))
          continue
        }
        const m = element.right.message
        if (JsonRpc.isNotification(m)) yield* legacyNotification(target, m)
        else if (JsonRpc.isResponse(m)) yield* questions.answer(target.session?.id, m)
        else if (m.method === Method.Initialize) {
          // 2025-03-26 lifecycle: initialize MUST NOT be batched; it mints nothing.
          errors.push(JsonRpc.failure(m.id, ErrorCode.InvalidRequest, "Invalid Request: initialize must not be part of a batch"))
        } else requests.push(m)
      }
      if (requests.length === 0 && errors.length === 0) return Wire.accepted()
      return yield* runRequests(target, requests, errors, true, accept)
    })

  // A session's POST, the legacy request that comes most often: without Effect.gen.
  const inSession = (request: HttpServerRequest.HttpServerRequest, id: string, frame: JsonRpc.Frame, accept: Wire.Accepts) =>
    Effect.flatMap(sessions.get(id), (session): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
      if (session === undefined) {
        return Effect.succeed(Wire.refuse(404, ErrorCode.InvalidRequest, "Invalid Request: unknown or ended session; initialize again"))
      }
      const detachable = ClientDetach.isDetachable(request) ? request : undefined
      const target: Legacy = { session, connection: session.connection, revision: undefined, detachable }
      return frame._tag === "Single" ? legacySingle(target, frame.parsed.message, accept) : legacyBatch(target, frame.elements, accept)
    })

  const legacy = (
    request: HttpServerRequest.HttpServerRequest,
    frame: JsonRpc.Frame,
    revision: Revision.LegacyRevision | undefined,
    accept: Wire.Accepts
  ): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
    const id = sessionHeader(request)
    if (id !== undefined) return inSession(request, id, frame, accept)
    return Effect.gen(function*() {
      if (frame._tag === "Single" && JsonRpc.isRequest(frame.parsed.message) && frame.parsed.message.method === Method.Initialize) {
        return yield* initialize(frame.parsed.message, accept)
      }
      if (deps.sessionless === "refuse") {
        return Wire.refuse(400, ErrorCode.InvalidRequest, `Invalid Request: ${HeaderCodec.SessionIdHeader} header is required`)
      }
      // Served statelessly: a connection of its own, so nothing leaks between such requests.
      const connection = yield* makeConnection(`http-${mintId()}`)
      const target: Legacy = { session: undefined, connection, revision: revision ?? Classify.DefaultLegacyRevision, detachable: undefined }
      return yield* frame._tag === "Single" ? legacySingle(target, frame.parsed.message, accept) : legacyBatch(target, frame.elements, accept)
    })
  }

  return { legacy }
}
