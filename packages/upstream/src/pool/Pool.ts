/**
 * The Pool keeps the upstream sessions the gateway calls through: one pool per server (by name),
 * holding instances by scope key (who the session is for: everyone, one host session, or one call)
 * and by era lane (modern, legacy). An instance is one started Session and the scope that owns it;
 * closing that scope ends the process or the HTTP session.
 *
 * - Concurrent calls for the same key share one instance, and concurrent first calls share one
 *   start. Each lane admits at most `max` live instances (a permit each, held until the instance's
 *   scope has closed); a new key in a full lane evicts that lane's least-recently-used idle instance,
 *   or waits for one to become idle for at most `startTimeout`. An instance held only by calls
 *   parked on callers who walked away from a round of questions (CallContext.parked) is handed
 *   over to such a waiting key: its calls are ended for their callers (internal/PoolParked.ts).
 * - Instances with no call in flight for `idleTimeout` are closed. `call` keys are closed as soon as
 *   their call ends.
 * - A failed start is remembered per lane: calls fail fast until a cooldown (base, doubling with
 *   consecutive failures, capped) has passed; a successful start resets it.
 * - An instance whose connection closes on its own has crashed: the calls in flight fail with an
 *   error naming the server and its stderr tail, the instance is dropped and the next call starts a
 *   new one.
 * - An HTTP upstream whose session's era came into doubt (it refused a request the way only a
 *   server of another era does, or forgot a legacy session and would not open another) is dropped
 *   (`era-changed`); on the server's own lane the call is tried once more on a fresh start that
 *   distrusts the era cache and probes again, and its result is the call's.
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
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as FiberMap from "effect/FiberMap"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import type * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type Abort, abortable, type AbortHook } from "@mcpx-fx/cancel/Abortable"
import { Members } from "@mcpx-fx/cancel/InFlight"
import { makeControl } from "./internal/PoolControl.js"
import { makeInstances } from "./internal/PoolInstances.js"
import { makeInPlace } from "./internal/PoolInPlace.js"
import { makeLeases } from "./internal/PoolLeases.js"
import { coolingError, fingerprintOf, type Key, type LaneState, resolveSettings, type ServerPool, type Settings } from "./internal/PoolState.js"
import { PoolError, type PoolEvent, type UpstreamNotification } from "./PoolEvents.js"
import { type Caller, type Lane, OneShot, type PoolServer, requestedLane, type ScopeKey } from "./PoolModel.js"
import type { PoolStatus, RestartResult } from "./PoolStatus.js"
import { Prober } from "../era/Prober.js"
import type { ProbeReport } from "../era/ProbeModel.js"
import type { Session } from "../session/SessionModel.js"

/** How a call through `withSession` may be cut short besides its instance going away. */
export interface WithSessionOptions<E2> {
  /**
   * Called as the call begins with a way to end it at once with an error (a deadline, say);
   * answers how to let go of it, called when the call ends.
   */
  readonly cutShort?: AbortHook<E2>
  /**
   * Whether `use` on this session only waits for the answer to one request of it that the
   * session runs in place (`Session.runsInPlaceFor` of that request's context). Default
   * `session.runsInPlace`; a `use` that may wait on anything else (a task's polls) must say no.
   */
  readonly inPlace?: (session: Session) => boolean
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
  /**
   * The process is stopping and its grace is over: every call in flight is cut short (interrupted,
   * which cancels it upstream) with a PoolError of reason `shutdown`, and so is every later one.
   */
  readonly stopCalls: Effect.Effect<void>
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
  // The servers' pools close side by side: each upstream may take its whole kill grace to stop,
  // and one after another six that ignore EOF and SIGTERM kept a shutdown waiting 26 s.
  const poolsScope = yield* Scope.fork(layerScope, ExecutionStrategy.parallel)
  const pools = new Map<string, ServerPool>()
  const registry = yield* Effect.makeSemaphore(1)
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
      const scope = yield* Scope.fork(poolsScope, ExecutionStrategy.sequential)
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

  /** The server's pool as it is configured now, if there is one yet. */
  const poolNamed = (server: PoolServer): ServerPool | undefined => {
    const found = pools.get(server.definition.name)
    return found !== undefined && found.fingerprint === resolve(server).fingerprint ? found : undefined
  }

  const poolFor = (server: PoolServer): Effect.Effect<ServerPool> =>
    Effect.suspend(() => {
      const found = poolNamed(server)
      if (found !== undefined) return Effect.succeed(found)
      const name = server.definition.name
      const { fingerprint, settings } = resolve(server)
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

  const leases = makeLeases({ noteCrash, spawnCloser, startInstance })
  const { settle, tryLane } = leases
  const inPlace = makeInPlace({ poolNamed, keyFor, leases })

  // A legacy-only session that cannot be had is no reason to fail a call the server's own session can serve.
  const legacyFallsBack = (e: PoolError): boolean => e.reason === "start-failed" || e.reason === "cooling-down"

  // The calls in flight, each a way to cut it short at shutdown: a stop answers them through the
  // abort every call already has, rather than a race or a fiber of its own per call.
  const inFlight = new Members<() => void>()
  let shuttingDown = false
  const shutdownError = (server: PoolServer) => new PoolError({ server: server.definition.name, lane: "modern", reason: "shutdown", detail: "shutdown" })

  const withSession = <A, E, R, E2 = never>(
    server: PoolServer,
    caller: Caller,
    use: (session: Session) => Effect.Effect<A, E, R>,
    options?: WithSessionOptions<E2>
  ): Effect.Effect<A, E | E2 | PoolError, R> =>
    Effect.suspend(() => {
      if (shuttingDown) return Effect.fail(shutdownError(server))
      // Every way to cut the call short, registered as it begins and let go of as it ends.
      const register = (abort: Abort<E2 | PoolError>) => {
        const stop = () => abort(shutdownError(server))
        const leaveInFlight = inFlight.add(stop)
        const cancel = options?.cutShort?.(abort)
        return () => {
          leaveInFlight()
          cancel?.()
        }
      }
      const general = () =>
        abortable<A, E | PoolError, R, E2 | PoolError>((abort) =>
          Effect.suspend(() => {
            const letGo = register(abort)
            return Effect.ensuring(routed(server, caller, use, abort), Effect.sync(letGo))
          })
        )
      const here = inPlace.target(server, caller, options?.inPlace)
      return here === undefined ? general() : inPlace.run(here, use, register, general)
    })

  const stopCalls = Effect.sync(() => {
    shuttingDown = true
    for (const stop of inFlight.takeAll()) stop()
  })

  // A generator function made once, not per call: one made per call carried the whole call into
  // old space (docs/performance.md, What a call allocates).
  const routed: <A, E, R>(
    server: PoolServer,
    caller: Caller,
    use: (session: Session) => Effect.Effect<A, E, R>,
    abort: Abort<PoolError>
  ) => Effect.Effect<A, E | PoolError, R> = Effect.fnUntraced(
    function*<A, E, R>(server: PoolServer, caller: Caller, use: (session: Session) => Effect.Effect<A, E, R>, abort: Abort<PoolError>) {
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
    }
  )

  const { report, reports, restart, retire, snapshot, stop } = makeControl({ pools, poolFor, leases, retireAll, retirePool })

  return Pool.of({
    withSession,
    snapshot,
    report,
    reports,
    restart,
    stop,
    retire,
    stopCalls,
    events: Stream.fromPubSub(events),
    subscribe: PubSub.subscribe(events),
    notifications: PubSub.subscribe(notes)
  })
})
