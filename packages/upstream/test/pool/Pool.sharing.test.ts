import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import {
  busyOf,
  call,
  describePool,
  dual,
  eventually,
  heldDiscover,
  keysOf,
  modern,
  next,
  perCall,
  serve,
  serverOf,
  setup,
  status,
  subscribe
} from "./PoolHarness.js"

describePool(() => {
  describe("sharing", () => {
    it.effect("pool/shared-start: concurrent first calls share one start and one instance", () => {
      const gate = Deferred.unsafeMake<void>(FiberId.none)
      const held = heldDiscover(dual, gate)
      const { layer, recorder } = setup(serve(held))
      return Effect.gen(function*() {
        const server = serverOf("prefer-discover")
        const calls = yield* Effect.fork(Effect.all([call(server, modern()), call(server, modern()), call(server, modern())], {
          concurrency: "unbounded"
        }))
        yield* eventually("the start is under way", Effect.sync(() => recorder.sent.includes("1:server/discover")))
        yield* eventually("three callers share the starting instance", Effect.map(busyOf(), (n) => n === 3))
        assert.strictEqual(recorder.opened, 1)
        assert.strictEqual((yield* status()).instances[0]?.state, "starting")
        yield* Deferred.succeed(gate, undefined)
        const served = yield* Fiber.join(calls)
        assert.deepStrictEqual(served.map((s) => s.conn), [1, 1, 1])
        assert.strictEqual(recorder.opened, 1)
        assert.deepStrictEqual(recorder.sent.filter((m) => m.endsWith("server/discover")), ["1:server/discover"])
        const after = yield* status()
        assert.strictEqual(after.instances.length, 1)
        assert.strictEqual(after.instances[0]?.calls, 3)
        assert.strictEqual(after.instances[0]?.busy, 0)
      }).pipe(Effect.provide(layer))
    })

    it.effect("pool/keys: one instance per scope key, reused by later calls with the same key", () => {
      const { layer, recorder } = setup(serve(dual))
      return Effect.gen(function*() {
        const server = serverOf("prefer-discover", { max: 3 })
        const a = yield* call(server, modern("a"))
        const b = yield* call(server, modern("b"))
        const g = yield* call(server, modern())
        const a2 = yield* call(server, modern("a"))
        const b2 = yield* call(server, modern("b"))
        assert.deepStrictEqual([a.conn, b.conn, g.conn, a2.conn, b2.conn], [1, 2, 3, 1, 2])
        assert.strictEqual(recorder.opened, 3)
        assert.deepStrictEqual(keysOf(yield* status()), ["global", "session:a", "session:b"])
      }).pipe(Effect.provide(layer))
    })

    it.scoped("pool/call-key: a call key gets a fresh instance that is closed after the call", () => {
      const { layer, recorder, connections } = setup(serve(dual))
      return Effect.gen(function*() {
        const events = yield* subscribe
        const server = serverOf("prefer-discover", { max: 2 })
        const first = yield* call(server, perCall)
        const stop1 = yield* next(events, "server.stop")
        assert.strictEqual(stop1.reason, "released")
        assert.strictEqual(stop1.key, "call:1")
        const second = yield* call(server, perCall)
        const stop2 = yield* next(events, "server.stop")
        assert.strictEqual(stop2.key, "call:2")
        assert.deepStrictEqual([first.conn, second.conn], [1, 2])
        assert.strictEqual(recorder.opened, 2)
        assert.strictEqual(connections.get(1)?.ended(), "closed")
        assert.strictEqual(connections.get(2)?.ended(), "closed")
        assert.deepStrictEqual((yield* status()).instances, [])
      }).pipe(Effect.provide(layer))
    })
  })
})
