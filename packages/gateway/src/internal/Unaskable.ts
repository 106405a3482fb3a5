/**
 * A modern call whose caller declared nothing it could be asked (no elicitation, sampling or
 * roots) runs in its caller's own request, not in PendingCalls: no question can be put to such a
 * caller, so the call never needs to outlive the request with an `input_required`. That is most
 * modern calls, and the pending call's fiber, registry entry and wake-ups were a tenth of a call's
 * CPU (docs/performance.md).
 *
 * What the caller is told is what PendingCalls would tell it: a question it cannot take ends the
 * call with -32021 naming the capabilities it lacks (those of every question asked within
 * `gather` of the first, as one round would hold them), the upstream call cancelled and its
 * questions answered on the caller's behalf. A call that ends on its own first keeps its result.
 * The end comes through the pool's own abort for the call (`cutShort`), so the lane costs no fiber.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type { Abort } from "@mcpx-fx/cancel/Abortable"
import type { QuestionHandler } from "@mcpx-fx/upstream/session/Questions"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { CapabilitiesLacking, type CutShort } from "../GatewayModel.js"
import { type Asker, onBehalf } from "../PendingQuestions.js"
import { mergeRequired } from "./PendingEntry.js"

/** Runs `run` with the questions handler and the hook that lets a question end the call. */
export const unaskable = <A, E, R>(
  asker: Asker,
  /** `questions.gather`, read only when a question comes. */
  gather: Effect.Effect<Duration.DurationInput>,
  run: (questions: QuestionHandler, cutShort: CutShort) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    let abortCall: Abort<CapabilitiesLacking> | undefined
    // Set once the call is over or being ended: later questions are answered for the caller at once.
    let over = false
    const required: Array<JsonObject> = []
    const waiting: Array<() => void> = []
    const finish = () => {
      over = true
      for (const wake of waiting.splice(0)) wake()
    }
    // Each upstream call of the run (a retry's forward, say) registers in turn; ending one wakes
    // the questions waiting on it, which are then answered for the caller.
    const cutShort: CutShort = (abort) => {
      abortCall = abort
      return () => {
        if (abortCall === abort) abortCall = undefined
        for (const wake of waiting.splice(0)) wake()
      }
    }
    // The first lacking question waits `gather` for others, then ends the call; the others wait for that.
    const endCall = Effect.sync(() => {
      if (!over) abortCall?.(new CapabilitiesLacking({ requiredCapabilities: mergeRequired(required) }))
      finish()
    })
    const ended = Effect.async<void>((resume) => {
      if (over) return resume(Effect.void)
      const wake = () => resume(Effect.void)
      waiting.push(wake)
      return Effect.sync(() => {
        const at = waiting.indexOf(wake)
        if (at >= 0) waiting.splice(at, 1)
      })
    })
    const questions: QuestionHandler = (question) => {
      const take = asker.take(question)
      if (take._tag === "Answer") return Effect.succeed(take.result)
      // Nothing is put to this caller: a question it could take is not one it declared.
      if (over) return onBehalf(question)
      required.push(take._tag === "Lacking" ? take.required : {})
      const wait = required.length === 1 ? Effect.zipRight(Effect.flatMap(gather, Effect.sleep), endCall) : ended
      return Effect.zipRight(wait, onBehalf(question))
    }
    return Effect.ensuring(run(questions, cutShort), Effect.sync(finish))
  })
