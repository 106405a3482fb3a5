/**
 * What a host transport knows about the hop a request came on, for the request's span: the
 * transport (`network.transport`), the legacy HTTP session, and the trace context of the HTTP
 * request itself. Set by the transports only while tracing, once per connection (stdio) or POST
 * (HTTP), so the Server's span can read it without a field in every RequestContext.
 */
import * as Context from "effect/Context"

/** A request's hop, as its transport tells it. */
export interface Hop {
  /** `pipe` for stdio, `tcp` for HTTP, as OpenTelemetry's `network.transport` names them. */
  readonly transport?: "pipe" | "tcp"
  /** The `Mcp-Session-Id` the request named (legacy Streamable HTTP). */
  readonly sessionId?: string
  /** The HTTP `traceparent` and `tracestate` headers: the parent when `_meta` names none. */
  readonly traceparent?: string
  readonly tracestate?: string
}

/** The hop of the request being handled; nothing known by default. */
export class HostTrace extends Context.Reference<HostTrace>()("@mcpx-fx/server/HostTrace", { defaultValue: (): Hop => ({}) }) {}
