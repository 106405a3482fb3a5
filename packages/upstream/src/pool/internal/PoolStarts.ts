/**
 * How a claimed pool instance starts: its permit (grant), the wait for it bounded by startTimeout,
 * the start through the Prober, and what follows either way (started: its notifications, listen
 * and crash watcher, in the instance's scope; startFailed: its cooldown and its callers told).
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import { PoolError, type PoolEvent, type UpstreamNotification } from "../PoolEvents.js"
import type { Prober } from "../../era/Prober.js"
import type { ProbeOptions, Started } from "../../era/ProbeModel.js"
import type { TransportClosed } from "../../transport/Transport.js"
import { formatMs } from "../../internal/formatMs.js"
import { handOverParked, ParkedCheckEvery } from "./PoolParked.js"
import {
  coolingError,
  errorMessage,
  errorTag,
  type Instance,
  type LaneState,
  listenFilter,
  markRetiring,
  refusalTags,
  retryIn,
  type ServerPool,
  StartTimedOut,
  starved,
  stoppedError
} from "./PoolState.js"

/** What starting instances runs on. */
export interface StartsEnv {
  readonly prober: Context.Tag.Service<Prober>
  readonly publish: (event: PoolEvent) => Effect.Effect<boolean>
  readonly notes: PubSub.PubSub<UpstreamNotification>
  /** Closes a marked instance in the background. */
  readonly spawnCloser: (pool: ServerPool, lane: LaneState, inst: Instance) => Effect.Effect<unknown>
  /** Drops an instance whose connection closed, once. */
  readonly noteCrash: (pool: ServerPool, lane: LaneState, inst: Instance, tc: TransportClosed) => Effect.Effect<PoolError>
}

/** Starting instances over `env`. */
export const makeStarts = (env: StartsEnv) => {
  const { noteCrash, notes, prober, publish, spawnCloser } = env

  const startFailed = (pool: ServerPool, lane: LaneState, inst: Instance, error: unknown) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const reason = errorMessage(error)
      const refused = lane.lane === "legacy" && refusalTags.has(errorTag(error) ?? "")
      const failure = yield* Effect.sync((): PoolError | undefined => {
        if (!markRetiring(lane, inst, "start-failed")) return undefined
        if (refused) {
          pool.legacyRefused = reason
          return new PoolError({
            server: pool.name,
            lane: lane.lane,
            reason: "start-failed",
            detail: `${reason} (remembered until the pool restarts)`
          })
        }
        // A login happens elsewhere (`mcpx-fx auth login`), and the next call must see it at once.
        if (errorTag(error) === "AuthorizationRequired") {
          return new PoolError({ server: pool.name, lane: lane.lane, reason: "start-failed", detail: reason, authorizationRequired: true })
        }
        lane.failures += 1
        const retryInMs = Math.min(pool.settings.cooldownBaseMs * 2 ** (lane.failures - 1), pool.settings.cooldownCapMs)
        lane.cooldown = { until: now + retryInMs, reason, retryInMs }
        return new PoolError({ server: pool.name, lane: lane.lane, reason: "start-failed", detail: reason, ...retryIn(pool, retryInMs) })
      })
      // Retired while starting: its callers learn that it was stopped.
      if (failure === undefined) return
      if (refused) {
        yield* Effect.logWarning(
          `the legacy-only session was refused (${reason}); legacy callers share the server's own session from now on`
        )
      } else if (pool.oneShot) yield* Effect.logDebug(`start failed (${reason})`)
      else yield* Effect.logWarning(`start failed (${reason}); next attempt in ${formatMs(failure.retryInMs ?? 0)}`)
      yield* publish({
        type: "server.start.failed",
        server: pool.name,
        lane: lane.lane,
        key: inst.key.id,
        reason,
        failures: lane.failures,
        ...(failure.retryInMs !== undefined ? { retryInMs: failure.retryInMs } : {}),
        at: now
      })
      yield* Deferred.fail(inst.ready, failure)
      yield* spawnCloser(pool, lane, inst)
    }).pipe(Effect.uninterruptible)

  const started = (pool: ServerPool, lane: LaneState, inst: Instance, scope: Scope.Scope, result: Started, began: number) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const { report, session } = result
      const evict = yield* Effect.sync(() => {
        inst.started = result
        inst.startedAt = now
        lane.failures = 0
        lane.cooldown = undefined
        lane.lastReport = report
        if (lane.lane === "modern") pool.settledEra = report.era
        // Its callers have all left, and another key waits for its permit.
        return inst.busy === 0 && starved(lane) && markRetiring(lane, inst, "evicted")
      })
      yield* Effect.logInfo(
        `started ${inst.id} for ${inst.key.id}: ${report.era} ${report.negotiated} (${report.eraSource}) in ${now - began}ms`
      )
      // In place before the first caller gets the session, so nothing a call causes is missed.
      const untied = yield* Scope.extend(session.subscribe, scope)
      yield* Queue.take(untied).pipe(
        Effect.flatMap((notification) => PubSub.publish(notes, { server: pool.name, lane: lane.lane, instance: inst.id, key: inst.key.id, notification })),
        Effect.forever,
        Effect.interruptible,
        Effect.forkIn(scope)
      )
      // A modern upstream tells of list changes only on a subscriptions/listen, held open for the
      // instance's life; a legacy one sends them unasked. Its notifications join the untied ones.
      const filter = listenFilter(session)
      if (filter !== undefined) {
        yield* session.request(Method.SubscriptionsListen, { notifications: filter }).pipe(
          Effect.catchAll((e) => Effect.logDebug(`${inst.id}: subscriptions/listen ended: ${e.message}`)),
          Effect.interruptible,
          Effect.forkIn(scope)
        )
      }
      yield* Deferred.succeed(inst.ready, result)
      inst.serving = result
      yield* publish({
        type: "server.start",
        server: pool.name,
        lane: lane.lane,
        instance: inst.id,
        key: inst.key.id,
        era: report.era,
        negotiated: report.negotiated,
        eraSource: report.eraSource,
        wire: report.wire,
        durationMs: now - began,
        at: now
      })
      if (report.stale && Option.isSome(report.cached)) {
        yield* publish({
          type: "server.era.stale",
          server: pool.name,
          instance: inst.id,
          cached: report.cached.value.era,
          cachedVersion: report.cached.value.version,
          cachedAt: report.cached.value.at,
          era: report.era,
          negotiated: report.negotiated,
          at: now
        })
      }
      // A process that initialize settled may still answer its discover; the cache is then
      // rewritten, and that is told like any other stale era.
      yield* result.lateEra.pipe(
        Effect.flatMap(({ cached, found }) =>
          Effect.flatMap(Clock.currentTimeMillis, (at) =>
            publish({
              type: "server.era.stale",
              server: pool.name,
              instance: inst.id,
              cached: cached.era,
              cachedVersion: cached.version,
              cachedAt: cached.at,
              era: found.era,
              negotiated: found.version,
              at
            }))
        ),
        Effect.interruptible,
        Effect.forkIn(scope)
      )
      // The watcher lives in the instance's scope, so a deliberate close ends it before the
      // connection reports being closed.
      yield* session.closed.pipe(
        Effect.flatMap((tc) => noteCrash(pool, lane, inst, tc)),
        Effect.interruptible,
        Effect.forkIn(scope)
      )
      if (evict) yield* spawnCloser(pool, lane, inst)
    }).pipe(Effect.uninterruptible)

  /**
   * Hands free permits to queued instances, oldest first. A permit is the instance's scope, made
   * and recorded here in one uninterruptible step that no waiting fiber takes part in, so however
   * a start is interrupted, the permit has an owner whose closing gives it back (and passes it on).
   */
  const grant = (pool: ServerPool, lane: LaneState): Effect.Effect<void> =>
    Effect.gen(function*() {
      while (!pool.stopped && lane.queued.size > 0 && lane.holders.size < pool.settings.max) {
        let holder: Instance | undefined
        let closed = false
        const scope = yield* Scope.fork(pool.scope, ExecutionStrategy.sequential)
        // Added first, so it runs last: the permit returns once the process is gone.
        yield* Scope.addFinalizer(
          scope,
          Effect.suspend(() => {
            closed = true
            if (holder === undefined) return Effect.void
            lane.holders.delete(holder)
            lane.retiring.delete(holder)
            return grant(pool, lane)
          })
        )
        // A scope forked from a closed one is closed already: the pool is going away.
        if (closed) return
        holder = yield* Effect.sync(() => {
          const next = lane.queued.values().next()
          if (next.done === true || pool.stopped || lane.holders.size >= pool.settings.max) return undefined
          lane.queued.delete(next.value)
          lane.holders.add(next.value)
          next.value.scope = scope
          return next.value
        })
        if (holder === undefined) return yield* Scope.close(scope, Exit.void)
        yield* Deferred.succeed(holder.permitted, undefined)
      }
    }).pipe(Effect.uninterruptible)

  /**
   * Waits for a permit, at most startTimeout. A lane held by calls parked on callers who walked
   * away hands one of their instances over (PoolParked.ts), looked for now and every
   * ParkedCheckEvery after: a call becomes parked without telling the pool.
   */
  const awaitPermit = (pool: ServerPool, lane: LaneState, inst: Instance) =>
    Effect.gen(function*() {
      const until = (yield* Clock.currentTimeMillis) + pool.settings.startMs
      for (;;) {
        if (inst.scope !== undefined) return
        yield* handOverParked(lane, inst)
        const left = until - (yield* Clock.currentTimeMillis)
        if (left <= 0) return
        const permitted = yield* Deferred.await(inst.permitted).pipe(Effect.timeoutOption(Math.min(left, ParkedCheckEvery)))
        if (Option.isSome(permitted)) return
      }
    })

  /**
   * Waits for a permit (bounded by startTimeout: the lane is saturated), then starts the session.
   * Forked from a claim, which runs with interruption masked: the work is made interruptible
   * inside the `ensuring`, so even a start interrupted before its first step tells its callers.
   */
  const startInstance = (pool: ServerPool, lane: LaneState, inst: Instance) =>
    Effect.interruptible(Effect.gen(function*() {
      yield* grant(pool, lane)
      yield* awaitPermit(pool, lane, inst)
      const scope = yield* Effect.uninterruptible(Effect.gen(function*() {
        // Read from the instance rather than the wait: a permit granted as the wait timed out is kept.
        if (inst.scope !== undefined) return inst.scope
        // Retired while it waited: whoever retired it closes it.
        if (!markRetiring(lane, inst, "saturated")) return undefined
        const busy = [...lane.instances.values()].filter((i) => i.busy > 0 && i !== inst).map((i) => i.key.id)
        const error = new PoolError({
          server: pool.name,
          lane: lane.lane,
          reason: "saturated",
          detail: `the ${lane.lane} lane is saturated: its ${pool.settings.max} instance(s) stayed busy for ${formatMs(pool.settings.startMs)}${
            busy.length > 0 ? ` (${busy.join(", ")})` : ""
          }`
        })
        yield* Deferred.fail(inst.ready, error)
        yield* Deferred.succeed(inst.stopped, undefined)
        return undefined
      }))
      if (scope === undefined) return
      const began = yield* Clock.currentTimeMillis
      // A start failed while this key waited for its permit.
      const cooling = coolingError(pool, lane, began)
      if (Option.isSome(cooling)) {
        return yield* Effect.uninterruptible(Effect.gen(function*() {
          if (!markRetiring(lane, inst, "start-failed")) return
          yield* Deferred.fail(inst.ready, cooling.value)
          yield* spawnCloser(pool, lane, inst)
        }))
      }
      const reprobe = lane.reprobe
      lane.reprobe = false
      const options: ProbeOptions = lane.lane === "legacy"
        ? { ...pool.server.probe, preference: "force-initialize", lane: "legacy" }
        : reprobe
        ? { ...pool.server.probe, distrustCache: true, lane: "modern" }
        : { ...pool.server.probe, lane: "modern" }
      const exit = yield* prober.start(pool.server.definition, options).pipe(
        Scope.extend(scope),
        Effect.timeoutFail({
          duration: pool.settings.startMs,
          onTimeout: () => new StartTimedOut(`it did not start within ${formatMs(pool.settings.startMs)}`)
        }),
        Effect.exit
      )
      if (Exit.isSuccess(exit)) return yield* started(pool, lane, inst, scope, exit.value, began)
      const failure = Cause.failureOrCause(exit.cause)
      yield* startFailed(pool, lane, inst, Either.isLeft(failure) ? failure.left : new Error(Cause.pretty(failure.right)))
    })).pipe(
      // However the start ended (interrupted by a stop, or retired under it), its callers are told.
      Effect.ensuring(Effect.suspend(() => {
        inst.starting = undefined
        return Deferred.fail(inst.ready, stoppedError(pool, lane, `reason: ${inst.retiring ?? "stop"}`))
      })),
      Effect.annotateLogs({ server: pool.name, lane: lane.lane, instance: inst.id })
    )

  return { startInstance }
}
