/**
 * MCP spans as the OpenTelemetry semantic conventions for MCP name them, shared by the host side
 * (SERVER spans) and the upstream side (CLIENT spans), and the trace context they carry in `_meta`.
 *
 * Tracing is off unless something provides `Tracing` as true (the CLI does when the standard
 * `OTEL_*` variables ask for an exporter). Services read it once when they are built, so a
 * process that does not trace creates no span and parses no `traceparent` on any call.
 */
import * as Context from "effect/Context"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { isJsonObject, type JsonObject } from "./Json.js"
import * as Method from "./Method.js"
import * as TraceContext from "./TraceContext.js"

/** Whether MCP requests are traced in this process. */
export class Tracing extends Context.Reference<Tracing>()("@mcpx-fx/protocol/Tracing", { defaultValue: (): boolean => false }) {}

/** The `tracestate` that came with a host's trace context, kept with the parent span it names. */
export class InboundTraceState extends Context.Tag("@mcpx-fx/protocol/Tracing/InboundTraceState")<InboundTraceState, string>() {}

/**
 * The span a host's trace context names, to parent mcpx-fx's own: undefined when `traceparent` is
 * absent or malformed (a new trace then starts), with the `tracestate` kept only when valid.
 */
export const parentSpan = (traceparent: unknown, tracestate: unknown): Tracer.ExternalSpan | undefined => {
  const parsed = TraceContext.parseTraceparent(traceparent)
  if (parsed === undefined) return undefined
  const state = TraceContext.parseTracestate(tracestate)
  return Tracer.externalSpan({
    traceId: parsed.traceId,
    spanId: parsed.spanId,
    sampled: parsed.sampled,
    ...(state !== undefined ? { context: Context.make(InboundTraceState, state) } : {})
  })
}

/** The `tracestate` of the trace `span` belongs to, as the host sent it (mcpx-fx adds no entry). */
export const traceStateOf = (span: Tracer.AnySpan): string | undefined => {
  let current: Tracer.AnySpan = span
  for (;;) {
    if (current._tag === "ExternalSpan") return Option.getOrUndefined(Context.getOption(current.context, InboundTraceState))
    if (Option.isNone(current.parent)) return undefined
    current = current.parent.value
  }
}

/**
 * `params` with `span` as the parent in its `_meta`, so the next hop's spans are children of it.
 * A span that is not recorded (tracing disabled under an unsampled parent) changes nothing: the
 * caller's own trace context, if any, then travels on as it came.
 */
export const propagate = (params: JsonObject | undefined, span: Tracer.AnySpan): JsonObject | undefined => {
  if (span._tag !== "Span" || !span.sampled) return params
  const meta = params !== undefined && isJsonObject(params._meta) ? params._meta : {}
  const state = traceStateOf(span)
  const { [TraceContext.TracestateKey]: _dropped, ...rest } = meta
  return {
    ...(params ?? {}),
    _meta: {
      ...rest,
      [TraceContext.TraceparentKey]: TraceContext.formatTraceparent(span),
      ...(state !== undefined ? { [TraceContext.TracestateKey]: state } : {})
    }
  }
}

/** A span's name and the attributes known before the request runs. */
export interface RequestSpan {
  readonly name: string
  readonly attributes: Record<string, unknown>
}

/**
 * The name (`{mcp.method.name} {target}`, the target being the tool or prompt name) and the
 * attributes of a request's span, on either side. A resource URI is an attribute, not part of the
 * name: the conventions keep it out by default, as it would make names unbounded.
 */
export const requestSpan = (method: string, params: JsonObject | undefined, id?: string | number): RequestSpan => {
  const attributes: Record<string, unknown> = { "mcp.method.name": method }
  if (id !== undefined) attributes["jsonrpc.request.id"] = String(id)
  let target: string | undefined
  switch (method) {
    case Method.ToolsCall:
      if (typeof params?.name === "string") attributes["gen_ai.tool.name"] = target = params.name
      attributes["gen_ai.operation.name"] = "execute_tool"
      break
    case Method.PromptsGet:
      if (typeof params?.name === "string") attributes["gen_ai.prompt.name"] = target = params.name
      break
    case Method.ResourcesRead:
    case Method.ResourcesSubscribe:
    case Method.ResourcesUnsubscribe:
      if (typeof params?.uri === "string") attributes["mcp.resource.uri"] = params.uri
      break
  }
  return { name: target === undefined ? method : `${method} ${target}`, attributes }
}

/** Marks a span with a JSON-RPC error's code, as `error.type` and `rpc.response.status_code`. */
export const recordRpcError = (span: Tracer.Span, code: number): void => {
  span.attribute("error.type", String(code))
  span.attribute("rpc.response.status_code", String(code))
}

/** Marks a span whose result reports a tool's failure (`isError`), which is no JSON-RPC error. */
export const recordResult = (span: Tracer.Span, result: JsonObject): void => {
  if (result.isError === true) span.attribute("error.type", "tool_error")
}
