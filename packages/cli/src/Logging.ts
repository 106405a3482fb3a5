/**
 * Where log lines go and how they look: always stderr (stdout is command output, and under `serve`
 * JSON-RPC frames only), as text for a person or, with `--log-format json` / `MCPX_LOG_FORMAT=json`,
 * one JSON object per line for a log pipeline: `time`, `level`, `message`, the log's annotations
 * (`server`, `instance`, …), and `trace_id`/`span_id` when the line was logged inside a span.
 */
import * as Context from "effect/Context"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import * as HashMap from "effect/HashMap"
import * as Inspectable from "effect/Inspectable"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import type { LogFormat } from "./Argv.js"

const messageOf = (message: unknown): unknown => {
  const parts = Array.isArray(message) ? message : [message]
  const one = parts.length === 1 ? parts[0] : parts
  return typeof one === "string" ? one : Inspectable.toJSON(one)
}

/** One log line as a JSON object (what `--log-format json` writes). */
export const record = (options: Logger.Logger.Options<unknown>): Record<string, unknown> => {
  const span = Context.getOption(FiberRefs.getOrDefault(options.context, FiberRef.currentContext), Tracer.ParentSpan)
  const trace = Option.isSome(span) ? { trace_id: span.value.traceId, span_id: span.value.spanId } : {}
  const annotations = Object.fromEntries(HashMap.toEntries(options.annotations).map(([k, v]) => [k, Inspectable.toJSON(v)]))
  return {
    time: options.date.toISOString(),
    level: options.logLevel.label.toLowerCase(),
    message: messageOf(options.message),
    fiber: FiberId.threadName(options.fiberId),
    ...annotations,
    ...trace
  }
}

const jsonLines = Logger.make<unknown, void>((options) => {
  globalThis.console.error(JSON.stringify(record(options)))
})

/** The process's logger: stderr, in `format`, from `level` up. */
export const layer = (format: LogFormat, level: LogLevel.LogLevel, colors: boolean): Layer.Layer<never> =>
  Layer.merge(
    Logger.replace(Logger.defaultLogger, format === "json" ? jsonLines : Logger.prettyLogger({ stderr: true, colors })),
    Logger.minimumLogLevel(level)
  )
