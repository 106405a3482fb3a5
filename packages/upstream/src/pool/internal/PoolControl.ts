/**
 * The Pool's status and control: its servers' status and probe reports, and stopping,
 * restarting or retiring one server's sessions (what `mcpx-fx status`, `restart` and a
 * configuration change ask of it). Built once by the Pool over its registry of server pools.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type { PoolServer } from "../PoolModel.js"
import type { PoolStatus, RestartResult } from "../PoolStatus.js"
import type { ProbeReport } from "../../era/ProbeModel.js"
import type { makeInstances } from "./PoolInstances.js"
import type { makeLeases } from "./PoolLeases.js"
import { type Attempt, lanesOf, poolStatus, type ServerPool } from "./PoolState.js"

/** What control needs of the Pool. */
export interface ControlEnv {
  /** The server pools by name. */
  readonly pools: Map<string, ServerPool>
  readonly poolFor: (server: PoolServer) => Effect.Effect<ServerPool>
  readonly leases: ReturnType<typeof makeLeases>
  readonly retireAll: ReturnType<typeof makeInstances>["retireAll"]
  readonly retirePool: ReturnType<typeof makeInstances>["retirePool"]
}

export const makeControl = (env: ControlEnv) => {
  const { poolFor, pools, retireAll, retirePool } = env
  const { tryLane } = env.leases

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
      failed: results.flatMap(({ attempt, key, lane }) => attempt._tag === "Unavailable" ? [{ lane, key, error: attempt.error }] : [])
    }
    return result
  })

  const retire = Effect.fn("Pool.retire")(function*(server: string) {
    const pool = pools.get(server)
    if (pool === undefined) return
    pools.delete(server)
    yield* retirePool(pool)
  })

  return { snapshot, reports, report, stop, restart, retire }
}
