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
 *
 * A call asks nothing of its caller nearly always, so what it costs is kept to one object made
 * as it begins; what a question needs is made when one comes.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type { Abort } from "@mcpx-fx/cancel/Abortable"
import type { Ending } from "@mcpx-fx/cancel/Ending"
import type { QuestionHandler } from "@mcpx-fx/upstream/session/Questions"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { CapabilitiesLacking, type CutShort } from "../GatewayModel.js"
import { type Asker, onBehalf } from "../PendingQuestions.js"
import { mergeRequired } from "./PendingEntry.js"

/**
 * Runs `run` with the questions handler and the hook that lets a question end the call. `ends`,
 * when given, tells the run's end to what observes the whole call (the tool call's observation),
 * in place of a finalizer of its own: an uninterruptible stretch of Effect operations per call.
 */
export const unaskable = <A, E, R>(
  asker: Asker,
  /** `questions.gather`, read only when a question comes. */
  gather: Effect.Effect<Duration.DurationInput>,
  run: (questions: QuestionHandler, cutShort: CutShort) => Effect.Effect<A, E, R>,
  ends?: Ending
): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const unasked = new Unasked(asker, gather)
    const running = run(unasked.questions, unasked.cutShort)
    if (ends === undefined) return Effect.ensuring(running, Effect.sync(() => unasked.finish()))
    ends.onEnd(() => unasked.finish())
    return running
  })

/** One run's state: the upstream call now running, and the questions it asked. */
class Unasked {
  private abortCall: Abort<CapabilitiesLacking> | undefined = undefined
  // Set once the call is over or being ended: later questions are answered for the caller at once.
  private over = false
  private required: Array<JsonObject> | undefined = undefined
  private waiting: Array<() => void> | undefined = undefined

  constructor(private readonly asker: Asker, private readonly gather: Effect.Effect<Duration.DurationInput>) {}

  finish(): void {
    this.over = true
    this.wakeAll()
  }

  private wakeAll(): void {
    const waiting = this.waiting
    this.waiting = undefined
    if (waiting !== undefined) { for (const wake of waiting) wake() }
  }

  // Each upstream call of the run (a retry's forward, say) registers in turn; ending one wakes
  // the questions waiting on it, which are then answered for the caller.
  readonly cutShort: CutShort = (abort) => {
    this.abortCall = abort
    return () => {
      if (this.abortCall === abort) this.abortCall = undefined
      this.wakeAll()
    }
  }

  // The first lacking question waits `gather` for others, then ends the call; the others wait for that.
  private endCall(): Effect.Effect<void> {
    return Effect.sync(() => {
      if (!this.over) this.abortCall?.(new CapabilitiesLacking({ requiredCapabilities: mergeRequired(this.required ?? []) }))
      this.finish()
    })
  }

  private ended(): Effect.Effect<void> {
    return Effect.async<void>((resume) => {
      if (this.over) return resume(Effect.void)
      const wake = () => resume(Effect.void)
      const waiting = this.waiting ??= []
      waiting.push(wake)
      return Effect.sync(() => {
        const at = waiting.indexOf(wake)
        if (at >= 0) waiting.splice(at, 1)
      })
    })
  }

  readonly questions: QuestionHandler = (question) => {
    const take = this.asker.take(question)
    if (take._tag === "Answer") return Effect.succeed(take.result)
    // Nothing is put to this caller: a question it could take is not one it declared.
    if (this.over) return onBehalf(question)
    const required = this.required ??= []
    required.push(take._tag === "Lacking" ? take.required : {})
    const wait = required.length === 1 ? Effect.zipRight(Effect.flatMap(this.gather, Effect.sleep), this.endCall()) : this.ended()
    return Effect.zipRight(wait, onBehalf(question))
  }
}
