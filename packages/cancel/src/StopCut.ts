/**
 * A moment (a host's `draining`, say) cutting short everything run through it: an effect still
 * running when the moment comes is interrupted (which cancels its upstream request) and answered
 * at once with what the caller said it answers, without waiting for its cleanup (`cuttable`).
 * Effects that end first keep their own outcomes; one started after the moment is cut at once.
 *
 * One fiber per effect and a callback, not a race (which forks two). The server's HTTP host uses
 * it for the requests that never end by themselves (a listen, closed at `draining`); calls are cut
 * short by the process where their upstream call is made, at no cost per call.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import { cuttable } from "./Cuttable.js"
import { Members } from "./InFlight.js"

/** Runs `handled`, answering `cut()` instead if the moment comes first. */
export type Cut = <A, E, R>(handled: Effect.Effect<A, E, R>, cut: () => A) => Effect.Effect<A, E, R>

/** What a moment that never comes cuts: nothing, at no cost. */
export const never: Cut = (handled) => handled

/** A cut for `moment`, watching it for the scope's life. */
export const make = (moment: Effect.Effect<void>): Effect.Effect<Cut, never, Scope.Scope> =>
  Effect.gen(function*() {
    let come = false
    const waiting = new Members<() => void>()
    yield* Effect.forkScoped(Effect.zipRight(
      moment,
      Effect.sync(() => {
        come = true
        for (const stop of waiting.takeAll()) stop()
      })
    ))
    const cut: Cut = <A, E, R>(handled: Effect.Effect<A, E, R>, answer: () => A) =>
      cuttable<A, E, R, A>(handled, (abort) => {
        const stop = () => abort(Exit.succeed(answer()))
        if (come) {
          stop()
          return () => {}
        }
        return waiting.add(stop)
      })
    return cut
  })
