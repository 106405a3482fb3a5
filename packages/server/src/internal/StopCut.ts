/**
 * A moment of a stop (`draining`, `stopping`) cutting requests short: a request still running when
 * it comes is interrupted (which cancels it upstream) and answered at once with what the moment
 * says, without waiting for its cleanup. Requests that end first keep their own answers.
 *
 * One fiber per request and a callback, not a race (which forks two). The HTTP host uses it for
 * the requests that never end by themselves (a listen, closed at `draining`); calls are cut short
 * by the process where their upstream call is made, at no cost per call.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"

/** Runs `handled`, answering `cut()` instead if the moment comes first. */
export type Cut = <A, E, R>(handled: Effect.Effect<A, E, R>, cut: () => A) => Effect.Effect<A, E, R>

/** What a moment that never comes cuts: nothing, at no cost. */
export const never: Cut = (handled) => handled

/** A cut for `moment`, watching it for the scope's life. */
export const make = (moment: Effect.Effect<void>): Effect.Effect<Cut, never, Scope.Scope> =>
  Effect.gen(function*() {
    let come = false
    const waiting = new Set<() => void>()
    yield* Effect.forkScoped(Effect.zipRight(
      moment,
      Effect.sync(() => {
        come = true
        const all = [...waiting]
        waiting.clear()
        for (const cut of all) cut()
      })
    ))
    const cut: Cut = <A, E, R>(handled: Effect.Effect<A, E, R>, answer: () => A) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(Effect.fork(restore(handled)), (fiber) =>
          restore(Effect.async<A, E>((resume) => {
            const cleanup = () => {
              fiber.removeObserver(done)
              waiting.delete(stop)
            }
            const done = (exit: Exit.Exit<A, E>) => {
              cleanup()
              resume(exit)
            }
            const stop = () => {
              cleanup()
              fiber.unsafeInterruptAsFork(FiberId.none)
              resume(Effect.succeed(answer()))
            }
            if (come) return stop()
            waiting.add(stop)
            fiber.addObserver(done)
            return Effect.sync(cleanup)
          })).pipe(Effect.onInterrupt(() => Fiber.interrupt(fiber))))
      )
    return cut
  })
