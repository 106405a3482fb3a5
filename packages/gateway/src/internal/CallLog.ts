/**
 * The log line of one tool call at `info` (`--log-level info`): who called, which tool on which
 * server and era, how long it took and how it ended, as the line's annotations (`--log-format
 * json` makes each a field). Made from the call's one observation (CallObserver.ts), which builds
 * nothing for it when `info` is below the minimum level.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type { ObservedCall } from "../CallObservation.js"

const tagOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" ? error._tag : "error"

/** How a call ended, as its line says it. */
export const outcomeOf = (exit: Exit.Exit<JsonObject, unknown>): string => {
  if (Exit.isSuccess(exit)) {
    const result = exit.value
    return result.resultType === "input_required" ? "input_required" : result.isError === true ? "tool_error" : "ok"
  }
  if (Cause.isInterruptedOnly(exit.cause)) return "cancelled"
  return Option.match(Cause.failureOption(exit.cause), { onNone: () => "defect", onSome: tagOf })
}

/** The line of a call that has ended. */
export const line = (call: ObservedCall): Effect.Effect<void> => {
  const { durationMs, exit, observation: o } = call
  const outcome = outcomeOf(exit)
  return Effect.logInfo(`tools/call ${o.tool} ${outcome} in ${durationMs}ms`).pipe(
    Effect.annotateLogs({
      caller: o.sessionId ?? "anonymous",
      ...(o.revision === undefined ? {} : { revision: o.revision }),
      method: "tools/call",
      tool: o.tool,
      ...(o.server === undefined ? {} : { server: o.server }),
      ...(o.era === undefined ? {} : { era: o.era }),
      durationMs,
      outcome
    })
  )
}
