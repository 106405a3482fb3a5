/**
 * `GET /metrics` on the daemon: the lifecycle counters counted from the daemon's start, the
 * gauges read at each scrape, and the exposition (Prometheus.ts) loaded on the first scrape only.
 * Loaded with the daemon's own modules, never by other commands.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as MetricsCollector from "@mcpx-fx/daemon/MetricsCollector"
import type { PendingCalls } from "@mcpx-fx/gateway/PendingCalls"
import type { Pool } from "@mcpx-fx/upstream/pool/Pool"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"

/** The route, and where its gauges are read from once the listeners know. */
export interface MetricsRoute {
  readonly app: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
  /** Adds gauge sources (the HTTP host's sessions, the task store) as they are built. */
  readonly gaugeSources: (sources: MetricsCollector.GaugeSources) => Effect.Effect<void>
}

// The classic text format, the one the serializer writes.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

/** Counts lifecycle events for as long as the scope lasts, and serves them. */
export const make: Effect.Effect<MetricsRoute, never, Pool | PendingCalls | Scope.Scope> = Effect.gen(function*() {
  yield* MetricsCollector.collect
  const scope = yield* Effect.scope
  const context = yield* Effect.context<PendingCalls>()
  let sources: MetricsCollector.GaugeSources = {}
  // Built once, in the daemon's scope, whichever request asks first.
  const exposition = yield* Effect.cached(
    Effect.promise(() => import("./Prometheus.js")).pipe(Effect.flatMap((Prometheus) => Scope.extend(Prometheus.make, scope)))
  )
  const app = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (request.method !== "GET" && request.method !== "HEAD") {
      return HttpServerResponse.text("method not allowed\n", { status: 405, headers: { allow: "GET, HEAD" } })
    }
    yield* Effect.provide(MetricsCollector.refreshGauges(sources), context)
    const text = yield* Effect.flatMap(exposition, (e) => e.text)
    return HttpServerResponse.text(text, { contentType: ContentType })
  }).pipe(
    Effect.catchTag("CollectFailed", (e) => Effect.succeed(HttpServerResponse.text(`# metrics could not be collected: ${e.reason}\n`, { status: 500 })))
  )
  return {
    app,
    gaugeSources: (more) => Effect.sync(() => void (sources = { ...sources, ...more }))
  }
})
