/**
 * The life of a pool instance after it is claimed: its start (PoolStarts.ts), its crash
 * (noteCrash) and its closing (spawnCloser, retireAll, retirePool). The Pool builds these once over
 * its Prober, its event hubs and its housekeeping fibers.
 */
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberMap from "effect/FiberMap"
import * as FiberSet from "effect/FiberSet"
import type * as PubSub from "effect/PubSub"
import * as Scope from "effect/Scope"
import { PoolError, type PoolEvent, type StopReason, type UpstreamNotification } from "../PoolEvents.js"
import type { Prober } from "../../era/Prober.js"
import type { TransportClosed } from "../../transport/Transport.js"
import { makeStarts } from "./PoolStarts.js"
import { describeClosed, type Instance, lanesOf, type LaneState, markRetiring, type ServerPool, stoppedError } from "./PoolState.js"

/** What the instance lifecycle runs on. */
export interface InstancesEnv {
  readonly prober: Context.Tag.Service<Prober>
  readonly publish: (event: PoolEvent) => Effect.Effect<boolean>
  readonly notes: PubSub.PubSub<UpstreamNotification>
  /** Closers run here rather than in a server's own fibers: stopping a pool closes its scope. */
  readonly housekeeping: FiberSet.FiberSet
}

/** The instance lifecycle over `env`. */
export const makeInstances = (env: InstancesEnv) => {
  const { housekeeping, notes, prober, publish } = env

  /** Ends the instance's calls in flight with `error`; only the first reason counts. */
  const goneWith = (inst: Instance, error: PoolError) =>
    Effect.sync(() => {
      if (inst.gone !== undefined) return
      inst.gone = error
      for (const abort of inst.users.takeAll()) abort(error)
    })

  /** Closes a marked instance in the background; `inst.stopped` completes when it is gone. */
  const spawnCloser = (pool: ServerPool, lane: LaneState, inst: Instance) =>
    FiberSet.run(
      housekeeping,
      Effect.gen(function*() {
        const reason = inst.retiring ?? "stop"
        yield* goneWith(inst, stoppedError(pool, lane, `reason: ${reason}`))
        yield* FiberMap.remove(lane.reapers, inst.id)
        if (inst.starting !== undefined) yield* Fiber.interrupt(inst.starting)
        if (inst.scope !== undefined) yield* Scope.close(inst.scope, Exit.void)
        if (inst.started !== undefined && reason !== "start-failed" && reason !== "abandoned" && reason !== "saturated") {
          const now = yield* Clock.currentTimeMillis
          yield* Effect.logInfo(`stopped ${inst.id} (${reason})`)
          yield* publish({
            type: "server.stop",
            server: pool.name,
            lane: lane.lane,
            instance: inst.id,
            key: inst.key.id,
            reason,
            calls: inst.calls,
            uptimeMs: now - (inst.startedAt ?? now),
            at: now
          })
        }
        yield* Deferred.succeed(inst.stopped, undefined)
      }).pipe(
        // Whoever marked the instance relies on this fiber to finish the job.
        Effect.uninterruptible,
        Effect.annotateLogs({ server: pool.name, lane: lane.lane })
      )
    )

  /** Retires every instance of the pool and waits until they are gone. */
  const retireAll = (pool: ServerPool, reason: StopReason) =>
    Effect.gen(function*() {
      const marked = yield* Effect.sync(() =>
        lanesOf(pool).flatMap((lane) => [...lane.instances.values()].filter((inst) => markRetiring(lane, inst, reason)).map((inst) => ({ lane, inst })))
      )
      yield* Effect.forEach(marked, ({ inst, lane }) => spawnCloser(pool, lane, inst), { discard: true })
      yield* Effect.forEach(marked, ({ inst }) => Deferred.await(inst.stopped), { discard: true })
      return marked
    })

  // A reconfigured pool serves no new caller; its instances close as soon as they are idle.
  const retirePool = (pool: ServerPool) =>
    Effect.gen(function*() {
      const idle = yield* Effect.sync(() => {
        pool.retired = true
        return lanesOf(pool).flatMap((lane) =>
          [...lane.instances.values()]
            .filter((inst) => inst.busy === 0 && markRetiring(lane, inst, "reconfigured"))
            .map((inst) => ({ lane, inst }))
        )
      })
      yield* Effect.forEach(idle, ({ inst, lane }) => spawnCloser(pool, lane, inst), { discard: true })
    })

  // --- crashes

  /** The instance's connection closed under a call or on its own: drop it, once. */
  const noteCrash = (pool: ServerPool, lane: LaneState, inst: Instance, tc: TransportClosed) =>
    Effect.gen(function*() {
      if (inst.crash !== undefined) return inst.crash
      if (inst.retiring !== undefined) return stoppedError(pool, lane, `reason: ${inst.retiring}`)
      const tail = tc.stderrTail ?? (inst.started !== undefined ? yield* inst.started.session.stderrTail : "")
      const error = new PoolError({
        server: pool.name,
        lane: lane.lane,
        reason: "crashed",
        detail: describeClosed(tc),
        stderrTail: tail
      })
      const first = yield* Effect.sync(() => {
        if (inst.crash !== undefined || inst.retiring !== undefined) return false
        inst.crash = error
        return markRetiring(lane, inst, "crash")
      })
      if (!first) return inst.crash ?? stoppedError(pool, lane, `reason: ${inst.retiring ?? "stop"}`)
      yield* goneWith(inst, error)
      yield* Effect.logWarning(error.message)
      yield* publish({
        type: "server.crash",
        server: pool.name,
        lane: lane.lane,
        instance: inst.id,
        key: inst.key.id,
        reason: error.detail,
        stderrTail: tail,
        at: yield* Clock.currentTimeMillis
      })
      yield* spawnCloser(pool, lane, inst)
      return error
    }).pipe(Effect.uninterruptible)

  const { startInstance } = makeStarts({ prober, publish, notes, spawnCloser, noteCrash })

  return { spawnCloser, retireAll, retirePool, noteCrash, startInstance }
}
