/**
 * A modern caller that declared nothing it can be asked: its call runs in its own request, and a
 * question it cannot take ends the call as PendingCalls would (-32021's capabilities, gathered
 * over `questions.gather`), through the pool's abort for the call (TestClock throughout).
 */
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import { type Abort, abortable } from "@mcpx-fx/cancel/Abortable"
import type { Question, QuestionHandler } from "@mcpx-fx/upstream/session/Questions"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { Observation } from "../src/CallObservation.js"
import type { CapabilitiesLacking, CutShort } from "../src/GatewayModel.js"
import { unaskable } from "../src/internal/Unaskable.js"
import * as QuestionFit from "../src/QuestionFit.js"

const gather = Duration.millis(50)
const nothing = QuestionFit.asker({})
const elicit: Question = { method: "elicitation/create", params: { message: "Your name?", requestedSchema: { type: "object" } } }
const sample: Question = { method: "sampling/createMessage", params: { messages: [], maxTokens: 1 } }

/** What an upstream call looks like to the lane: the pool's abortable around `body`, which may ask. */
const pooled = <A, E>(body: (questions: QuestionHandler) => Effect.Effect<A, E>) => (questions: QuestionHandler, cutShort: CutShort) =>
  abortable((abort: Abort<CapabilitiesLacking>) =>
    Effect.suspend(() => {
      const letGo = cutShort(abort)
      return Effect.ensuring(body(questions), Effect.sync(letGo))
    })
  )

/**
 * Asks in a fiber of its own, as a stdio session answers a question that names no call (in the
 * session's scope, so it outlives the call), and records the answer.
 */
const ask = (questions: QuestionHandler, q: Question, answers: Array<Either.Either<JsonObject, string>>) =>
  Effect.forkDaemon(Effect.map(Effect.either(questions(q)), (a) => void answers.push(Either.mapLeft(a, (e) => e.message))))

describe("Unaskable", () => {
  it("gateway/unaskable/a caller that declared no elicitation, sampling or roots can be asked nothing", () => {
    assert.isTrue(QuestionFit.asksNothing({}))
    assert.isTrue(QuestionFit.asksNothing({ experimental: {} }))
    assert.isFalse(QuestionFit.asksNothing({ elicitation: {} }))
    assert.isFalse(QuestionFit.asksNothing({ sampling: {} }))
    assert.isFalse(QuestionFit.asksNothing({ roots: {} }))
  })

  it.effect("gateway/unaskable/an upstream's roots/list is answered with none and the call goes on: roots are the client's, not the call's", () =>
    Effect.gen(function*() {
      const answers: Array<Either.Either<JsonObject, string>> = []
      const call = yield* Effect.fork(unaskable(
        nothing,
        Effect.succeed(gather),
        pooled((questions) =>
          Effect.gen(function*() {
            yield* ask(questions, { method: "roots/list", params: {} }, answers)
            yield* TestClock.adjust(gather)
            yield* TestClock.adjust(gather)
            return "finished"
          })
        )
      ))
      assert.strictEqual(yield* Fiber.join(call), "finished")
      assert.deepStrictEqual(answers.map((a) => Either.isRight(a) ? a.right : `refused: ${a.left}`), [{ roots: [] }])
    }))

  it.effect("gateway/unaskable/questions within the gather end the call with every capability they lack, each answered for the caller", () =>
    Effect.gen(function*() {
      const answers: Array<Either.Either<JsonObject, string>> = []
      const cancelled = yield* Deferred.make<void>()
      const call = yield* Effect.fork(unaskable(
        nothing,
        Effect.succeed(gather),
        pooled((questions) =>
          Effect.gen(function*() {
            yield* ask(questions, elicit, answers)
            yield* TestClock.adjust(Duration.millis(20))
            yield* ask(questions, sample, answers)
            return yield* Effect.never
          }).pipe(Effect.onInterrupt(() => Deferred.succeed(cancelled, undefined)))
        )
      ))
      yield* TestClock.adjust(Duration.millis(29))
      assert.isNull(yield* Effect.map(Fiber.poll(call), (o) => o._tag === "Some" ? o.value : null), "still gathering")
      yield* TestClock.adjust(Duration.millis(1))
      const failed = yield* Effect.flip(Fiber.join(call))
      assert.strictEqual(failed._tag, "CapabilitiesLacking")
      assert.deepStrictEqual(failed.requiredCapabilities, { elicitation: {}, sampling: {} })
      assert.isTrue(yield* Deferred.isDone(cancelled), "the upstream call was cancelled")
      // The elicitation cancelled, the sampling refused, as the caller cannot answer either.
      yield* TestClock.adjust(Duration.millis(1))
      assert.deepStrictEqual(answers.map((a) => Either.isRight(a) ? a.right : `refused: ${a.left}`), [
        { action: "cancel" },
        "refused: the caller cannot answer sampling/createMessage"
      ])
    }))

  it.effect("gateway/unaskable/an upstream call made before the one that asks (a listing) leaves the lane able to end the next", () =>
    Effect.gen(function*() {
      const answers: Array<Either.Either<JsonObject, string>> = []
      const call = yield* Effect.fork(unaskable(nothing, Effect.succeed(gather), (questions, cutShort) =>
        Effect.zipRight(
          pooled(() => Effect.succeed({ tools: [] }))(questions, cutShort),
          pooled((asked) => Effect.zipRight(ask(asked, elicit, answers), Effect.never))(questions, cutShort)
        )))
      yield* TestClock.adjust(gather)
      const failed = yield* Effect.flip(Fiber.join(call))
      assert.strictEqual(failed._tag, "CapabilitiesLacking")
      assert.deepStrictEqual(failed.requiredCapabilities, { elicitation: {} })
    }))

  it.effect("gateway/unaskable/ping is answered and the call's result returned", () =>
    Effect.gen(function*() {
      const result = yield* unaskable(
        nothing,
        Effect.succeed(gather),
        pooled((questions) => Effect.map(questions({ method: "ping", params: {} }), (pong) => ({ pong, content: [] })))
      )
      assert.deepStrictEqual(result, { pong: {}, content: [] })
    }))

  it.effect("gateway/unaskable/a call that ends on its own within the gather keeps its result", () =>
    Effect.gen(function*() {
      const answers: Array<Either.Either<JsonObject, string>> = []
      const finish = yield* Deferred.make<JsonObject>()
      const call = yield* Effect.fork(
        unaskable(nothing, Effect.succeed(gather), pooled((questions) => Effect.zipRight(ask(questions, elicit, answers), Deferred.await(finish))))
      )
      yield* TestClock.adjust(Duration.millis(10))
      yield* Deferred.succeed(finish, { content: [{ type: "text", text: "done anyway" }] })
      assert.deepStrictEqual(yield* Fiber.join(call), { content: [{ type: "text", text: "done anyway" }] })
      yield* TestClock.adjust(gather)
      assert.deepStrictEqual(answers, [Either.right({ action: "cancel" })])
    }))

  it.effect("gateway/unaskable/a question after the call ended is answered for the caller at once", () =>
    Effect.gen(function*() {
      let kept: QuestionHandler | undefined
      yield* unaskable(nothing, Effect.succeed(gather), pooled((questions) => Effect.sync(() => void (kept = questions))))
      assert.deepStrictEqual(yield* kept!(elicit), { action: "cancel" })
    }))

  it.effect("gateway/unaskable/told its end by the call's observation, the run is over once that call has ended", () =>
    Effect.gen(function*() {
      let kept: QuestionHandler | undefined
      const observation = new Observation("backend", "t", undefined, undefined, undefined)
      yield* unaskable(nothing, Effect.succeed(gather), pooled((questions) => Effect.sync(() => void (kept = questions))), observation)
      observation.end()
      const answer = yield* Effect.fork(kept!(elicit))
      yield* Effect.yieldNow()
      const polled = yield* Fiber.poll(answer)
      assert.isTrue(Option.isSome(polled), "answered at once, without waiting the gather")
      if (Option.isSome(polled)) assert.deepStrictEqual(Exit.isSuccess(polled.value) ? polled.value.value : "failed", { action: "cancel" })
    }))
})
