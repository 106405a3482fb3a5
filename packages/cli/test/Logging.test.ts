/** `--log-format json`: what one log line holds, inside a span and out of one; `log.format` from the config. */
import { assert, describe, it } from "@effect/vitest"
import * as Settings from "@mcpx-fx/config/Settings"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Logging from "../src/Logging.js"

/** Logs `effect`'s lines as Logging.record makes them. */
const recorded = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const lines: Array<Record<string, unknown>> = []
    const capture = Logger.make<unknown, void>((options) => void lines.push(Logging.record(options)))
    yield* effect.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
    return lines
  })

describe("Logging.record", () => {
  it.effect("a line has its time, level, message and annotations; inside a span, the trace and span ids", () =>
    Effect.gen(function*() {
      const [plain, spanned] = yield* recorded(
        Effect.zipRight(
          Effect.logInfo("started fixture#1").pipe(Effect.annotateLogs({ server: "fixture", instance: "fixture#1" })),
          Effect.logWarning("slow", 3).pipe(Effect.withSpan("tools/call echo"))
        )
      )
      assert.strictEqual(plain?.level, "info")
      assert.strictEqual(plain?.message, "started fixture#1")
      assert.strictEqual(plain?.server, "fixture")
      assert.strictEqual(plain?.instance, "fixture#1")
      assert.isString(plain?.time)
      assert.isUndefined(plain?.trace_id)
      assert.strictEqual(spanned?.level, "warn")
      assert.deepStrictEqual(spanned?.message, ["slow", 3])
      assert.match(String(spanned?.trace_id), /^[0-9a-f]+$/)
      assert.match(String(spanned?.span_id), /^[0-9a-f]+$/)
      // It is one JSON line.
      assert.notInclude(JSON.stringify(spanned), "\n")
    }))
})

/** What the process's logger writes while `effect` runs (it writes through console.error). */
const written = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const lines: Array<string> = []
      const original = globalThis.console.error
      globalThis.console.error = (...parts: Array<unknown>) => void lines.push(parts.map(String).join(" "))
      return { lines, original }
    }),
    ({ lines }) => Effect.as(effect, lines),
    ({ original }) => Effect.sync(() => void (globalThis.console.error = original))
  )

const fileSettings = (values: Record<string, unknown>) => Effect.provide(Settings.Settings, Settings.Settings.layer({ files: [{ file: "mcpx.json", values }] }))

describe("Logging.settle", () => {
  it.effect("the config's log.format applies from the moment the config is read; lines before are text", () =>
    Effect.gen(function*() {
      const settings = yield* fileSettings({ "log.format": "json" })
      const lines = yield* written(
        Effect.gen(function*() {
          yield* Effect.logWarning("before the config")
          yield* Logging.settle(settings)
          yield* Effect.logWarning("after the config")
        }).pipe(Effect.provide(Logging.layer("text", LogLevel.Info, false, false)))
      )
      assert.strictEqual(lines.length, 2, JSON.stringify(lines))
      assert.throws(() => JSON.parse(lines[0] ?? ""))
      assert.include(lines[0], "before the config")
      assert.deepInclude(JSON.parse(lines[1] ?? "{}"), { level: "warn", message: "after the config" })
    }))

  it.effect("--log-format or MCPX_LOG_FORMAT keeps precedence over the config", () =>
    Effect.gen(function*() {
      const settings = yield* fileSettings({ "log.format": "json" })
      const lines = yield* written(
        Effect.zipRight(Logging.settle(settings), Effect.logWarning("still text")).pipe(
          Effect.provide(Logging.layer("text", LogLevel.Info, false, true))
        )
      )
      assert.strictEqual(lines.length, 1)
      assert.throws(() => JSON.parse(lines[0] ?? ""))
    }))

  it.effect("log.format is a setting: text or json, text by default", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* (yield* fileSettings({})).get("log.format"), "text")
      const refused = yield* Effect.flip(Settings.make({ files: [{ file: "mcpx.json", values: { "log.format": "yaml" } }] }))
      assert.include(refused.message, "log.format")
    }))
})
