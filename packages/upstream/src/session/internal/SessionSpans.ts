/**
 * The CLIENT span of an upstream request (OpenTelemetry semantic conventions for MCP), made only
 * while tracing: a child of whatever span the caller runs in (a host request's SERVER span), and
 * the parent the upstream is told of in the request's `_meta.traceparent`, in both eras.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Tracing from "@mcpx-fx/protocol/Tracing"
import * as Effect from "effect/Effect"
import type * as Tracer from "effect/Tracer"
import type { SessionError } from "../SessionErrors.js"
import type { CallContext, Established } from "../SessionModel.js"
import type { Connection } from "../../transport/Transport.js"

/** Where an HTTP upstream listens, for `server.address` and `server.port`. */
export const peerOf = (url: string | undefined): { readonly address: string; readonly port: number } | undefined => {
  if (url === undefined || !URL.canParse(url)) return undefined
  const u = new URL(url)
  const port = u.port !== "" ? Number(u.port) : u.protocol === "https:" ? 443 : 80
  return { address: u.hostname.replace(/^\[|\]$/g, ""), port }
}

/** The spans of one session's requests. */
export const make = (
  name: string,
  conn: Connection,
  established: Established,
  url: string | undefined,
  lane: "modern" | "legacy" | undefined
) => {
  const base: Record<string, unknown> = {
    "mcp.protocol.version": established.negotiated,
    "network.transport": conn.wire === "stdio" ? "pipe" : "tcp",
    "mcpx.upstream": name,
    "mcpx.era": established.era,
    "mcpx.era.source": established.eraSource
  }
  if (lane !== undefined) base["mcpx.lane"] = lane
  // A legacy HTTP session's id, read as each request ends (a re-initialized session has a new
  // one); 2026-07-28 has no sessions, and the conventions forbid the attribute there.
  const sessionId = established.era === "legacy" ? conn.sessionId : undefined
  const peer = peerOf(url)
  if (peer !== undefined) {
    base["server.address"] = peer.address
    base["server.port"] = peer.port
  }
  // A request's span by its call context, for what is learnt while it runs (its ids, its questions).
  const spans = new WeakMap<CallContext, Tracer.Span>()

  /** `run` in the request's span, given the params that name the span as the upstream's parent. */
  const traced = <A extends JsonObject, R>(
    method: string,
    params: JsonObject | undefined,
    ctx: CallContext,
    run: (params: JsonObject | undefined) => Effect.Effect<A, SessionError, R>
  ): Effect.Effect<A, SessionError, R> => {
    const { attributes, name: spanName } = Tracing.requestSpan(method, params)
    return Effect.useSpan(spanName, { kind: "client", attributes: { ...base, ...attributes }, captureStackTrace: false }, (span) => {
      spans.set(ctx, span)
      const named = sessionId === undefined
        ? run(Tracing.propagate(params, span))
        : Effect.ensuring(
          run(Tracing.propagate(params, span)),
          Effect.map(sessionId, (id) => id === undefined ? undefined : span.attribute("mcp.session.id", id))
        )
      return named.pipe(
        Effect.withParentSpan(span),
        Effect.tap((result) => Tracing.recordResult(span, result)),
        Effect.tapError((e) => Effect.sync(() => (e._tag === "UpstreamRpcError" ? Tracing.recordRpcError(span, e.code) : span.attribute("error.type", e._tag))))
      )
    })
  }

  /** Tells the request's span the id an exchange of it went with (the last one, after input rounds). */
  const sent = (ctx: CallContext, id: number): void => spans.get(ctx)?.attribute("jsonrpc.request.id", String(id))

  /**
   * A question the upstream asked during the request, put to its caller (or answered for it when
   * it cannot be asked): a span of its own under the request's, as long as the answer takes.
   */
  const question = <A, E, R>(ctx: CallContext, method: string, answering: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    const parent = spans.get(ctx)
    if (ctx.questions !== undefined) parent?.attribute("mcpx.question.bridged", true)
    return Effect.withSpan(answering, `mcpx.question ${method}`, {
      kind: "internal",
      attributes: { "mcpx.upstream": name, "mcpx.question.method": method, "mcpx.question.bridged": ctx.questions !== undefined },
      captureStackTrace: false,
      ...(parent === undefined ? {} : { parent })
    })
  }

  return { traced, sent, question }
}
