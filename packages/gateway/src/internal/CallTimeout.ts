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
  const budgetMs = Duration.toMillis(budget)
  let abortCall: Abort<T> | undefined
  let disarm: (() => void) | undefined
  let outstanding = 0
  let spent = 0
  let since = 0
  const arm = () => {
    const call = abortCall
    if (call !== undefined) disarm = deadlines.add(budgetMs - spent, () => call(onTimeout()))
  }
  const stop = () => {
    disarm?.()
    disarm = undefined
  }
  const cutShort = (abort: Abort<T>) => {
    abortCall = abort
    since = deadlines.now()
    if (outstanding === 0) arm()
    return () => {
      stop()
      abortCall = undefined
    }
  }
  const ask = caller.questions
  if (ask === undefined) return { caller, cutShort }
  const pause = Effect.sync(() => {
    if (outstanding++ > 0) return
    spent += deadlines.now() - since
    stop()
  })
  const unpause = Effect.sync(() => {
    if (--outstanding > 0) return
    since = deadlines.now()
    arm()
  })
  const questions: QuestionHandler = (q) => Effect.acquireUseRelease(pause, () => ask(q), () => unpause)
  return { caller: { ...caller, questions }, cutShort }
}
