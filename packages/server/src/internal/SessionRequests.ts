/**
 * A host connection's requests in flight (a legacy HTTP session's, a stdio connection's), by
 * JSON-RPC id: what a duplicate id is refused against, what `notifications/cancelled` interrupts,
 * what a drain waits for, and what the end of the session interrupts and waits for. A request
 * runs either in a fiber of its own (one that may speak before its reply and so must outlive the
 * POST's answer) or in place, in the POST's own fiber, which is then what a cancellation
 * interrupts; an in-place request is registered only while it runs, so that nothing interrupts
 * the POST once it is writing its reply.
 */
import { Keyed, Members } from "@mcpx-fx/cancel/InFlight"
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"

export interface SessionRequests {
  readonly has: (id: JsonRpc.RequestId) => boolean
  readonly size: () => number
  /**
   * Runs `effect` under `id` in a fiber of its own, not the caller's child, removed once it ends.
   * Once the session has ended the fiber is interrupted before it starts.
   */
  readonly fork: <A>(id: JsonRpc.RequestId, effect: Effect.Effect<A>) => Effect.Effect<Fiber.RuntimeFiber<A>>
  /**
   * Runs `effect` under `id` in the calling fiber. If a cancellation or the session's end
   * interrupts it (or the session has already ended), the fiber ends with `cancelled` instead,
   * run uninterruptibly: the caller's way of still answering its client.
   */
  readonly inPlace: <A>(id: JsonRpc.RequestId, effect: Effect.Effect<A>, cancelled: Effect.Effect<never>) => Effect.Effect<A>
  /** Interrupts the request under `id` (when there is one) and waits for it to end. */
  readonly cancel: (id: JsonRpc.RequestId) => Effect.Effect<void>
  /** Completes once no request is in flight (at once when none is). */
  readonly awaitEmpty: Effect.Effect<void>
  /** Interrupts every request in flight and waits for them; later requests run as before. */
  readonly cancelAll: Effect.Effect<void>
}

/** A registry that ends with `scope`, interrupting and awaiting what is still in flight. */
export const make: Effect.Effect<SessionRequests, never, Scope.Scope> = Effect.suspend(() => {
  // Not a Map: a session lives long and this churns once per request (@mcpx-fx/cancel/InFlight).
  const live = new Keyed<Fiber.RuntimeFiber<unknown>>()
  // Who waits for the registry to empty (awaitEmpty); woken as the last request leaves.
  const emptied = new Members<() => void>()
  let closed = false
  const wakeIfEmpty = () => {
    if (live.size === 0) { for (const wake of emptied.takeAll()) wake() }
  }
  const drop = (id: JsonRpc.RequestId, fiber: Fiber.RuntimeFiber<unknown>) => {
    if (live.get(id) === fiber) {
      live.delete(id)
      wakeIfEmpty()
    }
  }
  const interrupt = (fiber: Fiber.RuntimeFiber<unknown>) => Effect.asVoid(Fiber.interrupt(fiber))
  const interruptAll = (fibers: ReadonlyArray<Fiber.RuntimeFiber<unknown>>) => Effect.forEach(fibers, interrupt, { concurrency: "unbounded", discard: true })

  const registry: SessionRequests = {
    has: (id) => live.has(id),
    size: () => live.size,
    fork: (id, effect) =>
      Effect.suspend(() =>
        Effect.map(Effect.forkDaemon(closed ? Effect.interrupt : effect), (fiber) => {
          if (!closed) {
            live.set(id, fiber)
            fiber.addObserver(() => drop(id, fiber))
          }
          return fiber
        })
      ),
    inPlace: (id, effect, cancelled) =>
      Effect.withFiberRuntime((fiber) => {
        if (closed) return cancelled
        live.set(id, fiber)
        return Effect.uninterruptibleMask((restore) =>
          Effect.matchCauseEffect(restore(effect), {
            onFailure: (cause) => {
              drop(id, fiber)
              return Cause.isInterruptedOnly(cause) ? cancelled : Effect.failCause(cause)
            },
            onSuccess: (value) => {
              drop(id, fiber)
              return Effect.succeed(value)
            }
          })
        )
      }),
    cancel: (id) =>
      Effect.suspend(() => {
        const fiber = live.get(id)
        return fiber === undefined ? Effect.void : interrupt(fiber)
      }),
    awaitEmpty: Effect.async<void>((resume) => {
      if (live.size === 0) return resume(Effect.void)
      return Effect.sync(emptied.add(() => resume(Effect.void)))
    }),
    cancelAll: Effect.suspend(() => interruptAll(live.values()))
  }
  return Effect.as(
    Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closed = true
        const fibers = live.values()
        live.clear()
        wakeIfEmpty()
        return interruptAll(fibers)
      })
    ),
    registry
  )
})
