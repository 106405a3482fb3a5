/**
 * A call that can be cut short from outside: the abort ends it at once with the aborter's error
 * and interrupts it (so its finalizers run); a call that ended first keeps its own outcome; and
 * interrupting the caller interrupts the call.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { type Abort, abortable } from "../src/Abortable.js"

describe("Abortable", () => {
  it.effect("cancel/abortable/an abort ends the call with its error and interrupts it", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      let abort: Abort<string> | undefined
      const fiber = yield* Effect.fork(abortable((a: Abort<string>) => {
        abort = a
        return Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
      }))
      yield* Effect.yieldNow()
      abort!("cut short")
      const exit = yield* Fiber.await(fiber)
      assert.deepStrictEqual(exit, Exit.fail("cut short"))
      assert.isTrue(yield* Deferred.isDone(interrupted))
    }))

  it.effect("cancel/abortable/a call that ended first keeps its outcome, whatever comes after", () =>
    Effect.gen(function*() {
      let abort: Abort<string> | undefined
      const value = yield* abortable((a: Abort<string>) => {
        abort = a
        return Effect.succeed(42)
      })
      abort!("too late")
      assert.strictEqual(value, 42)
      const failed = yield* Effect.exit(abortable(() => Effect.fail("own")))
      assert.deepStrictEqual(failed, Exit.fail("own"))
    }))

  it.effect("cancel/abortable/interrupting the caller interrupts the call", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(abortable(() =>
        Effect.zipRight(
          Deferred.succeed(started, undefined),
          Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
        )
      ))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      assert.isTrue(yield* Deferred.isDone(interrupted))
    }))

  it.effect("cancel/abortable/an abort before the call gets going still ends it", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(abortable((abort: Abort<string>) =>
        Effect.suspend(() => {
          abort("at once")
          return Effect.never
        })
      ))
      assert.deepStrictEqual(exit, Exit.fail("at once"))
    }))
})
