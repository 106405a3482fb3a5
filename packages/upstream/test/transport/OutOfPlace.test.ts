/**
 * `outOfPlace` (transport/internal/InPlace.ts): what a call run in place waits on that no cut in
 * place ends (a task's polls) runs in a fiber of its own, which a cut interrupts; the call then
 * ends as a cut wait does (CutInPlace), after the interrupted fiber's own cleanup has run.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { CutInPlace, enter, InPlaceCall, leave, outOfPlace, runningCount } from "../../src/transport/internal/InPlace.js"

/** Runs `body` as a call in place in this fiber, as the Pool does. */
const inPlace = <A, E>(call: InPlaceCall<string>, body: Effect.Effect<A, E>) =>
  Effect.withFiberRuntime<A, E>((fiber) => {
    const outer = enter(fiber, call)
    return Effect.ensuring(body, Effect.sync(() => leave(fiber, outer)))
  })

const cutInPlace = (exit: Exit.Exit<unknown, unknown>): boolean => {
  if (Exit.isSuccess(exit)) return false
  const defect = Cause.dieOption(exit.cause)
  return Option.isSome(defect) && defect.value instanceof CutInPlace
}

// One after another: they count the calls in place of the whole module (runningCount).
describe.sequential("outOfPlace", () => {
  it.effect("outside a call in place, the effect runs as it is, in this fiber", () =>
    Effect.gen(function*() {
      const here = yield* Effect.fiberId
      const there = yield* outOfPlace(Effect.fiberId)
      assert.deepStrictEqual(there, here)
    }))

  it.effect("in place and not cut, the effect's outcome is the call's", () =>
    Effect.gen(function*() {
      const call = new InPlaceCall<string>()
      assert.strictEqual(yield* inPlace(call, outOfPlace(Effect.succeed(7))), 7)
      const failed = yield* Effect.exit(inPlace(call, outOfPlace(Effect.fail("no"))))
      assert.deepStrictEqual(failed, Exit.fail("no"))
      assert.strictEqual(runningCount(), 0)
    }))

  it.effect("a cut interrupts the waiting effect, its cleanup runs first, and the call ends cut", () =>
    Effect.gen(function*() {
      const call = new InPlaceCall<string>()
      const waiting = yield* Deferred.make<void>()
      const cleaned: Array<string> = []
      const wait = Effect.zipRight(Deferred.succeed(waiting, undefined), Effect.never).pipe(
        Effect.onInterrupt(() => Effect.sync(() => void cleaned.push("cancelled upstream")))
      )
      const fiber = yield* Effect.fork(inPlace(call, outOfPlace(wait)))
      yield* Deferred.await(waiting)
      call.abort("deadline")
      const exit = yield* fiber.await
      assert.isTrue(cutInPlace(exit))
      assert.deepStrictEqual(cleaned, ["cancelled upstream"])
      assert.deepStrictEqual(call.error, { error: "deadline" })
    }))

  it.effect("a call cut before it gets there does not wait at all", () =>
    Effect.gen(function*() {
      const call = new InPlaceCall<string>()
      call.abort("crashed")
      const exit = yield* Effect.exit(inPlace(call, outOfPlace(Effect.never)))
      assert.isTrue(cutInPlace(exit))
    }))

  it.effect("the caller leaving interrupts the effect and waits for its cleanup", () =>
    Effect.gen(function*() {
      const call = new InPlaceCall<string>()
      const waiting = yield* Deferred.make<void>()
      const cleaned: Array<string> = []
      const wait = Effect.zipRight(Deferred.succeed(waiting, undefined), Effect.never).pipe(
        Effect.onInterrupt(() => Effect.sync(() => void cleaned.push("cancelled upstream")))
      )
      const fiber = yield* Effect.fork(inPlace(call, outOfPlace(wait)))
      yield* Deferred.await(waiting)
      const interrupted = yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.isInterrupted(interrupted))
      assert.deepStrictEqual(cleaned, ["cancelled upstream"])
      assert.isFalse(call.isCut)
    }))
})
