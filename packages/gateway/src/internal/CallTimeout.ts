/**
 * `pool.callTimeout` for one upstream call. It bounds what the upstream takes: while the upstream
 * waits on an answer from the caller (a person filling in an elicitation, a modern host between
 * two rounds), the clock stops, so a question answered after a minute does not find its call gone.
 * A call that cannot ask pays for a plain timeout only.
 */
import type { CallContext } from "@mcpx-fx/upstream/Session"
import type { QuestionHandler } from "@mcpx-fx/upstream/Questions"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"

/** Runs `use` within `budget` of upstream time, failing with `onTimeout()` past it (the call interrupted). */
export const withCallTimeout = <C extends CallContext, A, E, T, R>(
  caller: C,
  budget: Duration.Duration,
  onTimeout: () => T,
  use: (caller: C) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | T, R> => {
  const ask = caller.questions
  if (ask === undefined) return Effect.timeoutFail(use(caller), { duration: budget, onTimeout })
  return Effect.gen(function*() {
    const budgetMs = Duration.toMillis(budget)
    let outstanding = 0
    let spent = 0
    let since = yield* Clock.currentTimeMillis
    let resumed = yield* Deferred.make<void>()

    const pause = Effect.flatMap(Clock.currentTimeMillis, (t) =>
      Effect.sync(() => {
        if (outstanding++ === 0) spent += t - since
      }))
    const unpause = Effect.flatMap(Clock.currentTimeMillis, (t) =>
      Effect.suspend(() => {
        if (--outstanding > 0) return Effect.void
        since = t
        const woken = resumed
        resumed = Deferred.unsafeMake<void>(FiberId.none)
        return Deferred.succeed(woken, undefined)
      }))
    const questions: QuestionHandler = (q) => Effect.acquireUseRelease(pause, () => ask(q), () => unpause)

    const watchdog = Effect.gen(function*() {
      for (;;) {
        if (outstanding > 0) {
          yield* Deferred.await(resumed)
          continue
        }
        const left = budgetMs - spent - ((yield* Clock.currentTimeMillis) - since)
        if (left <= 0) return yield* Effect.fail(onTimeout())
        yield* Effect.sleep(Duration.millis(left))
      }
    })
    return yield* Effect.raceFirst(use({ ...caller, questions }), watchdog)
  })
}
