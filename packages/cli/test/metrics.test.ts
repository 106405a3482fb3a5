/**
 * The metrics module and the exposition: durations timed on the Clock and filed under their
 * method and error type, the lifecycle counters the daemon counts from the Pool's events, and the
 * Prometheus text the exporter writes from Effect's registry.
 */
import { assert, describe, it } from "@effect/vitest"
import * as MetricsCollector from "@mcpx-fx/daemon/MetricsCollector"
import * as Metrics from "@mcpx-fx/protocol/Metrics"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Metric from "effect/Metric"
import * as TestClock from "effect/TestClock"
import * as Prometheus from "../src/Prometheus.js"

class Refused extends Data.TaggedError("Refused")<{}> {}
class RpcFailed extends Data.TaggedError("RpcFailed")<{ readonly code: number }> {}

// The registry is the process's: every test files its series under names of its own.
const exposition = Effect.flatMap(Prometheus.make, (e) => e.text)

describe("Metrics", () => {
  it("errorType/follows the conventions: codes, tool errors, cancellations, tags", () => {
    assert.isUndefined(Metrics.errorType(Exit.succeed({ content: [] })))
    assert.strictEqual(Metrics.errorType(Exit.succeed({ content: [], isError: true })), "tool_error")
    assert.strictEqual(Metrics.errorType(Exit.fail(new RpcFailed({ code: -32602 }))), "-32602")
    assert.strictEqual(Metrics.errorType(Exit.fail(new Refused())), "Refused")
    assert.strictEqual(Metrics.errorType(Exit.interrupt(FiberId.none)), "cancelled")
    assert.strictEqual(Metrics.errorType(Exit.die("boom")), "_OTHER")
  })

  it.scoped("recordServer/times on the Clock and the exposition shows the histogram and the counter", () =>
    Effect.gen(function*() {
      yield* Metrics.recordServer("unit/slow", TestClock.adjust("1500 millis"))
      yield* Effect.exit(Metrics.recordServer("unit/slow", Effect.fail(new Refused())))
      const text = yield* exposition
      assert.include(text, "# TYPE mcp_server_operation_duration histogram")
      assert.include(text, "# UNIT mcp_server_operation_duration s")
      assert.include(text, `mcp_server_operation_duration_bucket{mcp_method_name="unit/slow",le="1"} 0`)
      assert.include(text, `mcp_server_operation_duration_bucket{mcp_method_name="unit/slow",le="2"} 1`)
      assert.include(text, `mcp_server_operation_duration_sum{mcp_method_name="unit/slow"} 1.5`)
      assert.include(text, `mcp_server_operation_duration_count{mcp_method_name="unit/slow",error_type="Refused"} 1`)
      assert.include(text, "# TYPE mcpx_server_calls_total counter")
      assert.include(text, `mcpx_server_calls_total{mcp_method_name="unit/slow"} 1`)
      assert.include(text, `mcpx_server_calls_total{mcp_method_name="unit/slow",error_type="Refused"} 1`)
      assert.include(text, `target_info{service_name="mcpx-fx"`)
    }))

  it.effect("MetricsCollector/counts starts by era source, failed starts and crashes per server", () =>
    Effect.gen(function*() {
      const server = "unit-collector"
      const start = (eraSource: "probe" | "cache" | "forced") =>
        MetricsCollector.record({
          type: "server.start",
          server,
          lane: "modern",
          instance: "i",
          key: "k",
          era: "modern",
          negotiated: "2026-07-28",
          eraSource,
          wire: "stdio",
          durationMs: 1,
          at: 0
        })
      yield* Effect.all([start("probe"), start("cache"), start("cache"), start("forced")])
      yield* MetricsCollector.record({ type: "server.start.failed", server, lane: "modern", key: "k", reason: "x", failures: 1, at: 0 })
      yield* MetricsCollector.record({ type: "server.crash", server, lane: "modern", instance: "i", key: "k", reason: "x", stderrTail: "", at: 0 })
      const count = (counter: Metric.Metric.Counter<number>) => Effect.map(Metric.value(Metric.tagged(counter, Metrics.ServerTag, server)), (s) => s.count)
      assert.deepStrictEqual(
        yield* Effect.all([
          count(Metrics.upstreamStarts),
          count(Metrics.eraProbes),
          count(Metrics.eraCacheHits),
          count(Metrics.upstreamStartFailures),
          count(Metrics.upstreamCrashes)
        ]),
        [4, 1, 2, 1, 1]
      )
    }))
})
