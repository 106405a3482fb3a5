/**
 * The SERVER span of a host request (OpenTelemetry semantic conventions for MCP), made only while
 * tracing: its parent is the host's trace context (`_meta`, else the HTTP headers), its
 * attributes what the request and its answer tell. A host that does not sample its trace gets no
 * span from mcpx-fx either, and its trace context travels on unchanged.
 */
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Meta from "@mcpx-fx/protocol/Meta"
import type * as Revision from "@mcpx-fx/protocol/Revision"
import * as TraceContext from "@mcpx-fx/protocol/TraceContext"
import * as Tracing from "@mcpx-fx/protocol/Tracing"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Tracer from "effect/Tracer"
import { HostTrace } from "../HostTrace.js"
import type { RequestContext } from "./ServerConnection.js"

/** `handled` (the request's whole handling, never failing) in its span. */
export const traced = (
  request: JsonRpc.Request,
  era: Revision.Era,
  context: RequestContext,
  handled: Effect.Effect<JsonRpc.Response>
): Effect.Effect<JsonRpc.Response> =>
  Effect.flatMap(HostTrace, (hop) => {
    const meta = Meta.metaOf(request.params)
    const parent = Tracing.parentSpan(meta?.[TraceContext.TraceparentKey], meta?.[TraceContext.TracestateKey]) ??
      (hop.traceparent !== undefined ? Tracing.parentSpan(hop.traceparent, hop.tracestate) : undefined)
    if (parent !== undefined && !parent.sampled) return Effect.withTracerEnabled(handled, false)
    const { attributes, name } = Tracing.requestSpan(request.method, request.params, request.id)
    attributes["mcpx.era"] = era
    if (hop.transport !== undefined) attributes["network.transport"] = hop.transport
    if (era === "modern") {
      const version = meta?.[Meta.ProtocolVersionKey]
      if (typeof version === "string") attributes["mcp.protocol.version"] = version
      // 2026-07-28 has no sessions, and the conventions forbid the attribute there.
    } else if (hop.sessionId !== undefined) {
      attributes["mcp.session.id"] = hop.sessionId
    }
    return Effect.useSpan(
      name,
      { kind: "server", attributes, captureStackTrace: false, ...(parent !== undefined ? { parent } : {}) },
      (span) =>
        Effect.flatMap(Effect.withParentSpan(handled, span), (response) =>
          Effect.zipRight(
            answered(span, era, context, response),
            JsonRpc.isErrorResponse(response) ? Effect.fail(new AnsweredWithError({ response })) : Effect.succeed(response)
          ))
    ).pipe(Effect.catchTag("AnsweredWithError", (e) => Effect.succeed(e.response)))
  })

/**
 * A request answered with a JSON-RPC error, as the span's failure: a span ends with the status
 * its effect's exit gives it, so this is how the span gets status ERROR and the error's message.
 * It never leaves `traced`, which answers the response it carries.
 */
class AnsweredWithError extends Data.TaggedError("AnsweredWithError")<{ readonly response: JsonRpc.ErrorResponse }> {
  override get message(): string {
    return this.response.error.message
  }
}

const answered = (span: Tracer.Span, era: Revision.Era, context: RequestContext, response: JsonRpc.Response) => {
  if (JsonRpc.isErrorResponse(response)) Tracing.recordRpcError(span, response.error.code)
  else Tracing.recordResult(span, response.result)
  if (era === "modern") return Effect.void
  // Read after the request, so an `initialize` reports the revision it has just settled.
  return Effect.map(Ref.get(context.connection.negotiated), (negotiated) => {
    const revision = Option.isSome(negotiated) ? negotiated.value.revision : context.legacyRevision
    if (revision !== undefined) span.attribute("mcp.protocol.version", revision)
  })
}
