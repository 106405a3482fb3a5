/**
 * pool.callTimeout counts the upstream's time, not the caller's: the clock stops while a question
 * the upstream asked waits for its answer (TestClock throughout).
 */
import { assert, describe, it } from "@effect/vitest"
import type { QuestionHandler } from "@mcpx-fx/upstream/session/Questions"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import type { Abort } from "@mcpx-fx/cancel/Abortable"
import { abortable } from "@mcpx-fx/cancel/Abortable"
import type { CallContext } from "@mcpx-fx/upstream/session/SessionModel"
import { callDeadline } from "../src/internal/CallTimeout.js"
import * as Deadlines from "../src/internal/Deadlines.js"

// The way Gateway arms a call's budget on the pool's abort hook, on its own.
/** Runs `use` within `budget` of upstream time, failing with `onTimeout()` past it (the call interrupted). */
const withCallTimeout = <C extends CallContext, A, E, T, R>(
  caller: C,
  budget: Duration.Duration,
  onTimeout: () => T,
  use: (caller: C) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | T, R> =>
  Effect.scoped(Effect.flatMap(Deadlines.make, (deadlines) => {
    const timed = callDeadline(deadlines, caller, budget, onTimeout)
    return abortable((abort: Abort<T>) =>
      Effect.suspend(() => {
        const disarm = timed.cutShort(abort)
        return Effect.ensuring(use(timed.caller), Effect.sync(disarm))
      })
    )
  }))

const budget = Duration.seconds(10)
const timedOut = () => "timed out" as const

describe("CallTimeout", () => {
  it.effect("gateway/timeout/a call that cannot ask is cut at the budget", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(withCallTimeout({}, budget, timedOut, () => Effect.never))
      yield* TestClock.adjust(Duration.seconds(9))
      assert.isNull(yield* Fiber.poll(fiber).pipe(Effect.map((o) => o._tag === "Some" ? o.value : null)))
      yield* TestClock.adjust(Duration.seconds(1))
      assert.strictEqual(yield* Effect.flip(Fiber.join(fiber)), "timed out")
    }))

  it.effect("gateway/timeout/time waiting for the caller's answer does not count; the upstream's own time does", () =>
    Effect.gen(function*() {
      const answer = yield* Deferred.make<{ readonly action: string }>()
      const asked = yield* Deferred.make<void>()
      const questions: QuestionHandler = () => Effect.zipRight(Deferred.succeed(asked, undefined), Deferred.await(answer))
      const cancelled = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(withCallTimeout({ questions }, budget, timedOut, (caller) =>
        Effect.gen(function*() {
          yield* Effect.sleep(Duration.seconds(6))
          yield* Effect.orDie(caller.questions!({ method: "elicitation/create", params: {} }))
          return yield* Effect.never
        }).pipe(Effect.onInterrupt(() => Deferred.succeed(cancelled, undefined)))))
      yield* TestClock.adjust(Duration.seconds(6))
      yield* Deferred.await(asked)
      // A person takes five minutes; the upstream has used 6 of its 10 seconds.
      yield* TestClock.adjust(Duration.minutes(5))
      assert.isFalse(yield* Deferred.isDone(cancelled))
      yield* Deferred.succeed(answer, { action: "cancel" })
      yield* TestClock.adjust(Duration.seconds(3))
      assert.isFalse(yield* Deferred.isDone(cancelled))
      yield* TestClock.adjust(Duration.seconds(1))
      assert.strictEqual(yield* Effect.flip(Fiber.join(fiber)), "timed out")
      assert.isTrue(yield* Deferred.isDone(cancelled))
    }))
})
