/**
 * A call that can be cut short from outside and answered at once, without waiting for its
 * cleanup: the sibling of `abortable` for a caller that must answer now (a host stopping, whose
 * listens are to be closed while their upstream cancels run on). The call runs in one fiber of its
 * own; the hook's abort hands the caller an outcome (`Exit`: a value or an error) at once and
 * interrupts the call without waiting for it, so its finalizers run after the answer.
 *
 * The contract (docs/cancellation.md; cancel/test/Cuttable.property.test.ts) is `abortable`'s but
 * for the last rule:
 * - exactly one outcome, decided by whatever comes first;
 * - a call that ended on its own before any abort keeps its outcome;
 * - otherwise the first abort's outcome is the caller's; later aborts change nothing;
 * - an abort or the caller's interruption interrupts the call, so its finalizers run, exactly
 *   once; a call that ended on its own is not interrupted;
 * - the hook is armed as the call begins and let go of exactly once, when the call ends, is cut
 *   or its caller is interrupted;
 * - an abort answers the caller before the call's cleanup is done; the caller's interruption still
 *   waits for it. The call stays a child of the caller's fiber, which (as every Effect fiber) does
 *   not itself end before its children: the cleanup is never orphaned.
 */
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import type { AbortHook } from "./Abortable.js"

/**
 * Runs `handled` in a fiber that `hook`'s abort cuts short with the outcome it is given: the caller
 * has that outcome at once, and the call is interrupted without being waited for. Interrupting the
 * caller interrupts the call and waits for it.
 */
export const cuttable = <A, E, R, A2 = never, E2 = never>(
  handled: Effect.Effect<A, E, R>,
  hook: AbortHook<Exit.Exit<A2, E2>>
): Effect.Effect<A | A2, E | E2, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(Effect.fork(restore(handled)), (fiber) =>
      restore(Effect.async<A | A2, E | E2>((resume) => {
        let over = false
        let letGo: (() => void) | undefined
        const end = () => {
          over = true
          fiber.removeObserver(done)
          const disarm = letGo
          letGo = undefined
          disarm?.()
        }
        const done = (exit: Exit.Exit<A, E>) => {
          if (over) return
          end()
          // Ended on its own first: its outcome stands, with what it set in its fiber.
          resume(Effect.zipRight(fiber.inheritAll, exit))
        }
        const abort = (outcome: Exit.Exit<A2, E2>) => {
          if (over) return
          // An abort in the instant the call ended on its own, before its observer ran: the call's outcome stands.
          const own = fiber.unsafePoll()
          if (own !== null) return done(own)
          end()
          fiber.unsafeInterruptAsFork(FiberId.none)
          resume(outcome)
        }
        // An observer added to a fiber that has ended runs at once: then the hook is never armed.
        fiber.addObserver(done)
        if (!over) letGo = hook(abort)
        // Cut while being armed: `end` ran before there was anything to let go of.
        if (over) {
          const disarm = letGo
          letGo = undefined
          disarm?.()
        }
        return Effect.sync(end)
      })).pipe(Effect.onInterrupt(() => Fiber.interrupt(fiber))))
  )
