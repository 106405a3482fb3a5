/**
 * A call that can be cut short from outside with a typed error: its upstream crashed, it ran out
 * of time, the host turned out unable to answer it. The call runs in one fiber of its own and
 * whoever holds `abort` ends it at once with their error — the call is interrupted (so its
 * finalizers cancel the upstream request) and waited for, as a race would.
 *
 * It exists because a race forks a fiber for each side and a timeout forks two, on every call; here
 * the reasons register a callback instead (a pool instance's crash, a shared deadline timer), and
 * the call costs one fiber however many reasons it has.
 *
 * The contract (docs/cancellation.md; cancel/test/Abortable.property.test.ts), kept too by the
 * in-place twin for calls with no fiber of their own (upstream/src/transport/internal/InPlace.ts):
 * - exactly one outcome, decided by whatever comes first;
 * - a call that ended on its own before any abort keeps its outcome, even if an abort comes in
 *   the same instant;
 * - otherwise the first abort's error is the outcome; later aborts and a later interruption of
 *   the caller change nothing;
 * - an abort or the caller's interruption interrupts the call, so its finalizers (which cancel the
 *   upstream request) run, exactly once; a call that ended on its own is not interrupted;
 * - when the caller has its outcome, the call's fiber has ended.
 * Arming and disarming the reasons (`AbortHook`) is the registrar's part: Pool.withSession arms
 * them as the call begins and lets go of them as it ends.
 *
 * Its sibling `Cuttable.cuttable` keeps the same contract but one rule: an abort answers the
 * caller at once and the call's cleanup runs on after it, for a caller that must not wait on it.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"

/** Ends the call with `error`, unless it has already ended or been aborted. */
export type Abort<E> = (error: E) => void

/**
 * A reason a call can be cut short for (a deadline, a question the caller cannot take): given the
 * call's `abort`, it arms itself and answers how to disarm it when the call ends first. Every
 * cancellation hook on a call has this one shape.
 */
export type AbortHook<E> = (abort: Abort<E>) => () => void

/** Runs `use` in a fiber that `abort` ends with its error. Interrupting the caller interrupts the call. */
export const abortable = <A, E, R, E2 = never>(
  use: (abort: Abort<E2>) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | E2, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.suspend(() => {
      let aborted: { readonly error: E2 } | undefined
      let wake: (() => void) | undefined
      const abort: Abort<E2> = (error) => {
        if (aborted !== undefined) return
        aborted = { error }
        wake?.()
      }
      return Effect.flatMap(Effect.fork(restore(use(abort))), (fiber) => {
        const settled = Effect.async<void>((resume) => {
          const done = () => {
            wake = undefined
            fiber.removeObserver(done)
            resume(Effect.void)
          }
          if (aborted !== undefined) return resume(Effect.void)
          wake = done
          fiber.addObserver(done)
          return Effect.sync(() => {
            wake = undefined
            fiber.removeObserver(done)
          })
        })
        return restore(settled).pipe(
          Effect.onInterrupt(() => Fiber.interrupt(fiber)),
          Effect.flatMap((): Effect.Effect<A, E | E2> => {
            const exit = fiber.unsafePoll()
            // Ended on its own first: its outcome stands, even if an abort came after.
            if (exit !== null) return Effect.zipRight(fiber.inheritAll, exit)
            return Effect.zipRight(Fiber.interrupt(fiber), Effect.fail(aborted!.error))
          })
        )
      })
    })
  )
