/**
 * `/mcp`'s modern POST (2026-07-28): a request checked against its mirrored headers and run
 * statelessly, answered with one JSON response or, when something must be said first, an SSE
 * stream ending with it (HttpHost.ts has the whole endpoint).
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as HeaderCodec from "@mcpx-fx/protocol/HeaderCodec"
import * as HttpStatus from "@mcpx-fx/protocol/HttpStatus"
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
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { ResolvedTool } from "../Backend.js"
import type { Connection, RequestContext } from "../Server.js"
import * as Subscriptions from "../Subscriptions.js"
import type { StreamSlots } from "../Limits.js"
import { Backlog } from "./Backlog.js"
import { firstOf, Spoken } from "./FirstOf.js"
import type { Deps } from "./HttpParts.js"
import { sessionIdentity } from "./ServerParams.js"
import * as Wire from "./HttpWire.js"

/**
 * The Backend's resolution of a tool by its host-visible name (for its `inputSchema`), asked for
 * by the caller of the call whose headers are checked: its validated `_meta` (the object on the
 * request, not a copy) and its session identity, if it names one. Undefined when the tool is not
 * known. The resolution goes on with the request to the Backend's call (`Caller.resolved`).
 */
export type SchemaLookup = (tool: string, meta: Meta.RequestMeta, sessionId: string | undefined) => Effect.Effect<ResolvedTool | undefined>

/** The modern POST over the endpoint's shared parts. */
export const makeModern = (
  deps: Deps & {
    /** Modern requests never read a connection; one shared placeholder satisfies RequestContext. */
    readonly modernConnection: Connection
    readonly inputSchemaOf: SchemaLookup | undefined
    /** Places for open `subscriptions/listen` streams. */
    readonly listens: StreamSlots
  }
) => {
  const { listens, modernConnection, server, settled, withKeepAlive } = deps

  /** Whether a modern request asked to hear something before its response: progress, or log messages. */
  const asksToHear = (params: JsonRpc.Request["params"]): boolean => {
    const meta = Meta.metaOf(params)
    return meta !== undefined && (meta[Meta.ProgressTokenKey] !== undefined || meta[Meta.LogLevelKey] !== undefined)
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
    // `Mcp-Param-*` need the called tool's schema, which only the integrator's lookup has. The
    // standard headers were checked when the request was classified (Classify), so only these are
    // left; anything but a tools/call has none to check and is run at once.
    const lookup = deps.inputSchemaOf
    const name = message.params?.name
    if (lookup === undefined || message.method !== Method.ToolsCall || typeof name !== "string") return modernRequest(message, accept)
    // The lookup may list, so start, the tool's server: only for a request whose `_meta` the
    // Server will accept, and as that request's caller. Any other is run at once, for the Server
    // to refuse as it refuses it without headers (its look at the same `_meta` is remembered).
    const meta = Meta.validateRequestMeta(message.params, Revision.ModernRevisions)
    // (validateRequestMeta has also held the version to the modern revisions.)
    if (Either.isLeft(meta)) return modernRequest(message, accept)
    const checked = (resolved: ResolvedTool | undefined) => {
      const params = HeaderCodec.checkToolParams(request.headers, message, resolved?.inputSchema)
      if (Either.isRight(params)) return modernRequest(message, accept, resolved)
      const response = HeaderCodec.mismatchResponse(message.id, params.left)
      return Effect.succeed(Wire.reply(HttpStatus.modernStatus(response), response, accept))
    }
    // A tool the live listing has (nearly every call's) is resolved in place: read without a step.
    const looked = lookup(name, meta.right, sessionIdentity(message.params))
    return Wire.succeeded(looked) ? checked(looked.value) : Effect.flatMap(looked, checked)
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
  const modernRequest = (message: JsonRpc.Request, accept: Wire.Accepts, resolved?: ResolvedTool) => {
    // The header check's resolution of the called tool goes on to the call: the same request, so
    // the same caller (`_meta`, session) and the same name.
    const answer = (response: JsonRpc.Response | undefined) =>
      response === undefined ? Wire.accepted() : Wire.reply(HttpStatus.modernStatus(response), response, accept)
    if (!accept.eventStream) return Effect.map(settled(message, server.handle(message, { connection: modernConnection, resolved })), answer)
    if (message.method !== Method.SubscriptionsListen && !asksToHear(message.params)) {
      return Effect.suspend(() => {
        let said: Array<JsonRpc.Message> | undefined
        // Made by the first message: almost no call says anything before its response.
        let backlog: Backlog | undefined
        const send = (m: JsonRpc.Message) =>
          Effect.suspend(() => {
            backlog ??= new Backlog("a 2026-07-28 POST")
            return backlog.admits(said?.length ?? 0, m) ? Effect.sync(() => void (said ??= []).push(m)) : backlog.refused
          })
        const context: RequestContext = { connection: modernConnection, resolved, notify: send, subscriptions: { notify: send } }
        // flatMap and succeed: one step fewer than map, on nearly every modern call.
        return Effect.flatMap(settled(message, server.handle(message, context)), (response) => {
          if (said === undefined) return Effect.succeed(answer(response))
          const events = response === undefined ? said : [...said, response]
          return Effect.succeed(Wire.eventStream(Stream.fromIterable(events.map(Wire.sseEvent))))
        })
      })
    }
    const isListen = message.method === Method.SubscriptionsListen
    return Effect.gen(function*() {
      // A listen holds a place until its exchange ends, however it ends (taken and tied to the
      // exchange in one uninterruptible step, so none leaks).
      const exchange = isListen
        ? yield* Effect.uninterruptible(Effect.suspend(() =>
          listens.take()
            ? Effect.tap(Scope.make(), (scope) => Scope.addFinalizer(scope, Effect.sync(() => listens.give())))
            : Effect.succeed(null)
        ))
        : undefined
      if (exchange === null) {
        return Wire.refuse(503, ErrorCode.InternalError, `Service Unavailable: ${listens.max} listen streams are open already (transport.maxStreams)`, {
          headers: { "retry-after": "5" }
        })
      }
      const outbound = yield* Mailbox.make<JsonRpc.Message>()
      const spoken = new Spoken()
      // Whether the POST can still become a stream: not once a JSON reply has been chosen.
      let open = true
      const backlog = new Backlog("a 2026-07-28 POST stream")
      const send = (m: JsonRpc.Message) =>
        Effect.suspend(() => {
          if (!open) return Effect.void
          if (!backlog.admits(Option.getOrElse(outbound.unsafeSize(), () => 0), m)) return backlog.refused
          outbound.unsafeOffer(m)
          spoken.raise()
          return Effect.void
        })
      const watches = exchange === undefined ? undefined : yield* Scope.extend(Subscriptions.makeWatches, exchange)
      const context: RequestContext = {
        connection: modernConnection,
        resolved,
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

  return { modern }
}
