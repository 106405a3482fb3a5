import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { Pool } from "../../src/pool/Pool.js"
import {
  busyOf,
  call,
  describePool,
  dual,
  eventually,
  heldDiscover,
  modern,
  serve,
  serverOf,
  setup,
  status,
  statusOf,
  tookInPlace,
  warm
} from "./PoolHarness.js"

describePool(({ ownEra }) => {
  describe("interruption", () => {
    it.effect("pool/interrupt: interrupting a call releases the instance without closing it", () => {
      const entered = Deferred.unsafeMake<number>(FiberId.none)
      let calls = 0
      const { layer, recorder, connections } = setup(serve(dual, { hold: () => ++calls === 1, entered }))
      return Effect.gen(function*() {
        const server = serverOf("prefer-discover")
        yield* warm(server, modern())
        const fiber = yield* Effect.fork(call(server, modern()))
        yield* Deferred.await(entered)
        tookInPlace(recorder, ["1:tools/call"])
        assert.strictEqual((yield* status()).instances[0]?.busy, 1)
        yield* Fiber.interrupt(fiber)
        assert.deepStrictEqual(recorder.cancelled, ["1:tools/call"])
        const s = yield* status()
        assert.deepStrictEqual(s.instances.map((i) => [i.busy, i.state]), [[0, "ready"]])
        assert.strictEqual(connections.get(1)?.ended(), "open")
        assert.strictEqual((yield* call(server, modern())).conn, 1)
        assert.strictEqual(recorder.opened, 1)
      }).pipe(Effect.provide(layer))
    })

    it.effect("pool/interrupt: interrupting a caller waiting for a start leaves the start to the others", () => {
      const gate = Deferred.unsafeMake<void>(FiberId.none)
      const held = heldDiscover(dual, gate)
      const { layer, recorder } = setup(serve(held))
      return Effect.gen(function*() {
        const server = serverOf("prefer-discover")
        const first = yield* Effect.fork(call(server, modern()))
        const second = yield* Effect.fork(call(server, modern()))
        yield* eventually("both wait", Effect.map(busyOf(), (n) => n === 2))
        yield* Fiber.interrupt(first)
        assert.strictEqual((yield* status()).instances[0]?.busy, 1)
        yield* Deferred.succeed(gate, undefined)
        assert.strictEqual((yield* Fiber.join(second)).conn, 1)
        assert.strictEqual(recorder.opened, 1)
      }).pipe(Effect.provide(layer))
    })

    // The host-stdio bug: tools/call then its notifications/cancelled, both before the upstream had
    // started, and the tools/list that reached the pool after them was never answered. Where the
    // interruption lands in the start is a matter of scheduling, so every step of it is tried.
    const startSteps = Array.from({ length: 16 }, (_, step) => step)

    it.effect.each(startSteps)(
      "pool/start/a caller interrupted after %i scheduler steps of the start it began leaves the lane to the next caller",
      (step) => {
        const { layer, recorder } = setup(serve(dual))
        return Effect.gen(function*() {
          const server = serverOf("prefer-discover", { startTimeout: "10 seconds" })
          const doomed = yield* Effect.fork(call(server, modern()))
          for (let i = 0; i < step; i++) yield* Effect.yieldNow()
          yield* Fiber.interrupt(doomed)
          const next = yield* Effect.fork(Effect.either(Effect.flatMap(Pool, (p) => p.withSession(server, modern(), (s) => Effect.succeed(s.era)))))
          // A lane that lost its permit leaves the next caller queued until startTimeout, then saturated.
          yield* eventually(
            "the next caller is served, or waits for a permit",
            Effect.zipWith(Fiber.poll(next), statusOf("fake"), (done, s) => Option.isSome(done) || s?.lanes[0]?.queued === 1)
          )
          yield* TestClock.adjust("10 seconds")
          const served = yield* Fiber.join(next)
          assert.deepStrictEqual(served, Either.right(ownEra))
          const s = yield* status()
          assert.deepStrictEqual([s.lanes[0]?.live, s.lanes[0]?.queued], [1, 0])
          assert.deepStrictEqual(s.instances.map((i) => [i.state, i.busy]), [["ready", 0]])
          assert.isAtMost(recorder.opened, 2)
        }).pipe(Effect.provide(layer))
      }
    )

    it.effect.each(startSteps)(
      "pool/start/a waiter is served when the caller that started the instance is interrupted after %i scheduler steps",
      (step) => {
        const { layer, recorder } = setup(serve(dual))
        return Effect.gen(function*() {
          const server = serverOf("prefer-discover", { startTimeout: "10 seconds" })
          const starter = yield* Effect.fork(call(server, modern()))
          // As the gateway's listing fans out: the waiter runs in a fiber of its own.
          const waiter = yield* Effect.fork(Effect.either(Effect.forEach(
            [server],
            (srv) => Effect.flatMap(Pool, (p) => p.withSession(srv, modern(), (s) => Effect.succeed(s.era))),
            { concurrency: "unbounded" }
          )))
          for (let i = 0; i < step; i++) yield* Effect.yieldNow()
          yield* Fiber.interrupt(starter)
          yield* eventually(
            "the waiter is served, or waits for a permit",
            Effect.zipWith(Fiber.poll(waiter), statusOf("fake"), (done, s) => Option.isSome(done) || s?.lanes[0]?.queued === 1)
          )
          yield* TestClock.adjust("10 seconds")
          assert.deepStrictEqual(yield* Fiber.join(waiter), Either.right([ownEra]))
          const s = yield* status()
          assert.deepStrictEqual([s.lanes[0]?.live, s.lanes[0]?.queued], [1, 0])
          assert.isAtMost(recorder.opened, 2)
        }).pipe(Effect.provide(layer))
      }
    )
  })
})
