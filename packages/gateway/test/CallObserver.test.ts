/**
 * One observation per tool call: a host's call through the Backend, and the Gateway under it, is
 * timed once, and that one observation feeds the log line, the server metrics and the ring, each
 * with the same duration; the Gateway under an observed call only fills in its server and era.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Metrics from "@mcpx-fx/protocol/Metrics"
import * as Backend from "@mcpx-fx/server/Backend"
import * as TestGateway from "@mcpx-fx/testing/gateway/TestGateway"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Metric from "effect/Metric"
import * as CallObserver from "../src/CallObserver.js"
import * as GatewayBackend from "../src/GatewayBackend.js"

const servers = { alpha: TestGateway.era("dual") }

const serverCalls = Metric.value(Metric.tagged(Metrics.serverCalls, Metrics.MethodTag, "tools/call"))
const clientCalls = Metric.value(Metric.tagged(Metrics.clientCalls, Metrics.MethodTag, "tools/call"))

describe("one observation per call", () => {
  it.scopedLive("gateway/observer: a host's call is observed once, and the log line, the metrics and the ring agree", () =>
    Effect.gen(function*() {
      const kept: Array<CallObserver.ObservedCall> = []
      let asked = 0
      const ring: CallObserver.CallSink = {
        wanted: () => {
          asked++
          return true
        },
        record: (call) => void kept.push(call)
      }
      const backend = yield* Layer.build(Layer.provide(GatewayBackend.layer, Layer.succeed(CallObserver.CallSinks, { ring })))
        .pipe(Effect.map(Context.get(Backend.Backend)))
      const lines: Array<Record<string, unknown>> = []
      const capture = Logger.make<unknown, void>((o) => {
        const message = Array.isArray(o.message) ? o.message[0] : o.message
        if (typeof message === "string" && message.startsWith("tools/call ")) lines.push(Object.fromEntries(HashMap.toEntries(o.annotations)))
      })
      const before = (yield* serverCalls).count
      const beforeClient = (yield* clientCalls).count
      const caller: Backend.Caller = {
        revision: "2025-11-25",
        era: "legacy",
        clientCapabilities: {},
        sessionId: "s1",
        clientInfo: { name: "host", version: "1.0" }
      }
      yield* backend.callTool(caller, "alpha__echo", { message: "hi" }, undefined).pipe(
        Logger.withMinimumLogLevel(LogLevel.Info),
        Effect.provide(Logger.replace(Logger.defaultLogger, capture))
      )
      // One line, not one from the Backend and one from the Gateway under it.
      assert.strictEqual(lines.length, 1, JSON.stringify(lines))
      assert.strictEqual(kept.length, 1)
      assert.strictEqual(asked, 1)
      assert.strictEqual((yield* serverCalls).count - before, 1)
      // The upstream request is counted on the client side from the same observation.
      assert.strictEqual((yield* clientCalls).count - beforeClient, 1)
      const [call] = kept
      const [line] = lines
      // The Gateway under the Backend filled in what only it knows.
      assert.strictEqual(call?.observation.server, "alpha")
      assert.strictEqual(call?.observation.era, "modern")
      assert.deepStrictEqual(call?.observation.clientInfo, { name: "host", version: "1.0" })
      assert.strictEqual(line?.server, "alpha")
      assert.strictEqual(line?.era, "modern")
      assert.strictEqual(line?.caller, "s1")
      assert.strictEqual(line?.durationMs, call?.durationMs)
      assert.strictEqual(line?.outcome, "ok")
    }).pipe(Effect.provide(TestGateway.layer(servers))))

  it.scopedLive("gateway/observer: with nobody reading the ring and info below the level, nothing is built", () =>
    Effect.gen(function*() {
      const kept: Array<CallObserver.ObservedCall> = []
      const ring: CallObserver.CallSink = { wanted: () => false, record: (call) => void kept.push(call) }
      const backend = yield* Layer.build(Layer.provide(GatewayBackend.layer, Layer.succeed(CallObserver.CallSinks, { ring })))
        .pipe(Effect.map(Context.get(Backend.Backend)))
      const before = (yield* serverCalls).count
      yield* backend.callTool({ revision: "2026-07-28", era: "modern", clientCapabilities: {} }, "alpha__echo", { message: "x" }, undefined)
      assert.strictEqual(kept.length, 0)
      // The metrics count every call all the same.
      assert.strictEqual((yield* serverCalls).count - before, 1)
    }).pipe(Effect.provide(TestGateway.layer(servers))))

  it.effect("gateway/observer: what waits for a call's end is told once it ends, latest first, however it ended", () =>
    Effect.gen(function*() {
      const told: Array<string> = []
      const watched = (tool: string) => {
        const observation = new CallObserver.Observation("gateway", tool, undefined, undefined, undefined)
        observation.onEnd(() => told.push(`${tool}: first`))
        observation.onEnd(() => told.push(`${tool}: second`))
        return observation
      }
      const done = watched("done")
      yield* CallObserver.observe({}, done, false, Effect.sync(() => ({ heard: told.length })))
      const held = watched("held")
      const fiber = yield* Effect.fork(CallObserver.observe({}, held, false, Effect.never))
      yield* Effect.yieldNow()
      assert.deepStrictEqual(told, ["done: second", "done: first"], "a call still running has told nothing")
      yield* Fiber.interrupt(fiber)
      held.onEnd(() => told.push("held: after its end"))
      assert.deepStrictEqual(told, ["done: second", "done: first", "held: second", "held: first", "held: after its end"])
    }))
})
