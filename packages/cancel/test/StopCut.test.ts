/**
 * A moment of a stop cutting requests short: one still running is answered with the cut's answer
 * and interrupted (its finalizer runs, as an upstream cancel would); one that ended first keeps its
 * own answer; a request that starts after the moment is cut at once; the caller's interruption
 * reaches the request.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as StopCut from "../src/StopCut.js"

describe("StopCut", () => {
  it.scoped("cancel/stopCut/a running request is answered by the cut and interrupted when the moment comes", () =>
    Effect.gen(function*() {
      const moment = yield* Deferred.make<void>()
      const cut = yield* StopCut.make(Deferred.await(moment))
      const cancelled = yield* Deferred.make<void>()
      const running = yield* Effect.fork(cut(Effect.onInterrupt(Effect.never, () => Deferred.succeed(cancelled, undefined)), () => "cut"))
      yield* Effect.yieldNow()
      assert.isTrue((yield* Fiber.poll(running))._tag === "None")
      yield* Deferred.succeed(moment, undefined)
      assert.strictEqual(yield* Fiber.join(running), "cut")
      yield* Deferred.await(cancelled)
    }))

  it.scoped("cancel/stopCut/a request that ended first keeps its answer, one started after the moment is cut at once", () =>
    Effect.gen(function*() {
      const moment = yield* Deferred.make<void>()
      const cut = yield* StopCut.make(Deferred.await(moment))
      assert.strictEqual(yield* cut(Effect.succeed("own"), () => "cut"), "own")
      const failed = yield* Effect.either(cut(Effect.fail("boom"), () => "cut"))
      assert.deepStrictEqual(failed._tag === "Left" ? failed.left : undefined, "boom")
      yield* Deferred.succeed(moment, undefined)
      yield* Effect.yieldNow()
      assert.strictEqual(yield* cut(Effect.never, () => "cut"), "cut")
    }))

  it.scoped("cancel/stopCut/interrupting the caller interrupts the request", () =>
    Effect.gen(function*() {
      const cut = yield* StopCut.make(Effect.never)
      const started = yield* Deferred.make<void>()
      const cancelled = yield* Deferred.make<void>()
      const request = Effect.zipRight(Deferred.succeed(started, undefined), Effect.never).pipe(
        Effect.onInterrupt(() => Deferred.succeed(cancelled, undefined))
      )
      const running = yield* Effect.fork(cut(request, () => "cut"))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(running)
      yield* Deferred.await(cancelled)
      assert.strictEqual(StopCut.never(Effect.succeed(1), () => 2).pipe(Effect.runSync), 1)
    }))
})
