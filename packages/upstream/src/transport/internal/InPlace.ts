/**
 * A call run in its caller's own fiber that can still be cut short from outside (its upstream
 * crashed, its time ran out, the process is stopping), for the one kind of call whose only wait is
 * for its answer: a request on a legacy stdio or Streamable HTTP session. `Abortable` forks a fiber per call so that
 * an abort can interrupt it wherever it waits, which was an eighth of a call's CPU; here the
 * transport says where the call waits (`waitingOn`), an abort ends that wait, and the Pool turns
 * the end back into the abort's error.
 *
 * The transport finds the call by the fiber it runs in, so a question answered in a fiber of its
 * own is never mistaken for the call. The calls are kept by fiber in a plain map, not a FiberRef:
 * setting a FiberRef copies the fiber's whole map of them, twice per call.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type { Abort } from "@mcpx-fx/cancel/Abortable"
import { Ending } from "@mcpx-fx/cancel/Ending"
import { Keyed } from "@mcpx-fx/cancel/InFlight"

/** The defect with which a cut wait ends; only the Pool that cut it ever sees it. */
export class CutInPlace extends Error {
  constructor() {
    super("a call waiting in place was cut short")
  }
}

/** What the transport sees of a call running in place. */
export interface WaitingCall {
  /** Whether the call has been cut. */
  readonly isCut: boolean
  /** The call waits on something `end` stops (at once if it was cut already); answers how to stop watching. */
  readonly waitingOn: (end: () => void) => () => void
  /**
   * `done` is run once the call is over, however it ended, before its lease goes back (at once if
   * it is over already): what runs within the call lets go of its state here (`Ending`).
   */
  readonly onEnd: (done: () => void) => void
}

/** One call running in place: its abort, and the wait an abort ends. */
export class InPlaceCall<E> extends Ending implements WaitingCall {
  private cut: { readonly error: E } | undefined
  private endWait: (() => void) | undefined

  /** Ends the call with `error`, unless it has already ended or been cut. */
  readonly abort: Abort<E> = (error) => {
    if (this.isOver || this.cut !== undefined) return
    this.cut = { error }
    const end = this.endWait
    this.endWait = undefined
    end?.()
  }

  /** The error the call was cut with, if it was. */
  get error(): { readonly error: E } | undefined {
    return this.cut
  }

  /** Whether the call has been cut. */
  get isCut(): boolean {
    return this.cut !== undefined
  }

  readonly waitingOn = (end: () => void): () => void => {
    if (this.cut !== undefined) {
      end()
      return () => {}
    }
    this.endWait = end
    return () => {
      if (this.endWait === end) this.endWait = undefined
    }
  }

  /** The call is over: later aborts change nothing, and what waited for its end is told. */
  finish(): void {
    this.endWait = undefined
    this.end()
  }
}

type AnyFiber = Fiber.RuntimeFiber<unknown, unknown>

// By the fiber's number, not the fiber: a table that churns once per call (@mcpx-fx/cancel/InFlight).
const running = new Keyed<WaitingCall>()

/** The call running in place in `fiber` (undefined when none is). */
export const inPlaceIn = (fiber: AnyFiber): WaitingCall | undefined => running.get(fiber.id().id)

/** `call` now runs in place in `fiber`; answers the call it runs within (or undefined), for `leave`. */
export const enter = (fiber: AnyFiber, call: WaitingCall): WaitingCall | undefined => {
  const key = fiber.id().id
  const outer = running.get(key)
  running.set(key, call)
  return outer
}

/** The call `enter` began is over: `fiber` is back in `outer` (or in none). */
export const leave = (fiber: AnyFiber, outer: WaitingCall | undefined): void => {
  if (outer === undefined) running.delete(fiber.id().id)
  else running.set(fiber.id().id, outer)
}

/** How many fibers have a call in place (tests: none once every call has ended). */
export const runningCount = (): number => running.size

/**
 * Runs `effect`, which may wait on what no cut in place ends (a task's polls, a sleep), so that a
 * cut still ends it: in a fiber running a call in place, `effect` runs in a fiber of its own,
 * which a cut interrupts and which is waited for (what it does when interrupted, such as
 * cancelling upstream, is done), and the call then ends as a cut wait does. Elsewhere `effect`
 * runs as it is. Rare on the call path: only a call an upstream made a task comes here.
 */
export const outOfPlace = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime<A, E, R>((fiber) => {
    const call = inPlaceIn(fiber)
    if (call === undefined) return effect
    return Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(Effect.fork(restore(effect)), (child) => {
        const letGo = call.waitingOn(() => child.unsafeInterruptAsFork(fiber.id()))
        const awaited = Effect.onInterrupt(restore(Fiber.await(child)), () => Effect.zipRight(Effect.sync(letGo), Fiber.interrupt(child)))
        return Effect.flatMap(awaited, (exit): Effect.Effect<A, E> => {
          letGo()
          return Exit.isFailure(exit) && call.isCut ? Effect.die(new CutInPlace()) : exit
        })
      })
    )
  })
