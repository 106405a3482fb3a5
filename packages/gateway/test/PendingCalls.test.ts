/**
 * PendingCalls on its own, with calls made of effects that ask through the handler they are given
 * (no processes), and the TestClock for the gathering window and the TTL.
 */
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type { Question, QuestionHandler } from "@mcpx-fx/upstream/session/Questions"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import { PendingCalls } from "../src/PendingCalls.js"
import type { Move, PendingError } from "../src/PendingQuestions.js"
import * as QuestionFit from "../src/QuestionFit.js"
import * as Settings from "@mcpx-fx/config/Settings"

const bounds = { ttl: Duration.minutes(10), maxRounds: 3, maxPending: 2, maxQuestions: 32, gather: Duration.millis(50) }
const provide = <A, E, R>(effect: Effect.Effect<A, E, R>, overrides: Partial<typeof bounds> = {}) =>
  Effect.provide(effect, PendingCalls.layerWith({ ...bounds, ...overrides }))

const form = (field: string): Question => ({
  method: "elicitation/create",
  params: { message: `your ${field}?`, requestedSchema: { type: "object", properties: { [field]: { type: "string" } }, required: [field] } }
})
const sampling: Question = { method: "sampling/createMessage", params: { messages: [], maxTokens: 10 } }
const roots: Question = { method: "roots/list", params: {} }
const accept = (content: JsonObject) => ({ action: "accept", content })
const text = (value: unknown): JsonObject => ({ content: [{ type: "text", text: JSON.stringify(value) }] })

/** Runs `effect` in a fiber and moves the TestClock on until it ends (each step one gathering window). */
const drive = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(effect)
    for (let i = 0; i < 200; i++) {
      yield* Effect.yieldNow()
      const done = yield* Fiber.poll(fiber)
      if (done._tag === "Some") return yield* done.value
      yield* TestClock.adjust(bounds.gather)
    }
    return yield* Effect.dieMessage("the effect did not end")
  })

const asking = (move: Move) => {
  assert.strictEqual(move._tag, "Asking", JSON.stringify(move))
  return move as Extract<Move, { readonly _tag: "Asking" }>
}
const complete = (move: Move) => {
  assert.strictEqual(move._tag, "Complete", JSON.stringify(move))
  return (move as Extract<Move, { readonly _tag: "Complete" }>).result
}
const refusal = (e: PendingError) => {
  assert.strictEqual(e._tag, "PendingCallRefused", JSON.stringify(e))
  return e._tag === "PendingCallRefused" ? e.reason : undefined
}

const everything = QuestionFit.asker({ elicitation: {}, sampling: {}, roots: {} })

describe("PendingCalls", () => {
  it.effect("questions/a call that asks nothing completes at once and is not kept", () =>
    provide(Effect.gen(function*() {
      const pending = yield* PendingCalls
      const move = yield* pending.begin("t", everything, () => Effect.succeed(text("done")))
      assert.deepStrictEqual(complete(move), text("done"))
      assert.deepStrictEqual(yield* pending.list, [])
    })))

  it.effect("questions/a question ends the first request with input_required, and the answer finishes the call", () =>
    provide(Effect.gen(function*() {
      const pending = yield* PendingCalls
      const run = (ask: QuestionHandler) => Effect.map(Effect.orDie(ask(form("name"))), text)
      const first = asking(yield* drive(pending.begin("srv__ask", everything, run)))
      assert.strictEqual(first.round, 1)
      assert.deepStrictEqual(first.questions.map((q) => [q.key, q.method]), [["elicitation_1", "elicitation/create"]])
      assert.isTrue(first.handle.startsWith(`mcpx-pending:${pending.instance}:`))
      assert.deepStrictEqual((yield* pending.list).map((p) => p.state), ["asking"])
      const done = yield* drive(pending.resume({ handle: first.handle }, { elicitation_1: accept({ name: "Ada" }) }))
      assert.deepStrictEqual(complete(done), text(accept({ name: "Ada" })))
      assert.deepStrictEqual(yield* pending.list, [])
    })))

  it.effect("questions/questions asked at once come in one round; an answer to only some gets the rest asked again", () =>
    provide(Effect.gen(function*() {
      const pending = yield* PendingCalls
      const run = (ask: QuestionHandler) =>
        Effect.map(Effect.orDie(Effect.all([ask(form("name")), ask(sampling), ask(roots)], { concurrency: "unbounded" })), text)
      const first = asking(yield* drive(pending.begin("t", everything, run)))
      assert.deepStrictEqual(first.questions.map((q) => q.method).sort(), ["elicitation/create", "roots/list", "sampling/createMessage"])
      const byMethod = Object.fromEntries(first.questions.map((q) => [q.method, q.key]))
      const second = asking(
        yield* drive(pending.resume({ handle: first.handle }, {
          [byMethod["roots/list"]!]: { roots: [{ uri: "file:///x" }] }
        }))
      )
      assert.strictEqual(second.round, 2)
      assert.deepStrictEqual(second.questions.map((q) => q.method).sort(), ["elicitation/create", "sampling/createMessage"])
      const done = yield* drive(pending.resume({ handle: second.handle }, {
        [byMethod["elicitation/create"]!]: { action: "decline" },
        [byMethod["sampling/createMessage"]!]: { role: "assistant", model: "m", content: { type: "text", text: "hi" } }
      }))
      assert.deepStrictEqual(JSON.parse(String((complete(done).content as Array<{ text: string }>)[0]!.text)), [
        { action: "decline" },
        { role: "assistant", model: "m", content: { type: "text", text: "hi" } },
        { roots: [{ uri: "file:///x" }] }
      ])
    })))

  it.effect("questions/a call that asks more than maxQuestions at once is cancelled; its questions are answered for the caller", () =>
    provide(
      Effect.gen(function*() {
        const pending = yield* PendingCalls
        const answers: Array<unknown> = []
        // An upstream that asks a thousand questions at once, and says what each was answered.
        const run = (ask: QuestionHandler) =>
          Effect.as(
            Effect.forEach(
              Array.from({ length: 1000 }, (_, i) => i),
              (i) => Effect.tap(Effect.either(ask(form(`f${i}`))), (a) => Effect.sync(() => void answers.push(a))),
              { concurrency: "unbounded", discard: true }
            ),
            text("done")
          )
        const outcome = yield* Effect.either(drive(pending.begin("srv__flood", everything, run)))
        assert.isTrue(Either.isLeft(outcome))
        if (Either.isLeft(outcome)) {
          assert.strictEqual(refusal(outcome.left), "rounds")
          assert.include(outcome.left.message, "questions.maxQuestions")
        }
        assert.deepStrictEqual(yield* pending.list, [])
        // None of the thousand was left waiting, and none reached a caller.
        assert.strictEqual(answers.length, 1000)
      }),
      { maxQuestions: 4 }
    ))

  it.effect("questions/a handle is good for one round: replayed, unknown and foreign ones are refused, saying which", () =>
    provide(Effect.gen(function*() {
      const pending = yield* PendingCalls
      const run = (ask: QuestionHandler) =>
        Effect.gen(function*() {
          const a = yield* Effect.orDie(ask(form("first")))
          const b = yield* Effect.orDie(ask(form("second")))
          return text([a, b])
        })
      const one = asking(yield* drive(pending.begin("t", everything, run)))
      const two = asking(yield* drive(pending.resume({ handle: one.handle }, { [one.questions[0]!.key]: accept({ first: "1" }) })))
      assert.strictEqual(refusal(yield* Effect.flip(pending.resume({ handle: one.handle }, {}))), "used")
      const foreign = two.handle.replace(`:${pending.instance}:`, ":someone-else:")
      assert.strictEqual(refusal(yield* Effect.flip(pending.resume({ handle: foreign }, {}))), "other-instance")
      assert.strictEqual(refusal(yield* Effect.flip(pending.resume({ handle: "mcpx-pending:x" }, {}))), "unknown")
      const done = yield* drive(pending.resume({ handle: two.handle }, { [two.questions[0]!.key]: accept({ second: "2" }) }))
      assert.deepStrictEqual(complete(done), text([accept({ first: "1" }), accept({ second: "2" })]))
      const replayed = yield* Effect.flip(pending.resume({ handle: two.handle }, {}))
      assert.strictEqual(refusal(replayed), "used")
      assert.include(replayed.message, "completed")
    })))

  it.effect("questions/a handle of a call its caller walked away from is refused as abandoned", () =>
    provide(Effect.gen(function*() {
      const pending = yield* PendingCalls
      const run = (ask: QuestionHandler) => Effect.map(Effect.orDie(ask(form("name"))), text)
      const first = asking(yield* drive(pending.begin("t", everything, run)))
      assert.isTrue(yield* pending.abandon(first.id))
      const e = yield* Effect.flip(pending.resume({ handle: first.handle }, {}))
      assert.strictEqual(refusal(e), "abandoned")
      // Asked for by id (/v1/ask) a call that is gone is unknown, its detail saying how it ended.
      const polled = yield* Effect.flip(pending.poll(first.id, "1 second"))
      assert.strictEqual(refusal(polled), "unknown")
      assert.include(polled.message, "abandoned")
    })))

  it.effect("questions/an answer that does not fit its question is refused and changes nothing", () =>
    provide(Effect.gen(function*() {
      const pending = yield* PendingCalls
      const run = (ask: QuestionHandler) => Effect.map(Effect.orDie(ask(form("name"))), text)
      const first = asking(yield* drive(pending.begin("t", everything, run)))
      const key = first.questions[0]!.key
      for (const bad of [12345, { action: "maybe" }, { action: "accept", content: { name: 7 } }, { action: "accept", content: {} }]) {
        const e = yield* Effect.flip(pending.resume({ handle: first.handle }, { [key]: bad }))
        assert.strictEqual(refusal(e), "invalid-answer", JSON.stringify(bad))
        assert.include(e.message, key)
      }
      const done = yield* drive(pending.resume({ handle: first.handle }, { [key]: accept({ name: "Ada" }), unrelated: { x: 1 } }))
      assert.deepStrictEqual(complete(done), text(accept({ name: "Ada" })))
    })))

  it.effect("questions/past maxRounds the call is refused naming the bound, and the upstream call is cancelled", () =>
    provide(Effect.gen(function*() {
      const pending = yield* PendingCalls
      const cancelled = yield* Deferred.make<void>()
      const run = (ask: QuestionHandler) =>
        Effect.forever(Effect.orDie(ask(form("again")))).pipe(Effect.onInterrupt(() => Deferred.succeed(cancelled, undefined)))
      let move = yield* drive(pending.begin("srv__loop", everything, run))
      for (let round = 1; round <= 3; round++) {
        const a = asking(move)
        assert.strictEqual(a.round, round)
        const next = yield* Effect.either(drive(pending.resume({ handle: a.handle }, { [a.questions[0]!.key]: { action: "decline" } })))
        if (round < 3) {
          assert.strictEqual(next._tag, "Right")
          if (next._tag === "Right") move = next.right
        } else {
          assert.strictEqual(next._tag, "Left")
          if (next._tag === "Left") {
            assert.strictEqual(refusal(next.left), "rounds")
            assert.include(next.left.message, "questions.maxRounds")
          }
        }
      }
      yield* Deferred.await(cancelled)
    })))

  it.scoped("questions/a caller that never comes back: at the TTL its question is answered cancel and the call ended", () =>
    provide(
      Effect.gen(function*() {
        const pending = yield* PendingCalls
        const events = yield* pending.events
        const answered = yield* Deferred.make<unknown>()
        // As a Session does, the question is answered in a fiber of its own, which outlives the call.
        const run = (ask: QuestionHandler) =>
          Effect.zipRight(Effect.forkDaemon(Effect.flatMap(Effect.either(ask(form("name"))), (a) => Deferred.succeed(answered, a))), Effect.never)
        const first = asking(yield* drive(pending.begin("srv__ask", everything, run)))
        yield* TestClock.adjust(Duration.minutes(9))
        assert.isFalse(yield* Deferred.isDone(answered))
        yield* TestClock.adjust(Duration.minutes(1))
        const a = yield* Deferred.await(answered)
        assert.deepStrictEqual(a, Either.right({ action: "cancel" }))
        const expired = yield* Queue.take(events)
        assert.deepInclude(expired, { type: "question.expired", server: "srv__ask" })
        const late = yield* Effect.flip(pending.resume({ handle: first.handle }, {}))
        assert.strictEqual(refusal(late), "expired")
        assert.include(late.message, "questions.ttl")
        assert.deepStrictEqual(yield* pending.list, [])
      }),
      { ttl: Duration.minutes(10) }
    ))

  it.effect("questions/only undeclared questions fail the call with their capabilities; with an askable one they are answered for the caller", () =>
    provide(Effect.gen(function*() {
      const pending = yield* PendingCalls
      const samplingOnly = QuestionFit.asker({ sampling: {} })
      const cancelled = yield* Deferred.make<void>()
      const lacking = yield* Effect.flip(
        drive(pending.begin("t", samplingOnly, (ask) =>
          Effect.map(Effect.either(ask(form("name"))), text).pipe(
            Effect.zipLeft(Effect.never),
            Effect.onInterrupt(() => Deferred.succeed(cancelled, undefined))
          )))
      )
      assert.strictEqual(lacking._tag, "CapabilitiesLacking")
      if (lacking._tag === "CapabilitiesLacking") assert.deepStrictEqual(lacking.requiredCapabilities, { elicitation: {} })
      yield* Deferred.await(cancelled)

      const mixed = (ask: QuestionHandler) =>
        Effect.map(Effect.all([Effect.either(ask(form("name"))), Effect.either(ask(roots)), Effect.orDie(ask(sampling))], { concurrency: "unbounded" }), text)
      const first = asking(yield* drive(pending.begin("t", samplingOnly, mixed)))
      assert.deepStrictEqual(first.questions.map((q) => q.method), ["sampling/createMessage"])
      const reply = { role: "assistant", model: "m", content: { type: "text", text: "ok" } }
      const done = complete(yield* drive(pending.resume({ handle: first.handle }, { [first.questions[0]!.key]: reply })))
      const [elicited, rooted, sampled] = JSON.parse(String((done.content as Array<{ text: string }>)[0]!.text))
      assert.deepStrictEqual(elicited, { _id: "Either", _tag: "Right", right: { action: "cancel" } })
      assert.deepStrictEqual(rooted, { _id: "Either", _tag: "Right", right: { roots: [] } })
      assert.deepStrictEqual(sampled, reply)
    })))

  it.effect("questions/a caller that leaves mid-wait ends the call upstream", () =>
    provide(Effect.gen(function*() {
      const pending = yield* PendingCalls
      const started = yield* Deferred.make<void>()
      const cancelled = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(pending.begin("t", everything, () =>
        Effect.zipRight(Deferred.succeed(started, undefined), Effect.never).pipe(Effect.onInterrupt(() =>
          Deferred.succeed(cancelled, undefined)
        ))))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      yield* Deferred.await(cancelled)
    })))

  it.effect("questions/past maxPending a call that asks is cancelled with an error; others keep theirs", () =>
    provide(Effect.gen(function*() {
      const pending = yield* PendingCalls
      const run = (ask: QuestionHandler) => Effect.map(Effect.orDie(ask(form("name"))), text)
      const a = asking(yield* drive(pending.begin("a", everything, run)))
      asking(yield* drive(pending.begin("b", everything, run)))
      assert.strictEqual(refusal(yield* Effect.flip(drive(pending.begin("c", everything, run)))), "full")
      const done = yield* drive(pending.resume({ handle: a.handle }, { [a.questions[0]!.key]: { action: "cancel" } }))
      assert.deepStrictEqual(complete(done), text({ action: "cancel" }))
    })))

  it.effect("questions/with a wait a slow call is left running, its result kept until the caller comes for it", () =>
    provide(Effect.gen(function*() {
      const pending = yield* PendingCalls
      const release = yield* Deferred.make<void>()
      const move = yield* drive(pending.begin("t", everything, () => Effect.as(Deferred.await(release), text("late")), "1 second"))
      assert.strictEqual(move._tag, "Running")
      const id = move._tag === "Running" ? move.id : ""
      assert.deepStrictEqual((yield* pending.list).map((p) => [p.id, p.state]), [[id, "running"]])
      yield* Deferred.succeed(release, undefined)
      yield* Effect.yieldNow()
      assert.deepStrictEqual((yield* pending.list).map((p) => p.state), ["done"])
      assert.deepStrictEqual(complete(yield* drive(pending.poll(id, "1 second"))), text("late"))
      const collected = yield* Effect.flip(pending.poll(id, "1 second"))
      assert.strictEqual(refusal(collected), "unknown")
      assert.include(collected.message, "completed")
    })))

  it.effect("questions/the registry's end interrupts the calls still running", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const pending = Context.get(yield* Layer.buildWithScope(PendingCalls.layerWith(bounds), scope), PendingCalls)
      const started = yield* Deferred.make<void>()
      const stopped = yield* Deferred.make<void>()
      const running = () =>
        Effect.zipRight(Deferred.succeed(started, undefined), Effect.never).pipe(Effect.onInterrupt(() => Deferred.succeed(stopped, undefined)))
      const move = yield* drive(pending.begin("t", everything, running, "1 second"))
      assert.strictEqual(move._tag, "Running")
      yield* Deferred.await(started)
      yield* Scope.close(scope, Exit.void)
      // Interrupted (its upstream request cancelled) before the registry's end returned.
      assert.isTrue(yield* Deferred.isDone(stopped))
    }))

  it.scoped("questions/a held question is listed, answered by id, and answered cancel at its TTL when nobody does", () =>
    provide(Effect.gen(function*() {
      const pending = yield* PendingCalls
      const events = yield* pending.events
      const first = yield* Effect.fork(pending.hold("srv", form("name"), 2))
      const event = yield* Queue.take(events)
      assert.deepInclude(event, { type: "question.unattributed", server: "srv", callers: 2 })
      assert.include(event.type === "question.unattributed" ? event.hint : "", `"pool": {"scope": "session", "max": 4}`)
      const [held] = yield* pending.held
      assert.strictEqual(held?.method, "elicitation/create")
      assert.isTrue(yield* pending.answerHeld(held!.id, { result: accept({ name: "Ada" }) }))
      assert.deepStrictEqual(yield* Fiber.join(first), accept({ name: "Ada" }))
      assert.isFalse(yield* pending.answerHeld(held!.id, { result: {} }))

      const second = yield* Effect.fork(pending.hold("srv", sampling, 2))
      yield* Queue.take(events)
      yield* TestClock.adjust(bounds.ttl)
      const refused = yield* Fiber.await(second)
      assert.isTrue(Exit.isFailure(refused))
      assert.deepStrictEqual(yield* pending.held, [])
    })))
})

describe("QuestionFit", () => {
  it("questions/a form or url elicitation is asked only in a declared mode; 2026 drops the URL elicitationId", () => {
    const url: Question = { method: "elicitation/create", params: { mode: "url", message: "go", url: "https://x", elicitationId: "e1" } }
    assert.deepStrictEqual(QuestionFit.take({ elicitation: {} })(url), { _tag: "Lacking", required: { elicitation: { url: {} } } })
    assert.deepStrictEqual(QuestionFit.take({ elicitation: { url: {} } })(url), {
      _tag: "Ask",
      question: { method: "elicitation/create", params: { mode: "url", message: "go", url: "https://x" } }
    })
    assert.strictEqual(QuestionFit.take({ elicitation: { url: {} } })(form("x"))._tag, "Lacking")
    // Roots are the client's: a caller that declared none is answered for, never failed for them.
    assert.deepStrictEqual(QuestionFit.take({})(roots), { _tag: "Answer", result: { roots: [] } })
    assert.deepStrictEqual(QuestionFit.take({ sampling: {} })({ method: "sampling/createMessage", params: { tools: [] } }), {
      _tag: "Lacking",
      required: { sampling: { tools: {} } }
    })
  })

  it("questions/the upstream connection's progressToken is not part of the question a host is shown", () => {
    const asked: Question = {
      method: "sampling/createMessage",
      params: { messages: [], maxTokens: 5, _meta: { progressToken: 0, "com.example/trace": "t1" } }
    }
    assert.deepStrictEqual(QuestionFit.take({ sampling: {} })(asked), {
      _tag: "Ask",
      question: { method: "sampling/createMessage", params: { messages: [], maxTokens: 5, _meta: { "com.example/trace": "t1" } } }
    })
    const elicit: Question = { method: "elicitation/create", params: { message: "m", requestedSchema: { type: "object" }, _meta: { progressToken: "p" } } }
    assert.deepStrictEqual(QuestionFit.take({ elicitation: {} })(elicit), {
      _tag: "Ask",
      question: { method: "elicitation/create", params: { message: "m", requestedSchema: { type: "object" } } }
    })
    const rootsAsked: Question = { method: "roots/list", params: { _meta: { progressToken: 1 } } }
    assert.deepStrictEqual(QuestionFit.take({ roots: {} })(rootsAsked), { _tag: "Ask", question: { method: "roots/list", params: {} } })
  })

  it("questions/answers are checked against the question's kind and form schema", () => {
    const enumForm: Question = {
      method: "elicitation/create",
      params: {
        message: "m",
        requestedSchema: { type: "object", properties: { c: { type: "string", enum: ["red", "blue"] }, n: { type: "integer", minimum: 1 } } }
      }
    }
    assert.strictEqual(QuestionFit.fit(enumForm, accept({ c: "green" }))._tag, "Left")
    assert.strictEqual(QuestionFit.fit(enumForm, accept({ n: 0 }))._tag, "Left")
    assert.strictEqual(QuestionFit.fit(enumForm, accept({ n: 1.5 }))._tag, "Left")
    assert.deepStrictEqual(QuestionFit.fit(enumForm, accept({ c: "red", n: 2 })), Either.right(accept({ c: "red", n: 2 })))
    assert.deepStrictEqual(QuestionFit.fit(enumForm, { action: "decline", content: { c: "red" } }), Either.right({ action: "decline" }))
    assert.strictEqual(QuestionFit.fit(sampling, { role: "assistant" })._tag, "Left")
    assert.strictEqual(QuestionFit.fit(roots, { roots: [{ name: "no uri" }] })._tag, "Left")
    assert.strictEqual(QuestionFit.fit(roots, { roots: [] })._tag, "Right")
  })
})

describe("PendingCalls over the settings", () => {
  it.effect("questions/the bounds follow a runtime change of the questions.* settings from the next call on", () =>
    Effect.gen(function*() {
      const pending = yield* PendingCalls
      const settings = yield* Settings.Settings
      // A call under the settings as they were, so that the bounds have been read once.
      assert.deepStrictEqual(complete(yield* drive(pending.begin("srv__quick", everything, () => Effect.succeed(text("ok"))))), text("ok"))
      yield* settings.set("questions.maxRounds", 1)
      const run = (ask: QuestionHandler) => Effect.forever(Effect.orDie(ask(form("again"))))
      const a = asking(yield* drive(pending.begin("srv__loop", everything, run)))
      assert.strictEqual(a.round, 1)
      const next = yield* Effect.flip(drive(pending.resume({ handle: a.handle }, { [a.questions[0]!.key]: { action: "decline" } })))
      assert.strictEqual(refusal(next), "rounds")
    }).pipe(Effect.provide(PendingCalls.layer.pipe(Layer.provideMerge(Settings.Settings.layer({}))))))
})
