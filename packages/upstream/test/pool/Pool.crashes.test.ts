import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import { call, describePool, dual, modern, next, poolErrorOf, serve, serverOf, setup, status, subscribe, tookInPlace, warm } from "./PoolHarness.js"

describePool(() => {
  describe("crashes", () => {
    it.scoped("pool/crash: the call in flight fails naming the server and its stderr, and the next call starts afresh", () => {
      const entered = Deferred.unsafeMake<number>(FiberId.none)
      const { layer, recorder, connections } = setup(serve(dual, { hold: (n) => n === 1, entered }))
      return Effect.gen(function*() {
        const events = yield* subscribe
        const server = serverOf("prefer-discover", {}, "crashy")
        yield* warm(server, modern())
        const inFlight = yield* Effect.fork(Effect.flip(call(server, modern())))
        yield* Deferred.await(entered)
        tookInPlace(recorder, ["1:tools/call"])
        yield* connections.get(1)!.crash({ reason: "the process exited", stderr: "panic: out of cheese\n", exitCode: 2 })
        const e = poolErrorOf(yield* Fiber.join(inFlight))
        assert.strictEqual(e.reason, "crashed")
        assert.strictEqual(e.server, "crashy")
        assert.include(e.message, "crashy")
        assert.include(e.message, "exit code 2")
        assert.include(e.message, "panic: out of cheese")

        const crash = yield* next(events, "server.crash")
        assert.deepStrictEqual([crash.server, crash.lane, crash.stderrTail], ["crashy", "modern", "panic: out of cheese\n"])
        const stop = yield* next(events, "server.stop")
        assert.strictEqual(stop.reason, "crash")
        assert.deepStrictEqual((yield* status("crashy")).instances, [])

        assert.strictEqual((yield* call(server, modern())).conn, 2)
        assert.strictEqual(recorder.opened, 2)
      }).pipe(Effect.provide(layer))
    })

    it.scoped("pool/crash: an idle instance that dies is dropped and replaced on the next call", () => {
      const { layer, recorder, connections } = setup(serve(dual))
      return Effect.gen(function*() {
        const events = yield* subscribe
        const server = serverOf("prefer-discover")
        yield* call(server, modern())
        yield* connections.get(1)!.crash({ stderr: "segfault" })
        const crash = yield* next(events, "server.crash")
        assert.strictEqual(crash.stderrTail, "segfault")
        yield* next(events, "server.stop")
        assert.strictEqual((yield* call(server, modern())).conn, 2)
        assert.strictEqual(recorder.opened, 2)
      }).pipe(Effect.provide(layer))
    })
  })
})
