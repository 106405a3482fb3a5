/**
 * A call cut short and answered at once: the abort's outcome reaches the caller while the call's
 * cleanup is still running (and that cleanup does finish); an abort while the hook is being armed
 * cuts the call before it gets going; a call that ended first keeps its outcome.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type { Abort } from "../src/Abortable.js"
import { cuttable } from "../src/Cuttable.js"

describe("Cuttable", () => {
  it.effect("cancel/cuttable/an abort answers the caller while the call's cleanup still runs", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      const cleaned = yield* Deferred.make<void>()
      let abort: Abort<Exit.Exit<string>> | undefined
      const handled = Effect.zipRight(Deferred.succeed(started, undefined), Effect.never).pipe(
        Effect.onInterrupt(() => Effect.zipRight(Deferred.await(gate), Deferred.succeed(cleaned, undefined)))
      )
      const answered = yield* Deferred.make<Exit.Exit<string>>()
      yield* Effect.fork(
        Effect.flatMap(
          Effect.exit(cuttable<never, never, never, string>(handled, (a) => {
            abort = a
            return () => {}
          })),
          (exit) => Deferred.succeed(answered, exit)
        )
      )
      yield* Deferred.await(started)
      abort!(Exit.succeed("closed"))
      assert.deepStrictEqual(yield* Deferred.await(answered), Exit.succeed("closed"))
      assert.isFalse(yield* Deferred.isDone(cleaned))
      yield* Deferred.succeed(gate, undefined)
      yield* Deferred.await(cleaned)
    }))

  it.effect("cancel/cuttable/an abort while the hook is armed cuts the call at once, and the hook is let go of", () =>
    Effect.gen(function*() {
      let letGo = 0
      const exit = yield* Effect.exit(cuttable(Effect.never, (abort: Abort<Exit.Exit<never, string>>) => {
        abort(Exit.fail("at once"))
        return () => void letGo++
      }))
      assert.deepStrictEqual(exit, Exit.fail("at once"))
      assert.strictEqual(letGo, 1)
    }))

  it.effect("cancel/cuttable/a call that ended first keeps its outcome, whatever comes after", () =>
    Effect.gen(function*() {
      let abort: Abort<Exit.Exit<string>> | undefined
      let letGo = 0
      const fiber = yield* Effect.fork(cuttable(Effect.succeed("own"), (a: Abort<Exit.Exit<string>>) => {
        abort = a
        return () => void letGo++
      }))
      assert.strictEqual(yield* Fiber.join(fiber), "own")
      abort?.(Exit.succeed("too late"))
      assert.strictEqual(letGo, abort === undefined ? 0 : 1)
      assert.deepStrictEqual(yield* Effect.exit(cuttable(Effect.fail("boom"), () => () => {})), Exit.fail("boom"))
    }))
})
