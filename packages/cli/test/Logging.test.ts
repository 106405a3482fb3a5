/** `--log-format json`: what one log line holds, inside a span and out of one. */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
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
