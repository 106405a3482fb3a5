/**
 * The span of an upstream's start (the era probe and the handshake), made only while tracing:
 * a start is what a slow first call waits on, so a trace shows it beside the call's own span.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ProbeError, ProbeOptions, Started } from "../ProbeModel.js"
import type { ServerDefinition } from "../../ServerDefinition.js"
import { peerOf } from "../../session/internal/SessionSpans.js"

/** `start` in a span named after the upstream, told the era it settled on. */
export const traced = (
  def: ServerDefinition,
  options: ProbeOptions,
  start: Effect.Effect<Started, ProbeError, Scope.Scope>
): Effect.Effect<Started, ProbeError, Scope.Scope> => {
  const attributes: Record<string, unknown> = {
    "mcpx.upstream": def.name,
    "mcpx.preference": options.preference,
    "network.transport": def.transport === "http" ? "tcp" : "pipe"
  }
  const peer = peerOf(def.transport === "http" ? def.url : undefined)
  if (peer !== undefined) {
    attributes["server.address"] = peer.address
    attributes["server.port"] = peer.port
  }
  return Effect.useSpan(`mcpx.upstream.start ${def.name}`, { kind: "internal", attributes, captureStackTrace: false }, (span) =>
    start.pipe(
      Effect.withParentSpan(span),
      Effect.tap((started) => {
        span.attribute("mcpx.era", started.report.era)
        span.attribute("mcpx.era.source", started.report.eraSource)
        span.attribute("mcp.protocol.version", started.report.negotiated)
      }),
      Effect.tapError((e) => Effect.sync(() => span.attribute("error.type", e._tag)))
    ))
}
