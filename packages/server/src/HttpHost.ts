/**
 * The Streamable HTTP host transport: the single `/mcp` endpoint, in every revision at once
 * (seed 002, "Which era a POST belongs to", "Streamable HTTP, 2026-07-28", "Streamable HTTP,
 * 2025-03-26 … 2025-11-25", "Origin"; where the seed and the specification disagree, the spec).
 *
 * - Origin first, on every method: a present Origin that is not allowed is 403.
 * - A POST is classified by `Classify` (body first, headers second). A modern request is checked
 *   against its mirrored headers and runs statelessly; it never sees a session. Its reply is one
 *   JSON response with `modernStatus` of it, or — when progress, log messages or a listen's
 *   notifications come first — an SSE stream ending with the response; closing either interrupts
 *   the call. A legacy request runs in the session `initialize` minted (`Mcp-Session-Id`) or,
 *   without one, statelessly under the revision of its headers.
 * - A legacy session has one GET notification stream, ends with DELETE, and its requests stop only
 *   on `notifications/cancelled` or the session's end. A request outside any session runs tied to
 *   its POST, so a client that goes away cancels it.
 * - A legacy request whose Backend asks the host a question (or sends progress) answers with an
 *   SSE stream carrying it; the host's answer is a later POST, routed back by id. A session's GET
 *   stream carries the list changes and resource updates it was told of.
 * - `X-Mcpx-Caller-Protocol` marks a body relayed from a stdio host (`serve --relay`): it is served
 *   by stdio's rules.
 *
 * The daemon mounts `app` (an `HttpApp`) on its router at `/mcp`; nothing here binds a socket.
 */
import * as Classify from "@mcpx-fx/protocol/Classify"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as HeaderCodec from "@mcpx-fx/protocol/HeaderCodec"
import * as HttpStatus from "@mcpx-fx/protocol/HttpStatus"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Meta from "@mcpx-fx/protocol/Meta"
import * as Method from "@mcpx-fx/protocol/Method"
import * as Revision from "@mcpx-fx/protocol/Revision"
import * as ProtocolSubscriptions from "@mcpx-fx/protocol/Subscriptions"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberMap from "effect/FiberMap"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Wire from "./internal/HttpWire.js"
import { firstOf, Spoken } from "./internal/FirstOf.js"
import * as StopCut from "./internal/StopCut.js"
import { makeOriginPolicy } from "./internal/HttpOrigin.js"
import { makeQuestions } from "./internal/HttpQuestions.js"
import { makeSessions, mintId, type Session, type Target } from "./internal/HttpSessions.js"
import { Backend } from "./Backend.js"
import { BatchConcurrency, DefaultMaxBatch, DefaultMaxSessions } from "./Limits.js"
import { type Connection, makeConnection, negotiatedRevision, type RequestContext, Server } from "./Server.js"
import * as Shutdown from "./Shutdown.js"
import * as Subscriptions from "./Subscriptions.js"

/**
 * Sent by `mcpx-fx serve --relay` with every POST: the revision of the stdio host whose frames it
 * carries. Such a body is served by stdio's rules: no mirrored headers are required of a client
 * that never saw HTTP, and a modern message's `_meta` alone decides its era and version.
 */
export const CallerProtocolHeader = "X-Mcpx-Caller-Protocol"

/** How the `/mcp` endpoint behaves. */
export interface HttpHostOptions {
  /** `transport.allowedOrigins`: exact origins a browser page may call from, beyond loopback. */
  readonly allowedOrigins?: ReadonlyArray<string>
  /** The daemon's own origins (e.g. `http://127.0.0.1:7717`), named rather than read from Host. */
  readonly ownOrigins?: ReadonlyArray<string>
  /** The largest request body taken, in bytes (default 4 MiB); larger is 413. */
  readonly maxBodyBytes?: number
  /** `transport.sseKeepAlive`: how often an open SSE stream carries a `: keep-alive` comment. */
  readonly sseKeepAlive?: Duration.DurationInput
  /**
   * `transport.sessionIdleTimeout`: ends a legacy session after this long with no request and
   * nothing in flight (an open GET stream does not keep it; it is closed). Without it, none expire.
   */
  readonly sessionIdleTimeout?: Duration.DurationInput
  /**
   * `transport.maxSessions`: the most legacy sessions held (default `DefaultMaxSessions`). A new
   * `initialize` past it ends the least recently used session with nothing in flight, or, when
   * every one is busy, is refused with 503.
   */
  readonly maxSessions?: number
  /** `transport.maxBatch`: the most messages one batch may hold (default `DefaultMaxBatch`). */
  readonly maxBatch?: number
  /**
   * A legacy POST without `Mcp-Session-Id` (other than `initialize`): served statelessly
   * (`"serve"`, the default, as seed 002 has it) or refused with 400 (`"refuse"`, the spec's
   * answer for a server that requires sessions).
   */
  readonly sessionless?: "serve" | "refuse"
  /**
   * The `inputSchema` of a tool by name, for checking a modern `tools/call`'s `Mcp-Param-*` headers
   * against its `x-mcp-header` annotations. Without it only the standard headers are checked.
   */
  readonly inputSchemaOf?: (tool: string) => Effect.Effect<unknown>
  /**
   * When the process stops: at `draining` GET streams and listens end (calls carry on) and no
   * legacy GET stream opens. Calls still running at `stopping` are cut short where their upstream
   * call is made (the daemon's Pool), and answer the shutdown error themselves.
   */
  readonly shutdown?: Shutdown.ShutdownSignals
}

/** The defaults: 4 MiB bodies, a keep-alive every 15 seconds, sessions without idle expiry. */
export const DefaultMaxBodyBytes = 4 * 1024 * 1024
export const DefaultSseKeepAlive: Duration.DurationInput = Duration.seconds(15)

/** Serves `/mcp`. */
export class HttpHost extends Context.Tag("@mcpx-fx/server/HttpHost")<HttpHost, {
  /** The endpoint: mount it for GET, POST and DELETE at `/mcp` (other methods get 405 here). */
  readonly app: HttpApp.Default
  /**
   * Pushes a notification (list_changed, resources/updated) to one legacy session's GET stream,
   * or to every session's with `"all"`. Returns how many streams took it; with no stream open it
   * is dropped, since the legacy transport lets a client choose not to listen.
   */
  readonly notify: (target: Target, notification: JsonRpc.Notification) => Effect.Effect<number>
  /** Ends every legacy session (daemon shutdown): requests interrupted, GET streams closed. */
  readonly endSessions: Effect.Effect<void>
  /** The ids of the live legacy sessions. */
  readonly sessionIds: Effect.Effect<ReadonlyArray<string>>
}>() {
  /** The endpoint over the Server; its sessions end when the layer's scope closes. */
  static readonly layer = (options: HttpHostOptions = {}): Layer.Layer<HttpHost, never, Server | Backend> =>
    Layer.scoped(HttpHost, make(options))
}

export type { Target } from "./internal/HttpSessions.js"

const AllowAll = "GET, POST, DELETE"

const make = (options: HttpHostOptions) =>
  Effect.gen(function*() {
    const server = yield* Server
    const backend = yield* Backend
    const scope = yield* Effect.scope
    const sessions = yield* makeSessions(scope, {
      idleTimeout: options.sessionIdleTimeout,
      maxSessions: options.maxSessions ?? DefaultMaxSessions
    })
    yield* Effect.addFinalizer(() => sessions.endAll)
    const questions = makeQuestions()
    const origins = makeOriginPolicy({ ownOrigins: options.ownOrigins ?? [], allowedOrigins: options.allowedOrigins ?? [] })
    const maxBody = options.maxBodyBytes ?? DefaultMaxBodyBytes
    const limits: JsonRpc.FrameLimits = { maxBatch: options.maxBatch ?? DefaultMaxBatch }
    const keepAliveEvery = Duration.decode(options.sseKeepAlive ?? DefaultSseKeepAlive)
    // Modern requests never read a connection; one shared placeholder satisfies RequestContext.
    const modernConnection = yield* makeConnection("modern")
    const signals = options.shutdown ?? Shutdown.never
    // Once the process is stopping, streams that never end on their own are closed and none opens.
    let draining = false
    yield* Effect.forkScoped(Effect.zipRight(
      signals.draining,
      Effect.suspend(() => {
        draining = true
        return sessions.endStreams
      })
    ))

    /**
     * A listen never ends by itself: when the process starts to stop it is closed, as the
     * specification lets a server close one. Other requests are not watched here: what keeps one
     * running past the grace is its upstream call, which the process cuts short where it is made
     * (the daemon tells its Pool), so the request answers the shutdown error itself at no cost
     * per call.
     */
    const atDraining = options.shutdown === undefined ? StopCut.never : yield* StopCut.make(signals.draining)
    const settled = (message: JsonRpc.Request, handled: Effect.Effect<JsonRpc.Response | undefined>) =>
      message.method === Method.SubscriptionsListen ? atDraining(handled, () => ProtocolSubscriptions.closed(message.id)) : handled

    const keepAlive = Stream.fromSchedule(Schedule.spaced(keepAliveEvery)).pipe(Stream.as(Wire.sseKeepAlive))

    /** Events, with keep-alive comments between them, ending when the events end. */
    const withKeepAlive = (events: Stream.Stream<Uint8Array>): Stream.Stream<Uint8Array> =>
      Stream.merge(events, keepAlive, { haltStrategy: "left" })

    /** One finished reply: JSON when the client takes it, else a one-event stream, same status. */
    const reply = (
      status: number,
      body: JsonRpc.Response | ReadonlyArray<JsonRpc.Response>,
      accept: Wire.Accepts,
      headers: Record<string, string> = {}
    ) => accept.json ? Wire.json(status, body, headers) : Wire.eventStream(Stream.make(Wire.sseEvent(body)), headers, status)

    /** A reply withheld (every request in it was cancelled): an event stream with nothing on it. */
    const withheld = (headers: Record<string, string> = {}) => Wire.eventStream(Stream.empty, headers)

    const sessionHeader = (request: HttpServerRequest.HttpServerRequest) => Wire.header(request, HeaderCodec.SessionIdHeader)

    const namesModern = (request: HttpServerRequest.HttpServerRequest): boolean => {
      const v = Wire.header(request, HeaderCodec.ProtocolVersionHeader)
      return v !== undefined && Classify.namesModernRevision(v.trim())
    }

    // ---- modern

    /** Whether a modern request asked to hear something before its response: progress, or log messages. */
    const asksToHear = (params: JsonRpc.Request["params"]): boolean => {
      const meta = Meta.metaOf(params)
      return meta !== undefined && (meta[Meta.ProgressTokenKey] !== undefined || meta[Meta.LogLevelKey] !== undefined)
    }

    /** `Mcp-Param-*` need the called tool's schema, which only the integrator's lookup has. */
    const checkParams = (request: HttpServerRequest.HttpServerRequest, message: JsonRpc.Request) => {
      const lookup = options.inputSchemaOf
      const name = message.params?.name
      if (lookup === undefined || message.method !== Method.ToolsCall || typeof name !== "string") {
        return Effect.succeed(Either.right<void>(undefined))
      }
      return Effect.map(lookup(name), (inputSchema) =>
        inputSchema === undefined ? Either.right<void>(undefined) : HeaderCodec.checkIncoming(request.headers, message, { inputSchema }))
    }

    /** A modern POST: notifications are accepted, responses refused, requests checked against their headers and run. */
    const modern = (
      request: HttpServerRequest.HttpServerRequest,
      message: JsonRpc.Message,
      accept: Wire.Accepts,
      relayed: boolean
    ): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
      if (JsonRpc.isNotification(message)) return Effect.as(server.handle(message, { connection: modernConnection }), Wire.accepted())
      if (!JsonRpc.isRequest(message)) {
        return Effect.succeed(Wire.refuse(400, ErrorCode.InvalidRequest, "Invalid Request: a 2026-07-28 client must not POST responses"))
      }
      // A relayed stdio body has no mirrored headers to compare: stdio has none.
      if (relayed) return modernRequest(message, accept)
      return Effect.flatMap(checkParams(request, message), (params) => {
        if (Either.isRight(params)) return modernRequest(message, accept)
        const response = HeaderCodec.mismatchResponse(message.id, params.left)
        return Effect.succeed(reply(HttpStatus.modernStatus(response), response, accept))
      })
    }

    /**
     * Runs a modern request. Its reply is one JSON response (status `modernStatus` of it) unless
     * something must be said before it — progress, a log message, a listen's acknowledgement and
     * notifications — and the client takes an event stream: then the POST becomes that stream, the
     * response last. A client that goes away, before or during the stream, interrupts the request
     * and with it the upstream call.
     *
     * A client that takes no event stream cannot be told anything first, and one that asked for
     * nothing to come first (no progress token, no log level, not a listen) expects nothing live:
     * those requests run in the request's own fiber. Whatever such a call says all the same (an
     * upstream's stray notification) is not lost: it precedes the response on a stream once the
     * call is done. Otherwise the request runs in a fiber of its own, which the POST waits on until
     * it ends or speaks (a listen's watches end with the exchange, so it keeps a scope).
     */
    const modernRequest = (message: JsonRpc.Request, accept: Wire.Accepts) => {
      const answer = (response: JsonRpc.Response | undefined) =>
        response === undefined ? Wire.accepted() : reply(HttpStatus.modernStatus(response), response, accept)
      if (!accept.eventStream) return Effect.map(settled(message, server.handle(message, { connection: modernConnection })), answer)
      if (message.method !== Method.SubscriptionsListen && !asksToHear(message.params)) {
        return Effect.suspend(() => {
          let said: Array<JsonRpc.Message> | undefined
          const send = (m: JsonRpc.Message) => Effect.sync(() => void (said ??= []).push(m))
          const context: RequestContext = { connection: modernConnection, notify: send, subscriptions: { notify: send } }
          return Effect.map(settled(message, server.handle(message, context)), (response) => {
            if (said === undefined) return answer(response)
            const events = response === undefined ? said : [...said, response]
            return Wire.eventStream(Stream.fromIterable(events.map(Wire.sseEvent)))
          })
        })
      }
      return Effect.gen(function*() {
        const outbound = yield* Mailbox.make<JsonRpc.Message>()
        const spoken = new Spoken()
        // Whether the POST can still become a stream: not once a JSON reply has been chosen.
        let open = true
        const send = (m: JsonRpc.Message) =>
          Effect.sync(() => {
            if (!open) return
            outbound.unsafeOffer(m)
            spoken.raise()
          })
        const exchange = message.method === Method.SubscriptionsListen ? yield* Scope.make() : undefined
        const watches = exchange === undefined ? undefined : yield* Scope.extend(Subscriptions.makeWatches, exchange)
        const context: RequestContext = {
          connection: modernConnection,
          notify: send,
          subscriptions: watches === undefined ? { notify: send } : { notify: send, watches }
        }
        const handled = settled(message, server.handle(message, context)).pipe(
          // The response itself goes on the stream only once one is open; it is not a reason to open one.
          Effect.tap((response) => (response === undefined || !spoken.raised ? Effect.void : outbound.offer(response))),
          Effect.ensuring(outbound.end)
        )
        const fiber = yield* (exchange === undefined ? Effect.forkDaemon(handled) : Effect.forkIn(handled, exchange))
        let handedOver = false
        let finished = false
        // Until the stream owns it, leaving this request (done, or interrupted) ends the call.
        const release = Effect.suspend(() =>
          handedOver
            ? Effect.void
            : exchange !== undefined
            ? Scope.close(exchange, Exit.void)
            : finished
            ? Effect.void
            : Fiber.interrupt(fiber)
        )
        return yield* Effect.gen(function*() {
          const exits = yield* firstOf([fiber], spoken)
          if (exits !== undefined) {
            open = false
            finished = true
            const [exit] = exits
            return answer(exit !== undefined && Exit.isSuccess(exit) ? exit.value : undefined)
          }
          handedOver = true
          const end = Effect.suspend(() => {
            open = false
            return exchange === undefined ? Fiber.interrupt(fiber) : Scope.close(exchange, Exit.void)
          })
          return Wire.eventStream(withKeepAlive(Stream.map(Mailbox.toStream(outbound), Wire.sseEvent)).pipe(Stream.ensuring(end)))
        }).pipe(Effect.ensuring(release))
      })
    }

    // ---- legacy

    interface Legacy {
      readonly session: Session | undefined
      readonly connection: Connection
      readonly revision: Revision.LegacyRevision | undefined
    }

    const duplicate = (id: JsonRpc.RequestId) =>
      JsonRpc.failure(id, ErrorCode.InvalidRequest, `Invalid Request: id ${JSON.stringify(id)} is already in flight`)

    /**
     * Runs a legacy POST's requests and answers it. In a session they run in the session's fiber
     * map (a dropped POST does not stop them; `notifications/cancelled` does); without one they run
     * in a scope tied to this POST, closed when the reply is written or the client goes away.
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
        const said = (box: Mailbox.Mailbox<JsonRpc.Message>, m: JsonRpc.Message) => {
          box.unsafeOffer(m)
          asked.raise()
          return true
        }
        const send = (m: JsonRpc.Message): Effect.Effect<boolean> =>
          Effect.suspend(() => {
            if (!open) return Effect.succeed(false)
            if (outbound !== undefined) return Effect.succeed(said(outbound, m))
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
        const run = (r: JsonRpc.Request) =>
          settled(r, slots === undefined ? server.handle(r, context) : slots.withPermits(1)(server.handle(r, context)))
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
              if (first === undefined) return withheld()
              return reply(200, batch ? all : first, accept)
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
          // In a session the requests belong to its fiber map; leaving this POST only stops what it may still say.
          let handedOver = false
          const errors: Array<JsonRpc.Response> = [...answered]
          const fibers: Array<Fiber.RuntimeFiber<JsonRpc.Response | undefined>> = []
          const startOne = (r: JsonRpc.Request) => {
            if (FiberMap.unsafeHas(session.requests, r.id)) return Effect.sync(() => void errors.push(duplicate(r.id)))
            return Effect.map(FiberMap.run(session.requests, r.id, run(r)), (fiber) => void fibers.push(fiber))
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
            handedOver ? Effect.void : Effect.zipRight(Effect.sync(() => void (open = false)), Scope.close(exchange, Exit.void)))
          return Effect.flatMap(Effect.forEach(requests, (r) => Effect.forkIn(run(r), exchange)), (fibers) =>
            answer(fibers, answered, exchange, () => void (handedOver = true))).pipe(Effect.ensuring(release))
        })
      })

    const cancelledId = (n: JsonRpc.Notification): JsonRpc.RequestId | undefined => {
      const id = n.params?.requestId
      return typeof id === "string" || typeof id === "number" ? id : undefined
    }

    const legacyNotification = (target: Legacy, n: JsonRpc.Notification) => {
      if (n.method === Method.NotificationsCancelled) {
        const id = cancelledId(n)
        // Without a session there is nothing a cancellation could name.
        return target.session === undefined || id === undefined ? Effect.void : FiberMap.remove(target.session.requests, id)
      }
      return Effect.asVoid(server.handle(n, { connection: target.connection }))
    }

    /**
     * A session is told of list changes it was declared and updates of resources it subscribed to,
     * on its GET stream, once it is initialized; with no stream open they are dropped.
     */
    const forwardChanges = (session: Session) =>
      Scope.extend(
        Subscriptions.forwardToLegacy(
          backend,
          server.options.capabilities,
          session.watches,
          Effect.map(Ref.get(session.connection.negotiated), (n) => Option.isSome(n) && n.value.initialized),
          (n) => Effect.asVoid(sessions.notify(session.id, n))
        ),
        session.scope
      )

    /** `initialize` without a session: mints one, kept only if the initialize succeeds. */
    const initialize = (message: JsonRpc.Request, accept: Wire.Accepts) =>
      Effect.acquireUseRelease(
        sessions.create,
        (session) =>
          Effect.flatMap(server.handle(message, { connection: session.connection }), (response) => {
            if (response === undefined) {
              return Effect.succeed(reply(200, JsonRpc.failure(message.id, ErrorCode.InternalError, "Internal error"), accept))
            }
            if (!JsonRpc.isSuccess(response)) return Effect.succeed(reply(200, response, accept))
            return Effect.as(
              Effect.zipRight(sessions.register(session), forwardChanges(session)),
              reply(200, response, accept, { [HeaderCodec.SessionIdHeader]: session.id })
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
        return Effect.map(questions.answer(target.session?.id, message), (routed) =>
          routed ? Wire.accepted() : Wire.refuse(400, ErrorCode.InvalidRequest, "Invalid Request: no request is waiting for this response"))
      }
      if (JsonRpc.isNotification(message)) return Effect.as(legacyNotification(target, message), Wire.accepted())
      return runRequests(target, [message], [], false, accept)
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
    const inSession = (id: string, frame: JsonRpc.Frame, accept: Wire.Accepts) =>
      Effect.flatMap(sessions.get(id), (session): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
        if (session === undefined) {
          return Effect.succeed(Wire.refuse(404, ErrorCode.InvalidRequest, "Invalid Request: unknown or ended session; initialize again"))
        }
        const target: Legacy = { session, connection: session.connection, revision: undefined }
        return frame._tag === "Single" ? legacySingle(target, frame.parsed.message, accept) : legacyBatch(target, frame.elements, accept)
      })

    const legacy = (
      request: HttpServerRequest.HttpServerRequest,
      frame: JsonRpc.Frame,
      revision: Revision.LegacyRevision | undefined,
      accept: Wire.Accepts
    ) =>
      Effect.gen(function*() {
        const id = sessionHeader(request)
        if (id !== undefined) return yield* inSession(id, frame, accept)
        if (frame._tag === "Single" && JsonRpc.isRequest(frame.parsed.message) && frame.parsed.message.method === Method.Initialize) {
          return yield* initialize(frame.parsed.message, accept)
        }
        if (options.sessionless === "refuse") {
          return Wire.refuse(400, ErrorCode.InvalidRequest, `Invalid Request: ${HeaderCodec.SessionIdHeader} header is required`)
        }
        // Served statelessly: a connection of its own, so nothing leaks between such requests.
        const connection = yield* makeConnection(`http-${mintId()}`)
        const target: Legacy = { session: undefined, connection, revision: revision ?? Classify.DefaultLegacyRevision }
        return yield* frame._tag === "Single" ? legacySingle(target, frame.parsed.message, accept) : legacyBatch(target, frame.elements, accept)
      })

    // ---- methods

    // Without Effect.gen: every call comes this way, and all but the body and the request itself is plain checks.
    const post = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
      if (!Wire.isJsonBody(request)) {
        return Effect.succeed(Wire.refuse(415, ErrorCode.InvalidRequest, "Invalid Request: Content-Type must be application/json"))
      }
      const accept = Wire.accepts(request)
      if (!accept.json && !accept.eventStream) {
        return Effect.succeed(
          Wire.refuse(406, ErrorCode.InvalidRequest, "Invalid Request: Accept must include application/json or text/event-stream")
        )
      }
      const served = Effect.flatMap(Wire.readBody(request, maxBody), (text): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
        const frame = JsonRpc.decodeHostFrame(text, limits)
        if (Either.isLeft(frame)) return Effect.succeed(Wire.json(400, JsonRpc.frameErrorResponse(frame.left)))
        const relayed = Wire.header(request, CallerProtocolHeader) !== undefined
        // A relayed message that claims a modern version is a stdio host's: no headers to classify
        // by, and its _meta is the Server's to judge, exactly as on stdio.
        if (relayed && frame.right._tag === "Single") {
          const message = frame.right.parsed.message
          if ((JsonRpc.isRequest(message) || JsonRpc.isNotification(message)) && Meta.hasVersionClaim(message.params)) {
            return modern(request, message, accept, true)
          }
        }
        const classified = Classify.classify(frame.right, request.headers)
        switch (classified._tag) {
          case "Rejected": {
            const response = Classify.rejectionResponse(classified)
            return Effect.succeed(Wire.json(HttpStatus.modernStatus(response), response))
          }
          case "Modern":
            // Classify only lets single messages through as modern.
            return frame.right._tag === "Single"
              ? modern(request, frame.right.parsed.message, accept, relayed)
              : Effect.succeed(Wire.refuse(400, ErrorCode.InvalidRequest, "Invalid Request: batches are not part of 2026-07-28"))
          case "Legacy":
            return legacy(request, frame.right, classified.revision, accept)
        }
      })
      return Effect.catchAll(served, (e) => Effect.succeed(Wire.bodyRefusal(e)))
    }

    const get = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const allow = { allow: "POST, DELETE" }
        // 2026-07-28 has no GET stream; a legacy GET stream belongs to a session.
        if (namesModern(request)) {
          return Wire.refuse(405, ErrorCode.InvalidRequest, "Method Not Allowed: 2026-07-28 has no GET stream", { headers: allow })
        }
        const id = sessionHeader(request)
        if (id === undefined) {
          return Wire.refuse(405, ErrorCode.InvalidRequest, "Method Not Allowed: a GET stream needs a session", { headers: allow })
        }
        const session = yield* sessions.get(id)
        if (session === undefined) return Wire.refuse(404, ErrorCode.InvalidRequest, "Invalid Request: unknown or ended session; initialize again")
        if (draining) return Wire.refuse(503, ErrorCode.InternalError, "Service Unavailable: mcpx-fx is shutting down", { headers: { "retry-after": "1" } })
        if (!Wire.accepts(request).eventStream) {
          return Wire.refuse(406, ErrorCode.InvalidRequest, "Invalid Request: Accept must include text/event-stream")
        }
        const mailbox = yield* sessions.openStream(session)
        // One stream per session: the spec forbids sending a message on two streams, so a second
        // one would silently take half the notifications.
        if (mailbox === undefined) return Wire.refuse(409, ErrorCode.InvalidRequest, "Conflict: this session already has a GET stream")
        // It opens with a comment: a Node server sends the status and headers with the first
        // write, and a client waiting for them must not wait for the first notification.
        const events = Stream.concat(
          Stream.make(Wire.sseKeepAlive),
          withKeepAlive(Stream.map(Mailbox.toStream(mailbox), Wire.sseEvent))
        ).pipe(Stream.ensuring(sessions.closeStream(session, mailbox)))
        return Wire.eventStream(events, { [HeaderCodec.SessionIdHeader]: session.id })
      })

    const del = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        if (namesModern(request)) {
          return Wire.refuse(405, ErrorCode.InvalidRequest, "Method Not Allowed: 2026-07-28 has no sessions", { headers: { allow: "POST" } })
        }
        const id = sessionHeader(request)
        // mcpx-fx does allow ending a session, so a DELETE without one is malformed, not 405.
        if (id === undefined) return Wire.refuse(400, ErrorCode.InvalidRequest, `Invalid Request: DELETE needs an ${HeaderCodec.SessionIdHeader} header`)
        const ended = yield* sessions.end(id)
        return ended
          ? HttpServerResponse.empty({ status: 204 })
          : Wire.refuse(404, ErrorCode.InvalidRequest, "Invalid Request: unknown or ended session")
      })

    /**
     * The endpoint. `HttpApp.toHandled` (what every platform server runs) makes the handler
     * uninterruptible unless a router says otherwise; it is made interruptible here so that a
     * client abort always interrupts the request, however the app is mounted.
     */
    const app: HttpApp.Default = Effect.interruptible(
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        if (!origins.allows(Wire.header(request, "origin"))) {
          return Effect.succeed(Wire.refuse(403, ErrorCode.InvalidRequest, "Forbidden: Origin not allowed"))
        }
        switch (request.method) {
          case "POST":
            return post(request)
          case "GET":
            return get(request)
          case "DELETE":
            return del(request)
          default:
            return Effect.succeed(
              Wire.refuse(405, ErrorCode.InvalidRequest, `Method Not Allowed: ${request.method}`, { headers: { allow: AllowAll } })
            )
        }
      })
    )

    return HttpHost.of({
      app,
      notify: sessions.notify,
      endSessions: sessions.endAll,
      sessionIds: sessions.ids
    })
  })
