import { assert, describe, it } from "@effect/vitest"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as TestClock from "effect/TestClock"
import { type Caller, OneShot } from "../../src/pool/PoolModel.js"
import { err } from "../util/FakeTransport.js"
import { call, describePool, dual, forkSleeping, type Handshake, modern, next, poolErrorOf, serve, serverOf, setup, status, subscribe } from "./PoolHarness.js"

describePool(({ ofModernServers }) => {
  describe("start failures", () => {
    if (ofModernServers) {
      it.scoped("pool/cooldown: failed starts fail fast for a cooldown that doubles up to the cap and resets on success", () => {
        let healthy = false
        const flaky: Handshake = (req, n) => (healthy ? dual(req, n) : err(req, ErrorCode.MethodNotFound, "not today"))
        const { layer, recorder } = setup(serve(flaky))
        return Effect.gen(function*() {
          const events = yield* subscribe
          const server = serverOf("force-discover", { max: 2, cooldownBase: "1 second", cooldownCap: "4 seconds" })
          const fails = (caller: Caller = modern()) => Effect.map(Effect.flip(call(server, caller)), poolErrorOf)

          const first = yield* fails()
          assert.deepStrictEqual([first.reason, first.retryInMs], ["start-failed", 1000])
          assert.include(first.message, "fake")
          assert.include(first.message, "-32601")
          const failed = yield* next(events, "server.start.failed")
          assert.deepStrictEqual([failed.server, failed.lane, failed.failures, failed.retryInMs], ["fake", "modern", 1, 1000])

          const cooling = yield* fails()
          assert.deepStrictEqual([cooling.reason, cooling.retryInMs], ["cooling-down", 1000])
          assert.include(cooling.message, "fake")
          assert.include(cooling.message, "-32601")
          assert.strictEqual(recorder.opened, 1)

          yield* TestClock.adjust("999 millis")
          assert.deepStrictEqual([(yield* fails()).reason, recorder.opened], ["cooling-down", 1])
          yield* TestClock.adjust("1 millis")
          const second = yield* fails()
          assert.deepStrictEqual([second.reason, second.retryInMs, recorder.opened], ["start-failed", 2000, 2])

          yield* TestClock.adjust("1999 millis")
          assert.deepStrictEqual([(yield* fails()).retryInMs, recorder.opened], [1, 2])
          yield* TestClock.adjust("1 millis")
          assert.strictEqual((yield* fails()).retryInMs, 4000)
          yield* TestClock.adjust("4 seconds")
          assert.strictEqual((yield* fails()).retryInMs, 4000) // capped
          const s = yield* status()
          assert.strictEqual(s.lanes[0]?.cooldown?.failures, 4)
          assert.include(s.lanes[0]?.cooldown?.lastFailure ?? "", "-32601")

          healthy = true
          yield* TestClock.adjust("4 seconds")
          assert.strictEqual((yield* call(server, modern())).conn, 5)
          assert.isUndefined((yield* status()).lanes[0]?.cooldown)

          healthy = false
          const afterReset = yield* fails(modern("other"))
          assert.deepStrictEqual([afterReset.reason, afterReset.retryInMs], ["start-failed", 1000])
          // The live instance still serves its own key during the cooldown.
          assert.strictEqual((yield* call(server, modern())).conn, 5)
        }).pipe(Effect.provide(layer))
      })
    }

    it.scoped("pool/one-shot: a failed start names no next start, and is logged at debug level only", () => {
      const refusing: Handshake = (req) => err(req, ErrorCode.MethodNotFound, "not today")
      const { layer } = setup(serve(refusing))
      const logged: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => logged.push(`${logLevel._tag} ${String(message)}`))
      return Effect.gen(function*() {
        const server = serverOf("force-discover")
        const first = poolErrorOf(yield* Effect.flip(call(server, modern())))
        assert.strictEqual(first.reason, "start-failed")
        assert.isUndefined(first.retryInMs)
        assert.notInclude(first.message, "next start")
        const cooling = poolErrorOf(yield* Effect.flip(call(server, modern())))
        assert.strictEqual(cooling.reason, "cooling-down")
        assert.isUndefined(cooling.retryInMs)
        assert.notInclude(cooling.message, "next start")
        const failures = logged.filter((l) => l.includes("start failed"))
        assert.strictEqual(failures.length, 1, logged.join("\n"))
        assert.match(failures[0]!, /^Debug start failed \(.*-32601.*\)$/)
      }).pipe(
        // The logger is provided outside the layer so it also sees the layer being built.
        // @effect-diagnostics-next-line multipleEffectProvide:off
        Effect.provide(layer.pipe(Layer.provide(Layer.succeed(OneShot, true)))),
        Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
        Logger.withMinimumLogLevel(LogLevel.All)
      )
    })

    if (ofModernServers) {
      it.effect("pool/start-timeout: a start that takes longer than startTimeout fails and cools down", () => {
        const silent: Handshake = (req, n) => (req.method === "server/discover" ? Effect.never : dual(req, n))
        const { layer } = setup(serve(silent))
        return Effect.gen(function*() {
          const server = serverOf("force-discover", { startTimeout: "30 seconds" })
          const fiber = yield* forkSleeping(Effect.flip(call(server, modern())))
          yield* TestClock.adjust("30 seconds")
          const e = poolErrorOf(yield* Fiber.join(fiber))
          assert.strictEqual(e.reason, "start-failed")
          assert.include(e.message, "did not start within 30s")
          assert.strictEqual(e.retryInMs, 1000)
        }).pipe(Effect.provide(layer))
      })
    }
  })
})
