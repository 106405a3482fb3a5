/**
 * One log line per tool call at `info`, with the call's caller, tool, server, era, duration and
 * outcome as annotations; nothing below `info` (the default `warning` pays no line).
 */
import { assert, describe, it } from "@effect/vitest"
import * as TestGateway from "@mcpx-fx/testing/gateway/TestGateway"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { Gateway } from "../src/Gateway.js"

interface Line {
  readonly message: unknown
  readonly annotations: Record<string, unknown>
}

/** Runs `effect` at `level`, keeping the `tools/call` lines it logs. */
const lines = <A, E, R>(effect: Effect.Effect<A, E, R>, level: LogLevel.LogLevel) =>
  Effect.gen(function*() {
    const kept: Array<Line> = []
    const capture = Logger.make<unknown, void>((o) => {
      const message = Array.isArray(o.message) ? o.message[0] : o.message
      if (typeof message === "string" && message.startsWith("tools/call ")) {
        kept.push({ message, annotations: Object.fromEntries(HashMap.toEntries(o.annotations)) })
      }
    })
    yield* effect.pipe(Logger.withMinimumLogLevel(level), Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
    return kept
  })

const servers = { alpha: TestGateway.era("dual"), beta: TestGateway.era("legacy-32601") }

describe("a log line per call", () => {
  it.scopedLive("gateway/log/at info each tool call is one line: caller, tool, server, era, duration and outcome", () =>
    Effect.gen(function*() {
      const gateway = yield* Gateway
      const calls = Effect.all([
        gateway.callTool({ sessionId: "alice" }, "alpha__echo", { message: "hi" }),
        gateway.callTool({}, "beta__boom", {}),
        Effect.either(gateway.callTool({}, "alpha__nope", {}))
      ])
      const [echo, boom] = yield* lines(calls, LogLevel.Info)
      assert.strictEqual(echo?.annotations.caller, "alice")
      assert.strictEqual(echo?.annotations.tool, "alpha__echo")
      assert.strictEqual(echo?.annotations.server, "alpha")
      assert.strictEqual(echo?.annotations.era, "modern")
      assert.strictEqual(echo?.annotations.outcome, "ok")
      assert.isNumber(echo?.annotations.durationMs)
      assert.match(String(echo?.message), /^tools\/call alpha__echo ok in \d+ms$/)
      assert.strictEqual(boom?.annotations.caller, "anonymous")
      assert.strictEqual(boom?.annotations.era, "legacy")
      assert.strictEqual(boom?.annotations.outcome, "tool_error")
      // A name no server has never reached a server: it is refused before the call, unlogged here.
      assert.lengthOf(yield* lines(Effect.either(gateway.callTool({}, "alpha__nope", {})), LogLevel.Info), 0)
      assert.lengthOf(yield* lines(gateway.callTool({}, "alpha__echo", { message: "quiet" }), LogLevel.Warning), 0)
    }).pipe(Effect.provide(TestGateway.layer(servers))))
})
