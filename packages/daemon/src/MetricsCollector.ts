/**
 * The daemon's part of the metrics (`@mcpx-fx/protocol/Metrics`): the upstream lifecycle counters,
 * counted from the Pool's events as `/v1/events` reads them (so the Pool and the sessions carry
 * no metrics code of their own), and the gauges, read when metrics are asked for rather than
 * kept up to date on every change.
 */
import * as Metrics from "@mcpx-fx/protocol/Metrics"
import { PendingCalls } from "@mcpx-fx/gateway/PendingCalls"
import { TaskStore } from "@mcpx-fx/server/TaskStore"
import { Pool } from "@mcpx-fx/upstream/pool/Pool"
import type { PoolEvent } from "@mcpx-fx/upstream/pool/PoolEvents"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

const starts = Metrics.perServer(Metrics.upstreamStarts)
const startFailures = Metrics.perServer(Metrics.upstreamStartFailures)
const crashes = Metrics.perServer(Metrics.upstreamCrashes)
const probes = Metrics.perServer(Metrics.eraProbes)
const cacheHits = Metrics.perServer(Metrics.eraCacheHits)

/** What one lifecycle event adds to the counters. */
export const record = (event: PoolEvent): Effect.Effect<void> => {
  switch (event.type) {
    case "server.start":
      // A forced era was neither probed nor cached: it counts as a start only.
      return Effect.zipRight(
        starts(event.server),
        event.eraSource === "probe" ? probes(event.server) : event.eraSource === "cache" ? cacheHits(event.server) : Effect.void
      )
    case "server.start.failed":
      return startFailures(event.server)
    case "server.crash":
      return crashes(event.server)
    default:
      return Effect.void
  }
}

/**
 * Counts the Pool's lifecycle events for as long as the scope lasts. The subscription is in place
 * when this returns, so no start after it is missed.
 */
export const collect: Effect.Effect<void, never, Pool | Scope.Scope> = Effect.gen(function*() {
  const events = yield* Effect.flatMap(Pool, (pool) => pool.subscribe)
  yield* Effect.forkScoped(Stream.runForEach(Stream.fromQueue(events), record))
})

/** Where the gauges are read from; a source the daemon cannot reach leaves its gauge out. */
export interface GaugeSources {
  /** The live legacy HTTP sessions' ids (HttpHost's `sessionIds`). */
  readonly sessionIds?: Effect.Effect<ReadonlyArray<string>>
  /** The context the host tasks were built in, holding the TaskStore when it is exposed. */
  readonly tasks?: Context.Context<never>
}

/** Sets the gauges to what their sources say now: run before each read of the metrics. */
export const refreshGauges = (sources: GaugeSources): Effect.Effect<void, never, PendingCalls> =>
  Effect.gen(function*() {
    const pending = yield* Effect.flatMap(PendingCalls, (calls) => calls.list)
    yield* Metric.set(Metrics.questionsPending, pending.length)
    if (sources.sessionIds !== undefined) yield* Metric.set(Metrics.sessions, (yield* sources.sessionIds).length)
    const store = sources.tasks === undefined ? Option.none() : Context.getOption(sources.tasks, TaskStore)
    if (Option.isSome(store)) {
      // A store that cannot be read now leaves the gauge at its last value rather than failing the scrape.
      const active = yield* Effect.option(store.value.active())
      if (Option.isSome(active)) yield* Metric.set(Metrics.tasksActive, active.value)
    }
  })
