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
import * as ProtocolSubscriptions from "@mcpx-fx/protocol/Subscriptions"
import * as TraceContext from "@mcpx-fx/protocol/TraceContext"
import * as Tracing from "@mcpx-fx/protocol/Tracing"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Wire from "./internal/HttpWire.js"
import * as StopCut from "@mcpx-fx/cancel/StopCut"
import { makeLegacy } from "./internal/HttpLegacy.js"
import { makeModern, type SchemaLookup } from "./internal/HttpModern.js"
export type { SchemaLookup } from "./internal/HttpModern.js"
import type { Deps } from "./internal/HttpParts.js"
import { makeOriginPolicy } from "./internal/HttpOrigin.js"
import { makeQuestions } from "./internal/HttpQuestions.js"
import { makeSessions, type Target } from "./internal/HttpSessions.js"
import { Backend } from "./Backend.js"
import { type Hop, HostTrace } from "./HostTrace.js"
import { DefaultMaxBatch, DefaultMaxSessions, DefaultMaxStreams, StreamSlots } from "./Limits.js"
import { makeConnection, Server } from "./Server.js"
import * as Shutdown from "./Shutdown.js"

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
  /** `transport.maxStreams`: the most open `subscriptions/listen` streams (default `DefaultMaxStreams`). */
  readonly maxStreams?: number
  /** `transport.maxBatch`: the most messages one batch may hold (default `DefaultMaxBatch`). */
  readonly maxBatch?: number
  /**
   * A legacy POST without `Mcp-Session-Id` (other than `initialize`): served statelessly
   * (`"serve"`, the default, as seed 002 has it) or refused with 400 (`"refuse"`, the spec's
   * answer for a server that requires sessions).
   */
  readonly sessionless?: "serve" | "refuse"
  /**
   * Put before every legacy `Mcp-Session-Id` minted here (a fleet: `<fleet.instance>.`), so a load
   * balancer can send a legacy session's requests back to the instance that holds it.
   */
  readonly sessionIdPrefix?: string
  /**
   * The `inputSchema` of a tool by name, for checking a modern `tools/call`'s `Mcp-Param-*` headers
   * against its `x-mcp-header` annotations, asked for the call's own caller (its `_meta`, already
   * validated: nothing is looked up, so no upstream started, for a request that will be refused).
   * Without it only the standard headers are checked.
   */
  readonly inputSchemaOf?: SchemaLookup
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
  static readonly layer = (options: HttpHostOptions = {}): Layer.Layer<HttpHost, never, Server | Backend> => Layer.scoped(HttpHost, make(options))
}

export type { Target } from "./internal/HttpSessions.js"

const AllowAll = "GET, POST, DELETE"

const make = (options: HttpHostOptions) =>
  Effect.gen(function*() {
    const server = yield* Server
    const backend = yield* Backend
    const scope = yield* Effect.scope
    const tracing = yield* Tracing.Tracing
    const sessions = yield* makeSessions(scope, {
      idleTimeout: options.sessionIdleTimeout,
      maxSessions: options.maxSessions ?? DefaultMaxSessions,
      ...(options.sessionIdPrefix === undefined ? {} : { idPrefix: options.sessionIdPrefix })
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
    const withKeepAlive = (events: Stream.Stream<Uint8Array>): Stream.Stream<Uint8Array> => Stream.merge(events, keepAlive, { haltStrategy: "left" })

    const sessionHeader = (request: HttpServerRequest.HttpServerRequest) => Wire.header(request, HeaderCodec.SessionIdHeader)

    const namesModern = (request: HttpServerRequest.HttpServerRequest): boolean => {
      const v = Wire.header(request, HeaderCodec.ProtocolVersionHeader)
      return v !== undefined && Classify.namesModernRevision(v.trim())
    }

    /** What the Server's span is told of a POST (read only while tracing). */
    const hopOf = (request: HttpServerRequest.HttpServerRequest): Hop => {
      const sessionId = sessionHeader(request)
      const traceparent = Wire.header(request, TraceContext.TraceparentKey)
      const tracestate = Wire.header(request, TraceContext.TracestateKey)
      return {
        transport: "tcp",
        ...(sessionId !== undefined ? { sessionId } : {}),
        ...(traceparent !== undefined ? { traceparent } : {}),
        ...(tracestate !== undefined ? { tracestate } : {})
      }
    }

    const deps: Deps = { server, settled, withKeepAlive }
    const listens = new StreamSlots(options.maxStreams ?? DefaultMaxStreams)
    const { modern } = makeModern({ ...deps, modernConnection, inputSchemaOf: options.inputSchemaOf, listens })
    const { legacy } = makeLegacy({ ...deps, backend, sessions, questions, sessionless: options.sessionless ?? "serve" })

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
      const served = (text: string): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
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
      }
      // One step for the body and its refusal: only the body's read can fail here.
      return Effect.matchEffect(Wire.readBody(request, maxBody), { onFailure: (e) => Effect.succeed(Wire.bodyRefusal(e)), onSuccess: served })
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
    const app: HttpApp.Default = Wire.withRequest((request) => {
      if (!origins.allows(Wire.header(request, "origin"))) {
        return Effect.succeed(Wire.refuse(403, ErrorCode.InvalidRequest, "Forbidden: Origin not allowed"))
      }
      switch (request.method) {
        case "POST":
          return tracing ? Effect.provideService(post(request), HostTrace, hopOf(request)) : post(request)
        case "GET":
          return get(request)
        case "DELETE":
          return del(request)
        default:
          return Effect.succeed(
            Wire.refuse(405, ErrorCode.InvalidRequest, `Method Not Allowed: ${request.method}`, { headers: { allow: AllowAll } })
          )
      }
    }, { interruptible: true })

    return HttpHost.of({
      app,
      notify: sessions.notify,
      endSessions: sessions.endAll,
      sessionIds: sessions.ids
    })
  })
