/**
 * Where log lines go and how they look: always stderr (stdout is command output, and under `serve`
 * JSON-RPC frames only), as text for a person or, with `--log-format json` / `MCPX_LOG_FORMAT=json`,
 * one JSON object per line for a log pipeline: `time`, `level`, `message`, the log's annotations
 * (`server`, `instance`, …), and `trace_id`/`span_id` when the line was logged inside a span.
 * The `log.format` setting chooses too, from the moment the config is read (`settle`); the flag
 * and the variable take precedence over it.
 */
import type { Settings } from "@mcpx-fx/config/Settings"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
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
  // A span that is not recorded (TraceFilter.ts drops Effect's own) names no trace to look up.
  const traced = Option.isSome(span) && !(span.value._tag === "Span" && !span.value.sampled)
  const trace = traced ? { trace_id: span.value.traceId, span_id: span.value.spanId } : {}
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

/**
 * The process's log format, settled once the config file is read (`log.format`) unless the flag or
 * `MCPX_LOG_FORMAT` fixed it before the first line. Lines logged before then are in the format the
 * logger started with.
 */
export class LogFormatSwitch extends Context.Tag("@mcpx-fx/cli/Logging/LogFormatSwitch")<LogFormatSwitch, {
  /** Whether `--log-format` or `MCPX_LOG_FORMAT` chose the format: the config does not change it. */
  readonly fixed: boolean
  readonly set: (format: LogFormat) => void
}>() {}

/**
 * The process's logger: stderr, in `format`, from `level` up. `fixed`: the flag or the variable
 * chose `format`; otherwise the config's `log.format` may change it (`settle`).
 */
export const layer = (format: LogFormat, level: LogLevel.LogLevel, colors: boolean, fixed = true): Layer.Layer<LogFormatSwitch> => {
  let current = format
  const pretty = Logger.prettyLogger({ stderr: true, colors })
  const logger = Logger.make<unknown, void>((options) => current === "json" ? jsonLines.log(options) : pretty.log(options))
  return Layer.mergeAll(
    Logger.replace(Logger.defaultLogger, logger),
    Logger.minimumLogLevel(level),
    Layer.succeed(LogFormatSwitch, {
      fixed,
      set: (next) => {
        current = next
      }
    })
  )
}

/**
 * Adopts the config's `log.format`, once the config is read, unless the flag or the variable
 * fixed the format. The switch is required, not looked up: every process that reads a config runs
 * on this module's `layer` (Main.ts), and a test names the one it gives.
 */
export const settle = (settings: Settings["Type"]): Effect.Effect<void, never, LogFormatSwitch> =>
  Effect.flatMap(LogFormatSwitch, (found) => found.fixed ? Effect.void : Effect.map(settings.get("log.format"), (format) => found.set(format)))
