/**
 * Waiting for a request's fibers to end, or for one of them to have something to say first,
 * without a fiber per wait: the fibers' own exit observers and a flag the sender raises wake one
 * suspended wait. (A race of `Fiber.await` against a Deferred forks a fiber for each side, and on
 * `/mcp` that is every call.)
 */
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"

/** Raised when a request has something to send before its response (a question, progress). */
export class Spoken {
  private readonly wakes = new Set<() => void>()
  private up = false

  get raised(): boolean {
    return this.up
  }

  /** Raises the flag, waking every wait on it; later raises do nothing. */
  raise(): void {
    if (this.up) return
    this.up = true
    for (const wake of this.wakes) wake()
    this.wakes.clear()
  }

  /** Calls `wake` when the flag is raised; answers how to stop that. */
  watch(wake: () => void): () => void {
    this.wakes.add(wake)
    return () => void this.wakes.delete(wake)
  }
}

/** Every fiber's exit, in order, once all have ended; or `undefined` as soon as `spoken` is raised. */
export const firstOf = <A, E>(
  fibers: ReadonlyArray<Fiber.RuntimeFiber<A, E>>,
  spoken: Spoken
): Effect.Effect<ReadonlyArray<Exit.Exit<A, E>> | undefined> =>
  Effect.async((resume) => {
    if (spoken.raised) return resume(Effect.succeed(undefined))
    let left = fibers.length
    let settled = false
    const finish = (value: ReadonlyArray<Exit.Exit<A, E>> | undefined) => {
      if (settled) return
      settled = true
      cleanup()
      resume(Effect.succeed(value))
    }
    const observer = () => {
      if (--left === 0) finish(fibers.map((f) => f.unsafePoll()!))
    }
    const unwatch = spoken.watch(() => finish(undefined))
    const cleanup = () => {
      unwatch()
      for (const f of fibers) f.removeObserver(observer)
    }
    if (left === 0) return finish([])
    for (const f of fibers) {
      if (settled) break
      f.addObserver(observer)
    }
    // No canceller: a wait given up on leaves its observers only until the fibers end or the flag
    // is raised (resuming a wait that is gone does nothing), and a canceller wraps every wait in
    // an interruption handler of a few operations more.
  })
