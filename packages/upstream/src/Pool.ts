/**
 * The Pool keeps the upstream sessions the gateway calls through: one pool per server (by name),
 * holding instances by scope key (who the session is for: everyone, one host session, or one call)
 * and by era lane (modern, legacy). An instance is one started Session and the scope that owns it;
 * closing that scope ends the process or the HTTP session.
 *
 * - Concurrent calls for the same key share one instance, and concurrent first calls share one
 *   start. Each lane admits at most `max` live instances (a permit each, held until the instance's
 *   scope has closed); a new key in a full lane evicts that lane's least-recently-used idle instance,
 *   or waits for one to become idle for at most `startTimeout`.
 * - Instances with no call in flight for `idleTimeout` are closed. `call` keys are closed as soon as
 *   their call ends.
 * - A failed start is remembered per lane: calls fail fast until a cooldown (base, doubling with
 *   consecutive failures, capped) has passed; a successful start resets it.
 * - An instance whose connection closes on its own has crashed: the calls in flight fail with an
 *   error naming the server and its stderr tail, the instance is dropped and the next call starts a
 *   new one.
 * - A modern HTTP upstream whose session's era came into doubt (it refused a modern request the way
 *   only a server that is not modern does) is dropped (`era-changed`); the call is tried once more
 *   on a fresh start that distrusts the era cache and probes again, and its result is the call's.
 * - `follow` (seed 000): the server's own session (prefer-discover) lives in the modern lane; callers
 *   that reached mcpx-fx on a revision before 2026-07-28 use a second, legacy-only session
 *   (force-initialize) in the legacy lane, unless the server's own session settled legacy, which
 *   they then share. When the legacy-only start is refused, that is remembered for the pool's
 *   lifetime and legacy callers share the server's own session. The lanes share no instance,
 *   permit or fiber, so a legacy call the server never answers cannot hold up a modern one.
 *
 * Interruption is the cancellation model: interrupting `withSession` interrupts the caller's work
 * (which cancels its upstream request) and releases the instance without closing it.
 */
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import type * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type Abort, abortable } from "./Abortable.js"
import { makeInstances } from "./internal/PoolInstances.js"
import {
  type Attempt,
  coolingError,
  fingerprintOf,
  type Instance,
  type Key,
  type LaneState,
  lanesOf,
  lruIdle,
  markRetiring,
  poolStatus,
  resolveSettings,
  type Retiring,
  type ServerPool,
  type Settings,
  starved
} from "./internal/PoolState.js"
import { type PoolError, type PoolEvent, type UpstreamNotification } from "./PoolEvents.js"
import { type Caller, type Lane, OneShot, type PoolServer, requestedLane, type ScopeKey } from "./PoolModel.js"
import type { PoolStatus, RestartResult } from "./PoolStatus.js"
import { Prober, type ProbeReport } from "./Prober.js"
import type { Session } from "./Session.js"
import { TransportClosed } from "./Transport.js"

export * from "./PoolEvents.js"
export * from "./PoolModel.js"
export * from "./PoolStatus.js"

/** How a call through `withSession` may be cut short besides its instance going away. */
export interface WithSessionOptions<E2> {
  /**
   * Called as the call begins with a way to end it at once with an error (a deadline, say);
   * answers how to let go of it, called when the call ends.
   */
  readonly cutShort?: (abort: Abort<E2>) => () => void
}

// ---------------------------------------------------------------------------------------------
// The service

/** Upstream sessions by server, scope key and era lane. */
export class Pool extends Context.Tag("@mcpx-fx/upstream/Pool")<Pool, {
  /**
   * Runs `use` with a session for this caller, starting one if needed, and releases it afterwards
   * (also on interruption, which does not close the instance). Fails with a PoolError when no
   * session can be had, or when the upstream crashes or is stopped during the call.
   */
  readonly withSession: <A, E, R, E2 = never>(
    server: PoolServer,
    caller: Caller,
    use: (session: Session) => Effect.Effect<A, E, R>,
    options?: WithSessionOptions<E2>
  ) => Effect.Effect<A, E | E2 | PoolError, R>
  /** Every server's instances, lanes and cooldowns, by server name. */
  readonly snapshot: Effect.Effect<ReadonlyArray<PoolStatus>>
  /** The last report of a server's own session (`mcpx-fx protocol`). */
  readonly report: (server: string) => Effect.Effect<Option.Option<ProbeReport>>
  /** The last report of every server's own session, by server name. */
  readonly reports: Effect.Effect<ReadonlyArray<ProbeReport>>
  /**
   * Stops every instance of the server (calls in flight fail as stopped), forgets its cooldowns
   * and a refused legacy-only start, then starts the non-`call` keys again unless `lazy`.
   */
  readonly restart: (server: PoolServer, options?: { readonly lazy?: boolean }) => Effect.Effect<RestartResult>
  /** Stops every instance of the server and forgets its pool; answers how many were stopped. */
  readonly stop: (server: string) => Effect.Effect<number>
  /**
   * Forgets the server's pool and stops its instances as their calls finish (idle ones at once),
   * for a server removed from the configuration or redefined: calls in flight are not cut short.
   */
  readonly retire: (server: string) => Effect.Effect<void>
  /** Lifecycle events from now on. */
  readonly events: Stream.Stream<PoolEvent>
  /** A subscription to lifecycle events that is in place once this returns. */
  readonly subscribe: Effect.Effect<Queue.Dequeue<PoolEvent>, never, Scope.Scope>
  /** A subscription, in place once this returns, to what every live instance sends outside its calls. */
  readonly notifications: Effect.Effect<Queue.Dequeue<UpstreamNotification>, never, Scope.Scope>
}>() {
  /** The Pool on a Prober; instances live until their pool, or the layer, is closed. */
  static readonly layer: Layer.Layer<Pool, never, Prober> = Layer.scoped(
    Pool,
    Effect.suspend(() => make)
  )
}

const make = Effect.gen(function*() {
  const prober = yield* Prober
  const oneShot = yield* OneShot
  const layerScope = yield* Effect.scope
  const events = yield* PubSub.sliding<PoolEvent>(1024)
  const notes = yield* PubSub.sliding<UpstreamNotification>(1024)
  // Closers run here rather than in a server's own fibers: stopping a pool closes its scope, and
  // the closers must not be interrupted by that.
  const housekeeping = yield* FiberSet.make()
  const pools = new Map<string, ServerPool>()
  const registry = yield* Effect.makeSemaphore(1)
  let instanceSeq = 0
  let callSeq = 0

  const publish = (event: PoolEvent) => PubSub.publish(events, event)

  const { noteCrash, retireAll, retirePool, spawnCloser, startInstance } = makeInstances({
    prober,
    publish,
    notes,
    housekeeping
  })

  const keyFor = (scope: ScopeKey): Key => {
    switch (scope.kind) {
      case "global":
        return { scope, id: "global" }
      case "session":
        return { scope, id: `session:${scope.id}` }
      case "call":
        return { scope, id: `call:${++callSeq}` }
    }
  }

  // --- pools

  const makeLane = (lane: Lane, scope: Scope.Scope) =>
    Effect.gen(function*() {
      const state: LaneState = {
        lane,
        instances: new Map(),
        queued: new Set(),
        holders: new Set(),
        retiring: new Set(),
        reapers: yield* FiberMap.make<string>().pipe(Scope.extend(scope)),
        failures: 0,
        cooldown: undefined,
        lastReport: undefined,
        reprobe: false
      }
      return state
    })

  const makePool = (server: PoolServer, settings: Settings, fingerprint: string) =>
    Effect.gen(function*() {
      const scope = yield* Scope.fork(layerScope, ExecutionStrategy.sequential)
      const pool: ServerPool = {
        name: server.definition.name,
        fingerprint,
        server,
        settings,
        scope,
        fibers: yield* FiberSet.make().pipe(Scope.extend(scope)),
        modern: yield* makeLane("modern", scope),
        legacy: yield* makeLane("legacy", scope),
        settledEra: undefined,
        legacyRefused: undefined,
        oneShot,
        retired: false,
        stopped: false
      }
      return pool
    })

  // A caller hands over the same PoolServer call after call until something about it changes.
  const resolved = new WeakMap<PoolServer, { readonly settings: Settings; readonly fingerprint: string }>()
  const resolve = (server: PoolServer) => {
    const known = resolved.get(server)
    if (known !== undefined) return known
    const settings = resolveSettings(server.settings)
    const r = { settings, fingerprint: fingerprintOf(server, settings) }
    resolved.set(server, r)
    return r
  }

  const poolFor = (server: PoolServer): Effect.Effect<ServerPool> =>
    Effect.suspend(() => {
      const name = server.definition.name
      const { fingerprint, settings } = resolve(server)
      const found = pools.get(name)
      if (found !== undefined && found.fingerprint === fingerprint) return Effect.succeed(found)
      return registry.withPermits(1)(
        Effect.gen(function*() {
          const again = pools.get(name)
          if (again !== undefined && again.fingerprint === fingerprint) return again
          if (again !== undefined) {
            yield* Effect.logInfo(`upstream ${name} was reconfigured: its instances close once idle`)
            yield* retirePool(again)
          }
          const pool = yield* makePool(server, settings, fingerprint)
          pools.set(name, pool)
          return pool
        })
      )
    })


  // --- claiming and releasing

  const takeLease = (inst: Instance, now: number) => {
    inst.busy += 1
    inst.calls += 1
    inst.lastUsed = now
    inst.idleSince = undefined
  }

  /**
   * Leases the key's instance, registering (and starting) a new one when there is none, so that
   * concurrent first callers share one start. A new key in a full lane evicts the lane's
   * least-recently-used idle instance; with none idle, its start waits for a permit.
   */
  const claim = (pool: ServerPool, lane: LaneState, key: Key): Effect.Effect<Instance, PoolError> =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const fiberId = yield* Effect.fiberId
      const step = yield* Effect.sync(() => {
        const existing = lane.instances.get(key.id)
        if (existing !== undefined) {
          takeLease(existing, now)
          return { _tag: "Shared", inst: existing } as const
        }
        const cooling = coolingError(pool, lane, now)
        if (Option.isSome(cooling)) return { _tag: "Cooling", error: cooling.value } as const
        const inst: Instance = {
          id: `${pool.name}#${++instanceSeq}`,
          key,
          ready: Deferred.unsafeMake(fiberId),
          gone: undefined,
          users: new Set(),
          stopped: Deferred.unsafeMake(fiberId),
          permitted: Deferred.unsafeMake(fiberId),
          scope: undefined,
          started: undefined,
          serving: undefined,
          startedAt: undefined,
          starting: undefined,
          busy: 0,
          calls: 0,
          lastUsed: now,
          idleSince: undefined,
          reaping: false,
          retiring: undefined,
          crash: undefined
        }
        takeLease(inst, now)
        lane.instances.set(key.id, inst)
        lane.queued.add(inst)
        const victim = lane.holders.size >= pool.settings.max && starved(lane) ? lruIdle(lane) : undefined
        if (victim !== undefined) markRetiring(lane, victim, "evicted")
        return { _tag: "Created", inst, victim } as const
      })
      if (step._tag === "Shared") return step.inst
      if (step._tag === "Cooling") return yield* step.error
      if (step.victim !== undefined) yield* spawnCloser(pool, lane, step.victim)
      const inst = step.inst
      // The start is the pool's, not this caller's: interrupting the caller leaves it running.
      const fiber = yield* FiberSet.run(pool.fibers, startInstance(pool, lane, inst))
      if (!(yield* Deferred.isDone(inst.ready))) inst.starting = fiber
      return inst
    })

  // One reaper per idle stretch of calls: it sleeps until the latest `idleSince` plus the idle
  // timeout, rather than a fiber being forked (and the last interrupted) on every release. It
  // leaves when the instance is busy at its wake-up; the next release starts another.
  const reaper = (pool: ServerPool, lane: LaneState, inst: Instance) =>
    Effect.gen(function*() {
      for (;;) {
        const now = yield* Clock.currentTimeMillis
        const step = yield* Effect.sync(() => {
          // Measured from when the instance went idle, however late this fiber gets to run.
          const remaining = inst.busy === 0 && inst.idleSince !== undefined ? inst.idleSince + pool.settings.idleMs - now : 0
          if (remaining > 0) return remaining
          inst.reaping = false
          return inst.busy === 0 && inst.idleSince !== undefined && markRetiring(lane, inst, "idle")
        })
        if (typeof step === "number") yield* Effect.sleep(step)
        else return step ? yield* spawnCloser(pool, lane, inst) : undefined
      }
    })

  const release = (pool: ServerPool, lane: LaneState, inst: Instance) =>
    Effect.clockWith((clock) => {
      const now = clock.unsafeCurrentTimeMillis()
      const next = (() => {
        inst.busy -= 1
        inst.lastUsed = now
        if (inst.busy > 0 || inst.retiring !== undefined) return "none" as const
        inst.idleSince = now
        const close = (reason: Retiring) => (markRetiring(lane, inst, reason) ? "close" as const : "none" as const)
        // Nobody wants it any more and it has not even got a permit yet.
        if (lane.queued.has(inst)) return close("abandoned")
        if (inst.key.scope.kind === "call") return close("released")
        if (pool.retired) return close("reconfigured")
        // Another key waits for a permit and every other instance is busy: this one is the LRU idle.
        if (inst.started !== undefined && starved(lane)) return close("evicted")
        if (inst.reaping) return "none" as const
        inst.reaping = true
        return "reap" as const
      })()
      if (next === "close") return Effect.asVoid(spawnCloser(pool, lane, inst))
      if (next === "reap") return Effect.asVoid(FiberMap.run(lane.reapers, inst.id, Effect.interruptible(reaper(pool, lane, inst))))
      return Effect.void
    })

  // The caller's work, ended at once (through `abort`) when the upstream crashes or is stopped
  // under it. A TransportClosed from the session becomes an error that names the server.
  const runUse = <A, E, R>(
    pool: ServerPool,
    lane: LaneState,
    inst: Instance,
    session: Session,
    use: (session: Session) => Effect.Effect<A, E, R>,
    abort: Abort<PoolError>
  ): Effect.Effect<A, E | PoolError, R> =>
    Effect.suspend(() => {
      if (inst.gone !== undefined) return Effect.fail(inst.gone)
      inst.users.add(abort)
      return Effect.catchAll(use(session), (e): Effect.Effect<never, E | PoolError> =>
        e instanceof TransportClosed ? Effect.flatMap(noteCrash(pool, lane, inst, e), Effect.fail) : Effect.fail(e)).pipe(
          Effect.ensuring(Effect.sync(() => void inst.users.delete(abort)))
        )
    })

  // A modern HTTP upstream that stopped answering modern requests has changed era under us: the
  // instance goes, and the lane's next start distrusts the era cache and probes again.
  const doubted = (pool: ServerPool, lane: LaneState, inst: Instance, why: string) =>
    Effect.gen(function*() {
      const first = yield* Effect.sync(() => {
        if (!markRetiring(lane, inst, "era-changed")) return false
        lane.reprobe = true
        return true
      })
      if (!first) return
      yield* Effect.logInfo(`${inst.id}: ${why}; probing ${pool.name} again`)
      yield* spawnCloser(pool, lane, inst)
    })

  /**
   * One lane's try: lease the key's instance, wait for its session, and run `use` unless `accept`
   * turns the session down. Not getting a session is a value, not an error, so the caller can fall
   * back to another lane without mistaking a failure of `use` for it. With `mayDoubt`, a failure
   * of `use` on a session whose era came into doubt is `Doubted`, so the caller can try once more.
   */
  const tryLane = <A, E, R>(
    pool: ServerPool,
    lane: LaneState,
    key: Key,
    use: (session: Session) => Effect.Effect<A, E, R>,
    abort: Abort<PoolError>,
    accept?: (session: Session) => boolean,
    mayDoubt = false
  ): Effect.Effect<Attempt<A>, E | PoolError, R> =>
    Effect.clockWith((clock) => {
      // Nearly every call finds its key's instance up and serving: it is leased in place, without
      // the claim's bookkeeping for starts and evictions.
      const serving = lane.instances.get(key.id)
      const started = serving?.serving
      if (serving === undefined || started === undefined || (accept !== undefined && !accept(started.session))) {
        return leaseAndUse(pool, lane, key, use, abort, accept, mayDoubt)
      }
      return Effect.uninterruptibleMask((restore) => {
        takeLease(serving, clock.unsafeCurrentTimeMillis())
        return restore(runUse(pool, lane, serving, started.session, use, abort)).pipe(
          Effect.map((value): Attempt<A> => ({ _tag: "Used", value })),
          Effect.exit,
          Effect.flatMap((exit) => Effect.zipRight(release(pool, lane, serving), afterUse(pool, lane, serving, exit, mayDoubt)))
        )
      })
    })

  /** What a lane's try answers once its call has ended: with `mayDoubt`, a failure on a session whose era is in doubt is `Doubted`. */
  const afterUse = <A, E>(
    pool: ServerPool,
    lane: LaneState,
    inst: Instance,
    exit: Exit.Exit<Attempt<A>, E | PoolError>,
    mayDoubt: boolean
  ): Effect.Effect<Attempt<A>, E | PoolError> => {
    if (!mayDoubt || Exit.isSuccess(exit) || inst.started === undefined) return exit
    return Effect.flatMap(inst.started.session.eraDoubt, (doubt) =>
      Option.isNone(doubt)
        ? exit
        : Effect.as(doubted(pool, lane, inst, doubt.value), { _tag: "Doubted", cause: exit.cause } as Attempt<A>))
  }

  const leaseAndUse = <A, E, R>(
    pool: ServerPool,
    lane: LaneState,
    key: Key,
    use: (session: Session) => Effect.Effect<A, E, R>,
    abort: Abort<PoolError>,
    accept?: (session: Session) => boolean,
    mayDoubt = false
  ): Effect.Effect<Attempt<A>, E | PoolError, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const claimed = yield* Effect.either(claim(pool, lane, key))
        if (Either.isLeft(claimed)) return { _tag: "Unavailable", error: claimed.left } as Attempt<A>
        const inst = claimed.right
        const exit = yield* restore(
          Effect.gen(function*() {
            const ready = yield* Effect.either(Deferred.await(inst.ready))
            if (Either.isLeft(ready)) return { _tag: "Unavailable", error: ready.left } as Attempt<A>
            const session = ready.right.session
            if (accept !== undefined && !accept(session)) return { _tag: "Rejected" } as Attempt<A>
            const value = yield* runUse(pool, lane, inst, session, use, abort)
            return { _tag: "Used", value } as Attempt<A>
          })
        ).pipe(Effect.exit)
        yield* release(pool, lane, inst)
        return yield* afterUse(pool, lane, inst, exit, mayDoubt)
      })
    )

  const settle = <A>(attempt: Attempt<A>, pool: ServerPool): Effect.Effect<A, PoolError> => {
    switch (attempt._tag) {
      case "Used":
        return Effect.succeed(attempt.value)
      case "Unavailable":
        return Effect.fail(attempt.error)
      case "Rejected":
        return Effect.dieMessage(`${pool.name}: a session was turned down with nowhere else to go`)
      case "Doubted":
        return Effect.failCause(attempt.cause as Cause.Cause<PoolError>)
    }
  }

  // A legacy-only session that cannot be had is no reason to fail a call the server's own session can serve.
  const legacyFallsBack = (e: PoolError): boolean => e.reason === "start-failed" || e.reason === "cooling-down"

  const withSession = <A, E, R, E2 = never>(
    server: PoolServer,
    caller: Caller,
    use: (session: Session) => Effect.Effect<A, E, R>,
    options?: WithSessionOptions<E2>
  ): Effect.Effect<A, E | E2 | PoolError, R> =>
    abortable<A, E | PoolError, R, E2 | PoolError>((abort) => {
      const cutShort = options?.cutShort
      if (cutShort === undefined) return routed(server, caller, use, abort)
      return Effect.suspend(() => {
        const cancel = cutShort(abort)
        return Effect.ensuring(routed(server, caller, use, abort), Effect.sync(cancel))
      })
    })

  const routed = <A, E, R>(
    server: PoolServer,
    caller: Caller,
    use: (session: Session) => Effect.Effect<A, E, R>,
    abort: Abort<PoolError>
  ): Effect.Effect<A, E | PoolError, R> =>
    Effect.gen(function*() {
      const pool = yield* poolFor(server)
      const key = keyFor(caller.key)
      // The server's own session, tried once more on a fresh probe when its era came into doubt.
      const modernLane = (accept?: (session: Session) => boolean) =>
        Effect.flatMap(
          tryLane(pool, pool.modern, key, use, abort, accept, true),
          (a) => (a._tag === "Doubted" ? tryLane(pool, pool.modern, key, use, abort, accept) : Effect.succeed(a))
        )
      const onModern = Effect.flatMap(modernLane(), (a) => settle(a, pool))
      if (requestedLane(server.probe.preference, caller.revision) === "modern") return yield* onModern

      const onLegacy = Effect.flatMap(tryLane(pool, pool.legacy, key, use, abort), (a) => {
        if (a._tag === "Unavailable" && legacyFallsBack(a.error)) {
          return Effect.zipRight(
            Effect.logDebug(`${pool.name}: no legacy-only session (${a.error.detail}); using the server's own session`),
            onModern
          )
        }
        return settle(a, pool)
      })
      const now = yield* Clock.currentTimeMillis
      const route = yield* Effect.sync(() => {
        if (pool.legacyRefused !== undefined || pool.settledEra === "legacy") return "modern" as const
        if (Option.isSome(coolingError(pool, pool.legacy, now))) return "modern" as const
        return pool.settledEra === "modern" ? "legacy" as const : "discover" as const
      })
      switch (route) {
        case "modern":
          return yield* onModern
        case "legacy":
          return yield* onLegacy
        case "discover":
          // The server's own session has to exist anyway; if it settles legacy, it is the one.
          return yield* Effect.flatMap(
            modernLane((s) => s.era === "legacy"),
            (a) => (a._tag === "Used" ? Effect.succeed(a.value) : onLegacy)
          )
      }
    })

  // --- status and control

  const sortedPools = () => [...pools.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))

  const snapshot = Effect.map(
    Clock.currentTimeMillis,
    (now): ReadonlyArray<PoolStatus> => sortedPools().map((pool) => poolStatus(pool, now))
  )

  const reports = Effect.sync((): ReadonlyArray<ProbeReport> =>
    sortedPools().flatMap((pool) => (pool.modern.lastReport !== undefined ? [pool.modern.lastReport] : []))
  )

  const report = (server: string) => Effect.sync(() => Option.fromNullable(pools.get(server)?.modern.lastReport))

  const stop = Effect.fn("Pool.stop")(function*(server: string) {
    const pool = pools.get(server)
    if (pool === undefined) return 0
    pools.delete(server)
    pool.retired = true
    pool.stopped = true
    const stopped = yield* retireAll(pool, "stop")
    yield* Scope.close(pool.scope, Exit.void)
    return stopped.filter(({ inst }) => inst.started !== undefined).length
  })

  const restart = Effect.fn("Pool.restart")(function*(server: PoolServer, options?: { readonly lazy?: boolean }) {
    const pool = yield* poolFor(server)
    const stopped = yield* retireAll(pool, "restart")
    yield* Effect.sync(() => {
      for (const lane of lanesOf(pool)) {
        lane.failures = 0
        lane.cooldown = undefined
      }
      pool.legacyRefused = undefined
    })
    const again = options?.lazy === true ? [] : stopped.filter(({ inst }) => inst.key.scope.kind !== "call")
    const results = yield* Effect.forEach(
      again,
      ({ inst, lane }) =>
        tryLane(pool, lane, inst.key, () => Effect.void, () => {}).pipe(
          Effect.catchAll((error) => Effect.succeed<Attempt<void>>({ _tag: "Unavailable", error })),
          Effect.map((attempt) => ({ lane: lane.lane, key: inst.key.id, attempt }))
        ),
      { concurrency: "unbounded" }
    )
    const result: RestartResult = {
      server: pool.name,
      stopped: stopped.filter(({ inst }) => inst.started !== undefined).length,
      started: results.filter((r) => r.attempt._tag === "Used").map(({ key, lane }) => ({ lane, key })),
      failed: results.flatMap(({ attempt, key, lane }) =>
        attempt._tag === "Unavailable" ? [{ lane, key, error: attempt.error }] : []
      )
    }
    return result
  })

  const retire = Effect.fn("Pool.retire")(function*(server: string) {
    const pool = pools.get(server)
    if (pool === undefined) return
    pools.delete(server)
    yield* retirePool(pool)
  })

  return Pool.of({
    withSession,
    snapshot,
    report,
    reports,
    restart,
    stop,
    retire,
    events: Stream.fromPubSub(events),
    subscribe: PubSub.subscribe(events),
    notifications: PubSub.subscribe(notes)
  })
})

