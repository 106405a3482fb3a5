import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import {
  call,
  describePool,
  dual,
  eventually,
  forkSleeping,
  keysOf,
  legacy,
  modern,
  next,
  poolErrorOf,
  serve,
  serverOf,
  setup,
  status,
  subscribe
} from "./PoolHarness.js"

describePool(({ ofModernServers }) => {
  describe("capacity", () => {
    if (ofModernServers) {
      it.scoped("pool/lru: a new key in a full lane evicts that lane's least-recently-used idle instance only", () => {
        const { layer, connections } = setup(serve(dual))
        return Effect.gen(function*() {
          const events = yield* subscribe
          const server = serverOf("follow", { max: 2 })
          assert.strictEqual((yield* call(server, modern("a"))).conn, 1) // t=0, modern lane
          assert.strictEqual((yield* call(server, legacy("x"))).conn, 2) // t=0, legacy lane: the oldest of all
          yield* TestClock.adjust("1 second")
          assert.strictEqual((yield* call(server, modern("b"))).conn, 3) // t=1
          yield* TestClock.adjust("1 second")
          assert.strictEqual((yield* call(server, modern("a"))).conn, 1) // t=2: a is now newer than b
          yield* TestClock.adjust("1 second")
          assert.strictEqual((yield* call(server, modern("c"))).conn, 4) // the modern lane is full
          const stopped = yield* next(events, "server.stop")
          assert.deepStrictEqual([stopped.lane, stopped.key, stopped.reason], ["modern", "session:b", "evicted"])
          assert.strictEqual(connections.get(3)?.ended(), "closed")
          assert.strictEqual(connections.get(1)?.ended(), "open")
          assert.strictEqual(connections.get(2)?.ended(), "open")
          const s = yield* status()
          assert.deepStrictEqual(keysOf(s, "modern"), ["session:a", "session:c"])
          assert.deepStrictEqual(keysOf(s, "legacy"), ["session:x"])
        }).pipe(Effect.provide(layer))
      })
    }

    it.effect("pool/saturated: a new key waits while every instance is busy, then fails at startTimeout", () => {
      const entered = Deferred.unsafeMake<number>(FiberId.none)
      const gate = Deferred.unsafeMake<void>(FiberId.none)
      const { layer, recorder } = setup(serve(dual, { hold: () => true, entered, gate }))
      return Effect.gen(function*() {
        const server = serverOf("prefer-discover", { max: 1, startTimeout: "10 seconds" })
        const busy = yield* Effect.fork(call(server, modern("a")))
        yield* Deferred.await(entered)
        const waiting = yield* forkSleeping(Effect.flip(call(server, modern("b"))))
        assert.strictEqual((yield* status()).lanes[0]?.queued, 1)
        yield* TestClock.adjust("9999 millis")
        assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)))
        yield* TestClock.adjust("1 millis")
        const e = poolErrorOf(yield* Fiber.join(waiting))
        assert.strictEqual(e.reason, "saturated")
        assert.include(e.message, "fake")
        assert.include(e.message, "saturated")
        assert.strictEqual(recorder.opened, 1)
        assert.strictEqual((yield* status()).lanes[0]?.queued, 0)
        yield* Deferred.succeed(gate, undefined)
        assert.strictEqual((yield* Fiber.join(busy)).conn, 1)
      }).pipe(Effect.provide(layer))
    })

    it.scoped("pool/saturated: a waiting key gets the instance that becomes idle first, which is evicted for it", () => {
      const entered = Deferred.unsafeMake<number>(FiberId.none)
      const gate = Deferred.unsafeMake<void>(FiberId.none)
      const { layer, recorder, connections } = setup(serve(dual, { hold: (n) => n === 1, entered, gate }))
      return Effect.gen(function*() {
        const events = yield* subscribe
        const server = serverOf("prefer-discover", { max: 1 })
        const busy = yield* Effect.fork(call(server, modern("a")))
        yield* Deferred.await(entered)
        const waiting = yield* Effect.fork(call(server, modern("b")))
        yield* eventually("b waits for a permit", Effect.map(status(), (s) => s.lanes[0]?.queued === 1))
        assert.strictEqual(recorder.opened, 1)
        yield* Deferred.succeed(gate, undefined)
        assert.strictEqual((yield* Fiber.join(busy)).conn, 1)
        assert.strictEqual((yield* Fiber.join(waiting)).conn, 2)
        const stopped = yield* next(events, "server.stop")
        assert.deepStrictEqual([stopped.key, stopped.reason], ["session:a", "evicted"])
        assert.strictEqual(connections.get(1)?.ended(), "closed")
        assert.deepStrictEqual(keysOf(yield* status()), ["session:b"])
      }).pipe(Effect.provide(layer))
    })
  })
})
