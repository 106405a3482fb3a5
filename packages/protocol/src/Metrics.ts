/**
 * mcpx-fx's metrics, as Effect `Metric`s in the process-wide registry: whatever exports them
 * (`GET /metrics` on the daemon) reads that registry, so recording needs no exporter and costs
 * nothing more when none is running. Names follow the OpenTelemetry semantic conventions for MCP
 * where they exist; mcpx-fx's own are under `mcpx.`.
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"

/** The semantic conventions' attribute names, and the server a lifecycle event names. */
export const MethodTag = "mcp.method.name"
export const ErrorTypeTag = "error.type"
export const ServerTag = "server"

// The boundaries the MCP semantic conventions advise for operation durations, in seconds.
const durationBoundaries = MetricBoundaries.fromIterable([0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300])

/** How long a host's request took, answered by mcpx-fx (the server side), in seconds. */
export const serverDuration = Metric.histogram(
  "mcp.server.operation.duration",
  durationBoundaries,
  "Duration of the MCP requests mcpx-fx answered for hosts, in seconds"
)
/** How long a request to an upstream took (the client side), in seconds. */
export const clientDuration = Metric.histogram(
  "mcp.client.operation.duration",
  durationBoundaries,
  "Duration of the MCP requests mcpx-fx sent to upstream servers, in seconds"
)
/** Hosts' requests answered, by method, and by error type when they failed. */
export const serverCalls = Metric.counter("mcpx.server.calls", {
  description: "MCP requests mcpx-fx answered for hosts",
  incremental: true
})
/** Requests sent to upstreams, by method, and by error type when they failed. */
export const clientCalls = Metric.counter("mcpx.client.calls", {
  description: "MCP requests mcpx-fx sent to upstream servers",
  incremental: true
})

/** Upstream instances started, by server. */
export const upstreamStarts = Metric.counter("mcpx.upstream.starts", { description: "Upstream instances started", incremental: true })
/** Upstream starts that failed, by server. */
export const upstreamStartFailures = Metric.counter("mcpx.upstream.start_failures", {
  description: "Upstream starts that failed",
  incremental: true
})
/** Upstream instances whose connection closed on its own, by server. */
export const upstreamCrashes = Metric.counter("mcpx.upstream.crashes", {
  description: "Upstream instances that exited or whose session ended on their own",
  incremental: true
})
/** Starts whose era a probe decided, by server. */
export const eraProbes = Metric.counter("mcpx.era.probes", { description: "Upstream starts whose era was probed", incremental: true })
/** Starts whose era the era cache decided, by server. */
export const eraCacheHits = Metric.counter("mcpx.era.cache_hits", {
  description: "Upstream starts whose era came from the era cache",
  incremental: true
})

/** Calls waiting behind an `input_required` (PendingCalls), set when metrics are read. */
export const questionsPending = Metric.gauge("mcpx.questions.pending", { description: "Calls held waiting for answers to questions" })
/** Host tasks not yet terminal, set when metrics are read. */
export const tasksActive = Metric.gauge("mcpx.tasks.active", { description: "Host tasks not yet in a terminal state" })
/** Live legacy HTTP sessions, set when metrics are read. */
export const sessions = Metric.gauge("mcpx.sessions", { description: "Live legacy (2024-11-05 through 2025-11-25) HTTP sessions" })

/** The units of the metrics above that have one (UCUM), for exporters that carry units. */
export const units: ReadonlyMap<string, string> = new Map([
  ["mcp.server.operation.duration", "s"],
  ["mcp.client.operation.duration", "s"]
])

/** What an outcome is counted as: undefined for a success, else its `error.type`. */
export type ErrorTypeOf<A, E> = (exit: Exit.Exit<A, E>) => string | undefined

/**
 * The `error.type` of an outcome, as the conventions ask: a JSON-RPC error's code, "tool_error"
 * for a tool result with `isError`, "cancelled" for an interruption, else a tagged error's tag,
 * or "_OTHER".
 */
export const errorType = <A, E>(exit: Exit.Exit<A, E>): string | undefined => {
  if (Exit.isSuccess(exit)) {
    const value: unknown = exit.value
    return typeof value === "object" && value !== null && "isError" in value && value.isError === true ? "tool_error" : undefined
  }
  if (Exit.isInterrupted(exit)) return "cancelled"
  const failure: unknown = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (typeof failure !== "object" || failure === null) return "_OTHER"
  if ("code" in failure && typeof failure.code === "number") return String(failure.code)
  return "_tag" in failure && typeof failure._tag === "string" ? failure._tag : "_OTHER"
}

// Each series' labels as one array kept for good: the registry caches a metric's hook by the
// identity of its labels array, so an update with a kept array finds its hook without building a
// key (Metric.tagged would build a fresh array, and look the key up again, on every update).
type Labels = ReadonlyArray<MetricLabel.MetricLabel>

/**
 * A recorder of one side's operations. Each (method, error type) pair's labels are made on its
 * first call and kept, so a call costs two clock reads and the two updates, with no allocation of
 * tags; methods and error types are few (the protocol's and the errors' names).
 */
export const recorder = (duration: Metric.Metric.Histogram<number>, calls: Metric.Metric.Counter<number>) => {
  const byMethod = new Map<string, Map<string, Labels>>()
  const labelsOf = (method: string, error: string | undefined): Labels => {
    let byError = byMethod.get(method)
    if (byError === undefined) {
      byError = new Map()
      byMethod.set(method, byError)
    }
    const key = error ?? ""
    let labels = byError.get(key)
    if (labels === undefined) {
      const methodLabel = MetricLabel.make(MethodTag, method)
      labels = error === undefined ? [methodLabel] : [methodLabel, MetricLabel.make(ErrorTypeTag, error)]
      byError.set(key, labels)
    }
    return labels
  }
  /** Counts one operation of `method` that took `seconds`, failed with `error` (undefined: it succeeded). */
  const observed = (method: string, seconds: number, error: string | undefined): void => {
    const labels = labelsOf(method, error)
    duration.unsafeUpdate(seconds, labels)
    calls.unsafeUpdate(1, labels)
  }
  /** Runs `self`, recording its duration and outcome under `method`. */
  const timed = <A, E, R>(method: string, self: Effect.Effect<A, E, R>, outcome: ErrorTypeOf<A, E> = errorType): Effect.Effect<A, E, R> =>
    Effect.clockWith((clock: Clock.Clock) => {
      const start = clock.unsafeCurrentTimeNanos()
      return Effect.onExit(self, (exit) => Effect.sync(() => observed(method, Number(clock.unsafeCurrentTimeNanos() - start) / 1e9, outcome(exit))))
    })
  return Object.assign(timed, { observed })
}

/**
 * Times a host's request (the server side). A tool call is not timed here but counted through
 * `recordServer.observed` by its one observation (the gateway's CallObserver), which also feeds
 * the call's log line and the live page.
 */
export const recordServer = recorder(serverDuration, serverCalls)
/** Times a request to an upstream (the client side). */
export const recordClient = recorder(clientDuration, clientCalls)

/** Increments `counter` for a server, whose label is made once: lifecycle events name few servers. */
export const perServer = (counter: Metric.Metric.Counter<number>) => {
  const labels = new Map<string, Labels>()
  return (server: string): Effect.Effect<void> =>
    Effect.sync(() => {
      let kept = labels.get(server)
      if (kept === undefined) {
        kept = [MetricLabel.make(ServerTag, server)]
        labels.set(server, kept)
      }
      counter.unsafeUpdate(1, kept)
    })
}
