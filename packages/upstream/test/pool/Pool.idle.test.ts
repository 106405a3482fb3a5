import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as TestClock from "effect/TestClock"
import { call, describePool, dual, eventually, modern, next, serve, serverOf, setup, status, subscribe } from "./PoolHarness.js"

describePool(() => {
  describe("idle reaping", () => {
    it.scoped("pool/idle: an instance with no call in flight is closed at exactly idleTimeout, not before", () => {
      const { layer, connections } = setup(serve(dual))
      return Effect.gen(function*() {
        const events = yield* subscribe
        const server = serverOf("prefer-discover", { idleTimeout: "5 minutes" })
        yield* call(server, modern())
        yield* TestClock.adjust("299999 millis")
        assert.strictEqual(connections.get(1)?.ended(), "open")
        assert.strictEqual((yield* status()).instances.length, 1)
        yield* TestClock.adjust("1 millis")
        const stopped = yield* next(events, "server.stop")
        assert.deepStrictEqual([stopped.reason, stopped.key, stopped.uptimeMs], ["idle", "global", 300_000])
        assert.strictEqual(connections.get(1)?.ended(), "closed")
        assert.deepStrictEqual((yield* status()).instances, [])
      }).pipe(Effect.provide(layer))
    })

    it.scoped("pool/idle: a call that comes and goes while the instance is idle moves its closing to idleTimeout after that call", () => {
      const { layer, connections } = setup(serve(dual))
      return Effect.gen(function*() {
        const events = yield* subscribe
        const server = serverOf("prefer-discover", { idleTimeout: "1 minute" })
        yield* call(server, modern())
        yield* TestClock.adjust("40 seconds")
        yield* call(server, modern())
        // The first call's deadline passes with the instance idle again: it is not its deadline any more.
        yield* TestClock.adjust("59 seconds")
        assert.strictEqual(connections.get(1)?.ended(), "open")
        yield* TestClock.adjust("1 second")
        const stopped = yield* next(events, "server.stop")
        assert.deepStrictEqual([stopped.reason, stopped.uptimeMs], ["idle", 100_000])
        assert.strictEqual(connections.get(1)?.ended(), "closed")
      }).pipe(Effect.provide(layer))
    })

    it.effect("pool/idle: a call in flight keeps the instance, and the idle clock restarts when it ends", () => {
      const entered = Deferred.unsafeMake<number>(FiberId.none)
      const gate = Deferred.unsafeMake<void>(FiberId.none)
      let calls = 0
      const { layer, connections } = setup(serve(dual, { hold: () => ++calls === 2, entered, gate }))
      return Effect.gen(function*() {
        const server = serverOf("prefer-discover", { idleTimeout: "1 minute" })
        yield* call(server, modern())
        const long = yield* Effect.fork(call(server, modern()))
        yield* Deferred.await(entered)
        yield* TestClock.adjust("10 minutes")
        assert.strictEqual(connections.get(1)?.ended(), "open")
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(long)
        yield* TestClock.adjust("59 seconds")
        assert.strictEqual(connections.get(1)?.ended(), "open")
        yield* TestClock.adjust("1 second")
        yield* eventually("the idle instance is closed", Effect.sync(() => connections.get(1)?.ended() === "closed"))
      }).pipe(Effect.provide(layer))
    })
  })
})
