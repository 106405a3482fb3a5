/**
 * One observation per tool call: the clock read once as it begins and once as it ends, one object
 * filled in while it runs (the server and era the gateway chose), and from it, once it has ended,
 * everything that reports on calls: the `info` log line (internal/CallLog.ts), the metrics
 * (`mcp.server.operation.duration` and `mcpx.server.calls` for a host's call, and the client side's
 * `mcp.client.operation.duration` and `mcpx.client.calls` when it reached an upstream) and the live
 * page's ring of recent calls, when one is kept and someone reads it.
 *
 * Whoever first handles a call observes it (the Backend for hosts and `/v1` tasks, the daemon's
 * `/v1` routes, else the Gateway itself) and hands the observation down on the Gateway caller;
 * the Gateway only fills it in, so no call is timed twice.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Method from "@mcpx-fx/protocol/Method"
import * as Metrics from "@mcpx-fx/protocol/Metrics"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as LogLevel from "effect/LogLevel"
import type { CallSink, Observation, ObservedCall } from "./CallObservation.js"
import * as CallLog from "./internal/CallLog.js"

export { type CallSink, type Entry, Observation, type ObservedCall } from "./CallObservation.js"

/** Where observed calls go besides the log and the metrics: nowhere unless the daemon keeps a ring. */
export class CallSinks extends Context.Reference<CallSinks>()("@mcpx-fx/gateway/CallObserver/CallSinks", {
  defaultValue: (): { readonly ring?: CallSink } => ({})
}) {}

/**
 * `call`, observed: timed once, and reported once it ends: to the log at `info`, to the server
 * metrics when `metrics` (a host's request: the `/v1` routes are no MCP server requests), to the
 * client metrics when it reached an upstream, to the ring when one is kept and read. The code
 * under it is handed the observation on its Gateway caller (`Caller.observation`), not through a
 * FiberRef: setting one copies the fiber's FiberRefs, which cost a call more (~2 µs) than
 * everything else the observation does.
 */
export const observe = <E, R>(
  sinks: CallSinks["Type"],
  observation: Observation,
  metrics: boolean,
  call: Effect.Effect<JsonObject, E, R>
): Effect.Effect<JsonObject, E, R> =>
  Effect.withFiberRuntime((fiber) => {
    const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
    const start = clock.unsafeCurrentTimeNanos()
    const logged = !LogLevel.greaterThan(fiber.getFiberRef(FiberRef.currentMinimumLogLevel), LogLevel.Info)
    // Told once the call is over, however it ended; nothing to run (nearly always) is undefined.
    const report = (exit: Exit.Exit<JsonObject, E>): Effect.Effect<void> | undefined => {
      observation.end()
      const end = clock.unsafeCurrentTimeNanos()
      const elapsed = Number(end - start)
      if (metrics || observation.upstream) {
        const error = Metrics.errorType(exit)
        if (metrics) Metrics.recordServer.observed(Method.ToolsCall, elapsed / 1e9, error)
        // The upstream request of a tool call is not timed apart: the client side's duration is
        // the call's, mcpx-fx's own routing included (microseconds beside the upstream's).
        if (observation.upstream) Metrics.recordClient.observed(Method.ToolsCall, elapsed / 1e9, error)
      }
      const ring = sinks.ring !== undefined && sinks.ring.wanted(Number(end / 1_000_000n)) ? sinks.ring : undefined
      if (!logged && ring === undefined) return undefined
      const finished: ObservedCall = { observation, at: Number(start / 1_000_000n), durationMs: Math.round(elapsed / 1e6), exit }
      ring?.record(finished)
      return logged ? CallLog.line(finished) : undefined
    }
    // What `Effect.onExit` does, less the steps of an effect made and run after a call that has
    // nothing left to report (every call not logged, the usual case): two per call.
    return Effect.uninterruptibleMask((restore) =>
      Effect.matchCauseEffect(restore(call), {
        onSuccess: (value) => {
          const reported = report(Exit.succeed(value))
          return reported === undefined ? Effect.succeed(value) : Effect.as(reported, value)
        },
        onFailure: (cause) => {
          const reported = report(Exit.failCause(cause))
          return reported === undefined ? Effect.failCause(cause) : Effect.matchCauseEffect(reported, {
            onFailure: (after) => Effect.failCause(Cause.sequential(cause, after)),
            onSuccess: () => Effect.failCause(cause)
          })
        }
      })
    )
  })

/**
 * A call by the Gateway: it fills in the observation its caller brought, or, when nothing above
 * observes it (`mcpx-fx call`, embedders), observes it here for the log line and the metrics.
 */
export const withinCall = <E, R>(
  brought: Observation | undefined,
  observed: (observation: Observation) => Effect.Effect<JsonObject, E, R>,
  unobserved: () => Observation
): Effect.Effect<JsonObject, E, R> => {
  if (brought !== undefined && !brought.ended) return observed(brought)
  const own = unobserved()
  return observe({}, own, false, observed(own))
}
