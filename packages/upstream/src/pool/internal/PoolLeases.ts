/**
 * Leasing a pool instance for one call: claiming the key's instance (sharing it, or registering and
 * starting a new one, evicting the lane's least-recently-used idle one when the lane is full),
 * running the caller's work on its session until the instance goes away under it, releasing it
 * (closing it or leaving it to its idle reaper), and telling the caller what one lane could do
 * (`Attempt`), so the Pool can fall back to another lane.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import type { Abort } from "@mcpx-fx/cancel/Abortable"
import { Members } from "@mcpx-fx/cancel/InFlight"
import type { PoolError } from "../PoolEvents.js"
import type { Session } from "../../session/SessionModel.js"
import { TransportClosed } from "../../transport/Transport.js"
import { formatMs } from "../../internal/formatMs.js"
import type { makeInstances } from "./PoolInstances.js"
import {
  type Attempt,
  coolingError,
  type Instance,
  type Key,
  type LaneState,
  lruIdle,
  markRetiring,
  type Retiring,
  type ServerPool,
  starved
} from "./PoolState.js"

type Instances = ReturnType<typeof makeInstances>

/** What leasing runs on: the instance lifecycle. */
export interface LeasesEnv {
  readonly noteCrash: Instances["noteCrash"]
  readonly spawnCloser: Instances["spawnCloser"]
  readonly startInstance: Instances["startInstance"]
}

/** Leasing over `env`. */
export const makeLeases = (env: LeasesEnv) => {
  const { noteCrash, spawnCloser, startInstance } = env
  let instanceSeq = 0

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
          users: new Members(),
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
          crash: undefined,
          pinging: false
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

  /**
   * Pings a stdio server that has said nothing for `hangCheck` as a call on it ends; one that does
   * not answer within `pingTimeout` is hung (SIGSTOP, a deadlock) and goes as a crash, so the next
   * call starts a fresh one instead of waiting out its timeout too. A slow server that is alive
   * answers the ping (or refuses it: an error is an answer too) and keeps its calls.
   */
  const checkHung = (pool: ServerPool, lane: LaneState, inst: Instance, session: Session, silentMs: number) =>
    Effect.gen(function*() {
      const answered = yield* session.request(Method.Ping, {}).pipe(
        Effect.timeout(pool.settings.pingTimeoutMs),
        // Any answer, an error included, says it is alive; only silence says it is not.
        Effect.as(true),
        Effect.catchTag("TimeoutException", () => Effect.succeed(false)),
        Effect.catchAllCause(() => Effect.succeed(true))
      )
      inst.pinging = false
      if (answered || inst.retiring !== undefined) return
      yield* noteCrash(
        pool,
        lane,
        inst,
        new TransportClosed({
          reason: `it wrote nothing for ${formatMs(silentMs)} and did not answer a ping within ${formatMs(pool.settings.pingTimeoutMs)} ` +
            "(stopped or deadlocked), so it was replaced"
        })
      )
    })

  const release = (pool: ServerPool, lane: LaneState, inst: Instance) =>
    Effect.clockWith((clock) => releaseAt(pool, lane, inst, clock.unsafeCurrentTimeMillis()) ?? Effect.void)

  /**
   * The lease goes back at `now`; answers what that leaves to run (a hang check, a closer, a
   * reaper), or undefined when nothing is, as after most calls: a call in place then returns at
   * once, with no effect run for its release.
   */
  const releaseAt = (pool: ServerPool, lane: LaneState, inst: Instance, now: number): Effect.Effect<void> | undefined => {
    const session = inst.started?.session
    const heardAt = session?.heardAt?.()
    let check: Effect.Effect<unknown> | undefined
    if (heardAt !== undefined && session !== undefined && !inst.pinging && inst.retiring === undefined && now - heardAt >= pool.settings.hangCheckMs) {
      inst.pinging = true
      // Released in uninterruptible stretches, whose flags a fork inherits: the check must not.
      check = FiberSet.run(pool.fibers, Effect.interruptible(checkHung(pool, lane, inst, session, now - heardAt)))
    }
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
    const then = next === "close"
      ? Effect.asVoid(spawnCloser(pool, lane, inst))
      : next === "reap"
      ? Effect.asVoid(FiberMap.run(lane.reapers, inst.id, Effect.interruptible(reaper(pool, lane, inst))))
      : undefined
    return check === undefined ? then : then === undefined ? Effect.asVoid(check) : Effect.zipRight(check, then)
  }

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
      const leaveUsers = inst.users.add(abort)
      return Effect.catchAll(use(session), (e) => failedUse(pool, lane, inst, e)).pipe(
        Effect.ensuring(Effect.sync(leaveUsers))
      )
    })

  /**
   * How a failure of the caller's work is told: the session's TransportClosed as the instance's
   * crash, unless the session ended because its era came into doubt (a legacy HTTP session the
   * server forgot and would not open again): that is an era change, told by `afterUse`.
   */
  const failedUse = <E>(pool: ServerPool, lane: LaneState, inst: Instance, e: E): Effect.Effect<never, E | PoolError> =>
    !(e instanceof TransportClosed) ? Effect.fail(e) : Effect.flatMap(
      eraDoubtOf(inst),
      (doubt): Effect.Effect<never, E | PoolError> => Option.isSome(doubt) ? Effect.fail(e) : Effect.flatMap(noteCrash(pool, lane, inst, e), Effect.fail)
    )

  const eraDoubtOf = (inst: Instance) => inst.started === undefined ? Effect.succeedNone : inst.started.session.eraDoubt

  // An HTTP upstream that refused a request as only a server of another era does has changed era
  // under us: the instance goes, and the lane's next start distrusts the era cache and probes again.
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

  /**
   * What a lane's try answers once its call has ended. A failure on a session whose era is in
   * doubt retires its instance; with `mayDoubt` it is `Doubted`, so the caller can try once more.
   */
  const afterUse = <A, E>(
    pool: ServerPool,
    lane: LaneState,
    inst: Instance,
    exit: Exit.Exit<Attempt<A>, E | PoolError>,
    mayDoubt: boolean
  ): Effect.Effect<Attempt<A>, E | PoolError> => {
    if (Exit.isSuccess(exit)) return exit
    return Effect.flatMap(eraDoubtOf(inst), (doubt) =>
      Option.isNone(doubt)
        ? exit
        : Effect.zipRight(
          doubted(pool, lane, inst, doubt.value),
          mayDoubt ? Effect.succeed({ _tag: "Doubted", cause: exit.cause } as Attempt<A>) : exit
        ))
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

  return { doubted, failedUse, release, releaseAt, settle, takeLease, tryLane }
}
