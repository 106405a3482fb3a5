/**
 * One log line per tool call at `info` (`--log-level info`): who called, which tool on which
 * server and era, how long it took and how it ended, as the line's annotations (`--log-format
 * json` makes each a field). Below `info` nothing is built: the hot path pays one level check.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as LogLevel from "effect/LogLevel"
import * as Cause from "effect/Cause"
import * as Option from "effect/Option"
import type { Caller } from "../GatewayModel.js"

/** What a call's line says besides its outcome. */
export interface CallFields {
  readonly caller: Caller
  readonly tool: string
  readonly server: string
  /** The upstream's era, once a session was chosen. */
  readonly era: () => string | undefined
}

const outcomeOf = (exit: Exit.Exit<JsonObject, { readonly _tag: string }>): string => {
  if (Exit.isSuccess(exit)) {
    const result = exit.value
    return result.resultType === "input_required" ? "input_required" : result.isError === true ? "tool_error" : "ok"
  }
  if (Cause.isInterruptedOnly(exit.cause)) return "cancelled"
  return Option.match(Cause.failureOption(exit.cause), { onNone: () => "defect", onSome: (e) => e._tag })
}

/** `effect` (a tool call), logged once it ends when the minimum log level lets `info` through. */
export const logged = (fields: CallFields) =>
<E extends { readonly _tag: string }, R>(effect: Effect.Effect<JsonObject, E, R>): Effect.Effect<JsonObject, E, R> =>
  Effect.flatMap(FiberRef.get(FiberRef.currentMinimumLogLevel), (minimum) => {
    if (LogLevel.greaterThan(minimum, LogLevel.Info)) return effect
    return Effect.gen(function*() {
      const began = yield* Clock.currentTimeMillis
      const exit = yield* Effect.exit(effect)
      const ms = (yield* Clock.currentTimeMillis) - began
      const outcome = outcomeOf(exit)
      const era = fields.era()
      yield* Effect.logInfo(`tools/call ${fields.tool} ${outcome} in ${ms}ms`).pipe(
        Effect.annotateLogs({
          caller: fields.caller.sessionId ?? "anonymous",
          ...(fields.caller.revision === undefined ? {} : { revision: fields.caller.revision }),
          method: "tools/call",
          tool: fields.tool,
          server: fields.server,
          ...(era === undefined ? {} : { era }),
          durationMs: ms,
          outcome
        })
      )
      return yield* exit
    })
  })
