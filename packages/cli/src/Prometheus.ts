/**
 * The Prometheus text exposition of every Effect metric registered in this process: the
 * `@effect/opentelemetry` producer reads Effect's metric registry, `@opentelemetry/exporter-prometheus`
 * (as a reader that starts no server of its own) collects from it, and its serializer writes the
 * text. Loaded by `MetricsRoute` on the first scrape, so a process nobody scrapes never loads it.
 */
import * as OtelMetrics from "@effect/opentelemetry/Metrics"
import * as Resource from "@effect/opentelemetry/Resource"
import * as Metrics from "@mcpx-fx/protocol/Metrics"
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import type { CollectionResult, MetricProducer } from "@opentelemetry/sdk-metrics"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { version } from "./version.js"

/** The metrics could not be collected. */
export class CollectFailed extends Data.TaggedError("CollectFailed")<{ readonly reason: string }> {}

/** The current exposition, computed on each read. */
export interface Exposition {
  readonly text: Effect.Effect<string, CollectFailed>
}

/**
 * Effect's producer knows a unit only from a `unit` tag, which would also become a label on every
 * series; the units are given here instead, by metric name.
 */
const withUnits = (producer: MetricProducer): MetricProducer => ({
  collect: (options) =>
    producer.collect(options).then((result): CollectionResult => ({
      ...result,
      resourceMetrics: {
        ...result.resourceMetrics,
        scopeMetrics: result.resourceMetrics.scopeMetrics.map((scope) => ({
          ...scope,
          metrics: scope.metrics.map((metric) => {
            const unit = Metrics.units.get(metric.descriptor.name)
            return unit === undefined ? metric : { ...metric, descriptor: { ...metric.descriptor, unit } }
          })
        }))
      }
    }))
})

/** An exposition whose reader lives as long as the scope. */
export const make: Effect.Effect<Exposition, never, Scope.Scope> = Effect.gen(function*() {
  // The scope label (the bridge's name) would only repeat itself on every series.
  const exporter = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true })
  const producer = yield* Effect.provide(OtelMetrics.makeProducer, Resource.layer({ serviceName: "mcpx-fx", serviceVersion: version }))
  yield* OtelMetrics.registerProducer(withUnits(producer), () => exporter)
  const serializer = new PrometheusSerializer(undefined, false, undefined, false, true)
  return {
    text: Effect.tryPromise({
      try: () => exporter.collect(),
      catch: (e) => new CollectFailed({ reason: e instanceof Error ? e.message : String(e) })
    }).pipe(Effect.map(({ resourceMetrics }) => serializer.serialize(resourceMetrics)))
  }
})
