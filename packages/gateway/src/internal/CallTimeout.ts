/**
 * `pool.callTimeout` for one upstream call. It bounds what the upstream takes: while the upstream
 * waits on an answer from the caller (a person filling in an elicitation, a modern host between
 * two rounds), the clock stops, so a question answered after a minute does not find its call gone.
 *
 * The budget is a deadline on the gateway's shared timer (`Deadlines`), disarmed while a question
 * is outstanding and armed again with what is left, and the call is cut short through the pool's
 * `cutShort` (no fiber of its own per call, where a race against a watchdog forks two).
 */
import type { Abort, AbortHook } from "@mcpx-fx/cancel/Abortable"
import type { QuestionHandler } from "@mcpx-fx/upstream/session/Questions"
import type { CallContext } from "@mcpx-fx/upstream/session/SessionModel"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Deadlines from "./Deadlines.js"

/** A call's budget: the caller to make the call with, and the hook that arms it for the pool. */
export interface CallDeadline<C, T> {
  /** `caller` with its questions paused off the clock. */
  readonly caller: C
  /** Arms the budget for a call `abort` can end; answers how to disarm it. */
  readonly cutShort: AbortHook<T>
}

/** The budget of one call of `caller`, past which it is ended with `onTimeout()`. */
export const callDeadline = <C extends CallContext, T>(
  deadlines: Deadlines.Deadlines,
  caller: C,
  budget: Duration.Duration,
  onTimeout: () => T
): CallDeadline<C, T> => {
  const kept = new Budget(deadlines, Duration.toMillis(budget), onTimeout)
  const ask = caller.questions
  if (ask === undefined) return { caller, cutShort: kept.cutShort }
  const questions: QuestionHandler = (q) => Effect.acquireUseRelease(Effect.sync(() => kept.pause()), () => ask(q), () => Effect.sync(() => kept.unpause()))
  return { caller: { ...caller, questions }, cutShort: kept.cutShort }
}

/** One call's budget as it is spent: one object per call, what a question needs made when one comes. */
class Budget<T> {
  private abortCall: Abort<T> | undefined = undefined
  private disarm: (() => void) | undefined = undefined
  private outstanding = 0
  private spent = 0
  private since = 0

  constructor(private readonly deadlines: Deadlines.Deadlines, private readonly budgetMs: number, private readonly onTimeout: () => T) {}

  private arm(): void {
    const call = this.abortCall
    if (call !== undefined) this.disarm = this.deadlines.add(this.budgetMs - this.spent, () => call(this.onTimeout()))
  }

  private stop(): void {
    this.disarm?.()
    this.disarm = undefined
  }

  readonly cutShort = (abort: Abort<T>): () => void => {
    this.abortCall = abort
    this.since = this.deadlines.now()
    if (this.outstanding === 0) this.arm()
    return () => {
      this.stop()
      this.abortCall = undefined
    }
  }

  pause(): void {
    if (this.outstanding++ > 0) return
    this.spent += this.deadlines.now() - this.since
    this.stop()
  }

  unpause(): void {
    if (--this.outstanding > 0) return
    this.since = this.deadlines.now()
    this.arm()
  }
}
