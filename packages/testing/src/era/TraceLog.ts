/**
 * `ERA_TRACE_LOG=<file>`: one JSON line per received request, `{method, traceparent, tracestate}`
 * from its `_meta`, so a test can see the trace context a client passed on. An environment
 * variable rather than a flag: a gateway that starts the fixture passes its config's `env`.
 * Written synchronously, before the reply leaves.
 */
import { appendFileSync } from "node:fs"

const file = process.env.ERA_TRACE_LOG

const field = (meta: unknown, key: string): unknown =>
  typeof meta === "object" && meta !== null && !Array.isArray(meta) ? (meta as Record<string, unknown>)[key] : undefined

/** Records a request's trace context, when the log is on. */
export const record = (method: string, params: unknown): void => {
  if (file === undefined || file === "") return
  const meta = field(params, "_meta")
  appendFileSync(file, JSON.stringify({ method, traceparent: field(meta, "traceparent"), tracestate: field(meta, "tracestate") }) + "\n")
}
