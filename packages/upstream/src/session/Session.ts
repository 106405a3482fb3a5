/**
 * A negotiated upstream connection with one request surface for both eras.
 *
 * Legacy: the handshake is done (by the Prober); every request carries the negotiated version in
 * `MCP-Protocol-Version` on HTTP, and reserved modern `_meta` keys a caller may have sent are
 * removed. Modern: every request carries `_meta` (protocolVersion, clientCapabilities, clientInfo)
 * and, on HTTP, the mirrored headers.
 *
 * Server→client requests are answered through the handler of the call that caused them, and always
 * answered. On HTTP they arrive on that call's POST stream, which names the call. On stdio they name
 * no call: one is routed to a call only when every call in flight that could be asked belongs to
 * one caller, calls parked on their caller's answer left out; otherwise nobody can say whose it is,
 * and it goes to `SessionOptions.unattributed` (or is answered as if nobody could be asked), never
 * to a caller who might not have caused it.
 *
 * Modern HTTP: a `tools/call` mirrors the tool's `x-mcp-header` arguments as `Mcp-Param-*`, so
 * the session knows each tool's annotations before it calls one: from a listing that went through
 * it, else by listing once itself (kept until a tools list_changed). A `-32020` answer re-lists
 * once and sends the call again. A modern request answered the way only a server that is not
 * modern answers (a 400/404/405 without a modern error), or a legacy one answered the way only a
 * modern server answers (-32022, an HTTP error with a modern error, a forgotten session whose
 * `initialize` is refused), marks the session's era as doubted, which the Pool reads to probe again.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Meta from "@mcpx-fx/protocol/Meta"
import * as Revision from "@mcpx-fx/protocol/Revision"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { keepSendableTools, modernHeaders, recordToolHeaders, type ToolHeaderIndex, type UnsendableRequest } from "../transport/ModernHeaders.js"
import { answerAlone, resolveInputs } from "./Questions.js"
import {
  isHeaderMismatch,
  type RefusedAgain,
  refusedAsNotLegacy,
  refusedAsNotModern,
  type SessionError,
  TooManyInputRounds,
  UpstreamRpcError
} from "./SessionErrors.js"
import type { CallContext, Established, ParkedCalls, Session, SessionOptions } from "./SessionModel.js"
import { type Connection, hintsWithCaller, type RequestHints, TransportClosed } from "../transport/Transport.js"
import { inPlaceIn, outOfPlace } from "../transport/internal/InPlace.js"
import { logUntied, progressFor, withProgressToken } from "./internal/CallNotifications.js"
import { makeAnswers } from "./internal/SessionAnswers.js"
import { stripReservedMeta, withModernMeta } from "./internal/SessionMeta.js"
import * as SessionSpans from "./internal/SessionSpans.js"

/**
 * Builds the session on a connection whose handshake is done. The session's background work
 * (answering untied questions, fanning out events) lives in the given scope.
 */
export const makeSession = (
  name: string,
  conn: Connection,
  established: Established,
  options: SessionOptions,
  /**
   * Legacy HTTP: runs the handshake again on this connection after the server forgot the session
   * (404). A request that meets `SessionExpired` re-initializes once and is sent again; a
   * refusal puts the session's era in doubt and ends the session.
   */
  reinitialize?: Effect.Effect<void, SessionError | RefusedAgain>,
  /**
   * Present while tracing (the Prober reads it once, when it is built: a session may start in a
   * host request's fiber, which carries no services): each request gets a CLIENT span. The URL of
   * an HTTP upstream gives its spans `server.address` and `server.port`.
   */
  traced?: { readonly url?: string | undefined; readonly lane?: "modern" | "legacy" | undefined }
): Effect.Effect<Session, never, Scope.Scope> =>
  Effect.gen(function*() {
    const maxRounds = options.maxInputRounds ?? 16
    const spans = traced === undefined ? undefined : SessionSpans.make(name, conn, established, traced.url, traced.lane)
    const sessionScope = yield* Effect.scope
    let nextId = 1
    const inFlight: Array<CallContext> = []
    const toolHeaders: ToolHeaderIndex = new Map()
    const events = yield* PubSub.sliding<JsonRpc.Notification>(1024)
    const isModern = established.era === "modern"
    const mirrorsParams = isModern && conn.wire !== "stdio"
    // HTTP only: a server behind a URL can change era while its session lives; a stdio process cannot.
    const eraRefusal = conn.wire === "stdio" ? undefined : isModern ? refusedAsNotModern : refusedAsNotLegacy
    // Whether toolHeaders holds a whole listing; a tools list_changed makes it stale again. The
    // generation lets a listing that a list_changed overtook leave the index marked stale.
    const listing = { known: false, generation: 0 }
    const listingLock = yield* Effect.makeSemaphore(1)
    let doubt: string | undefined

    const publish = (m: JsonRpc.Notification) => {
      if (m.method === Method.NotificationsToolsListChanged) {
        listing.known = false
        listing.generation++
      }
      return PubSub.publish(events, m)
    }

    const { answer, answerUntied, followed } = makeAnswers({
      name,
      conn,
      sessionScope,
      inFlight,
      options,
      ...(spans === undefined ? {} : { traced: spans.question })
    })

    // A legacy Streamable HTTP server sends what belongs to no POST (a tool handler's own
    // elicitation, list_changed) on the session's GET stream, and drops it while none is open, so
    // the stream is opened before the first call. No stream (405) or a refused one costs a log
    // line (the transport writes it); a server that never answers the GET does not hold the start.
    if (!isModern && conn.wire !== "stdio") {
      const wait = options.notificationStreamWait ?? "5 seconds"
      yield* conn.openNotificationStream.pipe(
        Effect.timeout(wait),
        Effect.catchTag("TimeoutException", () =>
          Effect.logWarning(`${name}: no answer to the notification stream's GET within ${Duration.format(Duration.decode(wait))}; going on without waiting`)),
        Effect.catchAll((e) =>
          Effect.logDebug(`${name}: no notification stream: ${e.message}`)
        )
      )
    }

    // Untied traffic: questions go to the caller they can be attributed to; notifications fan out.
    yield* conn.unsolicited.pipe(
      Stream.runForEach((parsed) => {
        const m = parsed.message
        if (JsonRpc.isRequest(m)) return answerUntied(m)
        // A log message no call could be given (internal/Waiting.ts) is nobody's to see but the daemon's.
        if (JsonRpc.isNotification(m) && m.method === Method.NotificationsMessage) return logUntied(name, m)
        if (JsonRpc.isNotification(m)) return publish(m)
        return Effect.logDebug(`${name}: dropped a response nothing waits for`)
      }),
      Effect.forkScoped
    )

    // stdio has no headers, and computing them there would only invent failures. The legacy and
    // stdio hints never change, so they are made once.
    const fixedHints: RequestHints | undefined = !isModern
      ? {
        era: "legacy",
        headers: Revision.atLeast(established.negotiated, "2025-06-18") ? { "MCP-Protocol-Version": established.negotiated } : {}
      }
      : conn.wire === "stdio"
      ? { era: "modern" }
      : undefined
    const hints = (method: string, params: JsonObject | undefined): Effect.Effect<RequestHints, UnsendableRequest> =>
      fixedHints !== undefined
        ? Effect.succeed(fixedHints)
        : Effect.map(modernHeaders(method, params, toolHeaders), (headers) => ({ era: "modern", headers }))

    const answered = (method: string, response: JsonRpc.Response | undefined): Effect.Effect<JsonObject, UpstreamRpcError> => {
      if (response === undefined) {
        return Effect.die(new Error(`${name}: the request stream for ${method} ended without a response`))
      }
      if (JsonRpc.isErrorResponse(response)) {
        const e = response.error
        return Effect.fail(
          new UpstreamRpcError({
            server: name,
            method,
            code: e.code,
            rpcMessage: e.message,
            ...(e.data !== undefined ? { data: e.data } : {})
          })
        )
      }
      return Effect.succeed((response as JsonRpc.SuccessResponse).result)
    }

    // Written without Effect.gen: it runs once per upstream call, and with fixed hints the
    // exchange starts at once.
    const once = (method: string, params: JsonObject | undefined, ctx: CallContext) =>
      Effect.suspend(() => {
        const id = nextId++
        spans?.sent(ctx, id)
        const sent = isModern
          ? withModernMeta(params, {
            protocolVersion: established.negotiated,
            clientCapabilities: ctx.clientCapabilities ?? options.clientCapabilities,
            clientInfo: options.clientInfo,
            logLevel: ctx.logLevel
          })
          : stripReservedMeta(params)
        // The caller's progress token is its own: two callers may pick the same one. Upstream the
        // call goes with a token of its own (its request id, unique in the session), and progress
        // comes back to the caller under the caller's token.
        const callerToken = Meta.metaOf(sent)?.[Meta.ProgressTokenKey]
        // (A log message may carry it too, in its `_meta`: that is what ties it to this call on a
        // shared channel such as stdio, internal/Waiting.ts.)
        const req = JsonRpc.request(id, method, sent === undefined || callerToken === undefined ? sent : withProgressToken(sent, id))
        const onMessage = (parsed: JsonRpc.Parsed) => {
          const m = parsed.message
          if (JsonRpc.isRequest(m)) return spans === undefined ? answer(m, ctx.questions) : spans.question(ctx, m.method, answer(m, ctx.questions))
          if (JsonRpc.isNotification(m)) {
            const own = callerToken === undefined ? m : progressFor(m, callerToken)
            return ctx.onNotification?.(own) ?? publish(own)
          }
          return Effect.void
        }
        const exchange = (h: RequestHints) =>
          Effect.flatMap(
            // A call that listens names its caller, for the log messages that name no call (Transport.ts).
            conn.call(req, onMessage, ctx.onNotification === undefined ? h : hintsWithCaller(h, ctx.callerId ?? ctx)),
            (response) => answered(method, response)
          )
        const sending = fixedHints !== undefined ? exchange(fixedHints) : Effect.flatMap(hints(method, sent), exchange)
        return eraRefusal === undefined ? sending : Effect.tapError(sending, (e) =>
          Effect.sync(() => {
            if (doubt === undefined && eraRefusal(e)) doubt = `${method} was refused as only a server that is not ${established.era} refuses it (${e.message})`
          }))
      })

    // Every page of tools/list, recorded for Mcp-Param-*; a server that never stops paging is cut off.
    const listTools = Effect.gen(function*() {
      const generation = listing.generation
      let cursor: string | undefined
      for (let page = 0; page < MaxListingPages; page++) {
        const result = yield* once(Method.ToolsList, cursor === undefined ? undefined : { cursor }, {})
        recordToolHeaders(toolHeaders, yield* keepSendableTools(name, conn.wire, result))
        cursor = typeof result.nextCursor === "string" && result.nextCursor.length > 0 ? result.nextCursor : undefined
        if (cursor === undefined) break
      }
      if (listing.generation === generation) listing.known = true
    }).pipe(
      // A server that cannot list its tools is called without Mcp-Param-* rather than not at all;
      // until a list_changed or a -32020, it is not asked again.
      Effect.catchAll((e) =>
        Effect.zipRight(
          Effect.logDebug(`${name}: tools/list for Mcp-Param-* headers failed: ${e.message}`),
          Effect.sync(() => void (listing.known = true))
        )
      )
    )

    // Listing waits on exchanges of its own and on another call's listing, which no cut in place
    // ends: a call running in place lists out of place (a known listing, the usual case, waits on nothing).
    const knowTools = Effect.suspend(() =>
      listing.known ? Effect.void : outOfPlace(listingLock.withPermits(1)(Effect.suspend(() => (listing.known ? Effect.void : listTools))))
    )

    const relist = Effect.suspend(() => {
      listing.known = false
      listing.generation++
      return knowTools
    })

    // A modern tools/call over HTTP goes out with the tool's Mcp-Param-* headers, and on -32020
    // (the server says a header is missing or wrong) the tools are listed again and the call
    // sent once more, as the specification asks of clients.
    const send = (method: string, params: JsonObject | undefined, ctx: CallContext) =>
      !mirrorsParams || method !== Method.ToolsCall
        ? once(method, params, ctx)
        : Effect.zipRight(
          knowTools,
          once(method, params, ctx).pipe(
            Effect.catchIf(isHeaderMismatch, (e) =>
              Effect.logDebug(`${name}: ${method} refused with -32020 (${e.message}); listing tools again`).pipe(
                Effect.zipRight(relist),
                Effect.zipRight(once(method, params, ctx))
              ))
          )
        )

    // One exchange, sent again once on a new session when the server forgot ours. Only a legacy
    // session over HTTP can be forgotten (`reinitialize`); any other's exchange is left as it is,
    // without the step a catch takes on every call.
    const exchangeRound = (method: string, params: JsonObject | undefined, ctx: CallContext) =>
      reinitialize === undefined ? send(method, params, ctx) : send(method, params, ctx).pipe(
        Effect.catchTag("SessionExpired", (e) =>
          Effect.logInfo(`${name}: the server forgot session ${e.sessionId}; initializing again`).pipe(
            // Initializing again waits on what no cut in place ends (the negotiation's own exchanges).
            Effect.zipRight(Effect.catchTag(outOfPlace(reinitialize), "RefusedAgain", (refused) =>
              Effect.suspend(() => {
                doubt ??= `the server forgot session ${e.sessionId} and ${refused.reason}`
                return Effect.fail(new TransportClosed({ reason: refused.reason }))
              }))),
            Effect.zipRight(once(method, params, ctx))
          ))
      )

    // A legacy request is one round; a modern one repeats while its caller resolves input requests.
    const rounds = (method: string, params: JsonObject | undefined, ctx: CallContext) =>
      !isModern ? exchangeRound(method, params, ctx) : modernRound(method, params, ctx, params, 0)

    // Without Effect.gen: a modern host's every call to a modern server is one round of this.
    const modernRound = (
      method: string,
      params: JsonObject | undefined,
      ctx: CallContext,
      current: JsonObject | undefined,
      round: number
    ): Effect.Effect<JsonObject, SessionError> =>
      Effect.flatMap(exchangeRound(method, current, ctx), (result) => {
        const next = (listed: JsonObject): Effect.Effect<JsonObject, SessionError> => {
          // A caller that cannot be asked has its input requests answered as nobody could be asked.
          if (ctx.inputRequired !== "resolve" || result.resultType !== "input_required") return Effect.succeed(listed)
          if (round + 1 >= maxRounds) return Effect.fail(new TooManyInputRounds({ server: name, method, rounds: round + 1 }))
          const resolving = isJsonObject(result.inputRequests) ? resolveInputs(result.inputRequests, ctx.questions ?? answerAlone) : Effect.succeed({})
          return Effect.flatMap(spans === undefined ? resolving : spans.question(ctx, "input_required", resolving), (inputResponses) => {
            const { inputResponses: _r, requestState: _s, ...base } = current ?? {}
            return modernRound(method, params, ctx, {
              ...base,
              inputResponses,
              ...(typeof result.requestState === "string" ? { requestState: result.requestState } : {})
            }, round + 1)
          })
        }
        if (method !== Method.ToolsList) return next(result)
        return Effect.flatMap(keepSendableTools(name, conn.wire, result), (listed) => {
          recordToolHeaders(toolHeaders, listed)
          // The last page of a listing from the start: the index holds every tool now.
          if (params?.cursor === undefined && (typeof result.nextCursor !== "string" || result.nextCursor.length === 0)) {
            listing.known = true
          }
          return next(listed)
        })
      })

    // The call is in flight (a candidate for untied questions) from its start to its end. It is
    // added where it cannot be added without being taken out again: in a call in place, with the
    // call's own end taking it out (InPlace.ts, no finalizer of its own); elsewhere, inside an
    // `ensuring`.
    const request: Session["request"] = (method, params, ctx = {}) =>
      spans === undefined ? requestUntraced(method, params, ctx) : spans.traced(method, params, ctx, (p) => requestUntraced(method, p, ctx))
    const requestUntraced = (method: string, params: JsonObject | undefined, ctx: CallContext) =>
      Effect.withFiberRuntime<JsonObject, SessionError>((fiber) => {
        const inPlace = inPlaceIn(fiber)
        if (inPlace === undefined) {
          return Effect.ensuring(
            Effect.suspend(() => {
              inFlight.push(ctx)
              return inFlightRounds(method, params, ctx)
            }),
            Effect.sync(() => leaveInFlight(ctx))
          )
        }
        inFlight.push(ctx)
        inPlace.onEnd(() => leaveInFlight(ctx))
        return inFlightRounds(method, params, ctx)
      })
    const inFlightRounds = (method: string, params: JsonObject | undefined, ctx: CallContext) =>
      ctx.task === undefined ? rounds(method, params, ctx) : Effect.zipRight(followed(ctx), rounds(method, params, ctx))
    const leaveInFlight = (ctx: CallContext): void => {
      const at = inFlight.lastIndexOf(ctx)
      if (at >= 0) inFlight.splice(at, 1)
    }

    // Read by the Pool when another caller waits for a process: a session whose every call waits on
    // a caller who walked away from a round serves nobody, and can be handed over.
    const parked = (): ParkedCalls | undefined => {
      if (inFlight.length === 0) return undefined
      let since = 0
      for (const ctx of inFlight) {
        const at = ctx.parked?.since()
        if (at === undefined) return undefined
        since = Math.max(since, at)
      }
      const calls = [...inFlight]
      return { since, giveWay: Effect.forEach(calls, (ctx) => ctx.parked?.giveWay ?? Effect.void, { discard: true }) }
    }

    return {
      name,
      ...established,
      wire: conn.wire,
      // A legacy request is one exchange; a modern one may wait on a caller between rounds.
      runsInPlace: conn.cutsInPlace === true && !isModern,
      runsInPlaceFor: conn.cutsInPlace !== true
        ? () => false
        : !isModern
        ? () => true
        : (ctx) => ctx.inputRequired !== "resolve" && ctx.task === undefined,
      request,
      notify: (method, params) =>
        Effect.flatMap(
          Effect.orDie(hints(method, params)),
          (h) => conn.notify(JsonRpc.notification(method, params), h)
        ),
      events: Stream.fromPubSub(events),
      subscribe: PubSub.subscribe(events),
      closed: conn.closed,
      stderrTail: conn.stderrTail,
      ...(conn.heardAt !== undefined ? { heardAt: conn.heardAt } : {}),
      eraDoubt: Effect.sync(() => Option.fromNullable(doubt)),
      parked
    } satisfies Session
  })

/** How many pages of tools/list a session reads for its Mcp-Param-* index. */
const MaxListingPages = 100
