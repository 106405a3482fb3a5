/**
 * A stdio question names no call: the Session puts it to a caller only when every call in flight
 * that could be asked is that caller's, and otherwise hands it to `unattributed` — never to a
 * caller who might not have caused it. A fake stdio connection whose calls wait until released.
 */
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import type { Question, QuestionHandler } from "../../src/session/Questions.js"
import { makeSession } from "../../src/session/Session.js"
import { enter, InPlaceCall, leave } from "../../src/transport/internal/InPlace.js"
import { legacyEstablished, stdioConnection, testConnection } from "../util/TestConnection.js"

const legacy = legacyEstablished

/** A stdio connection whose calls wait until released, and `ask` for an untied question. */
const stdio = Effect.gen(function*() {
  const { answers, conn, release, untied } = yield* stdioConnection
  const ask = (id: number) => Queue.offer(untied, { message: JsonRpc.request(id, "elicitation/create", { message: "name?", requestedSchema: {} }), raw: {} })
  return { conn, ask, answers, release, untied }
})

/** A handler that answers with `name` and records that it was asked. */
const host = (name: string, asked: Array<string>): QuestionHandler => (_q: Question) =>
  Effect.sync((): JsonObject => {
    asked.push(name)
    return { action: "accept", content: { name } }
  })

const resultOf = (r: JsonRpc.Response) => (JsonRpc.isSuccess(r) ? r.result : r.error)

describe("Session question attribution (stdio)", () => {
  it.scoped("questions/one caller in flight is asked", () =>
    Effect.gen(function*() {
      const { answers, ask, conn } = yield* stdio
      const asked: Array<string> = []
      const session = yield* makeSession("srv", conn, legacy, { clientInfo: { name: "t", version: "0" }, clientCapabilities: {} })
      yield* Effect.fork(session.request("tools/call", {}, { questions: host("ada", asked), callerId: "A" }))
      yield* Effect.fork(session.request("tools/call", {}, { questions: host("ada-again", asked), callerId: "A" }))
      yield* Effect.yieldNow()
      yield* ask(100)
      const answer = yield* Queue.take(answers)
      assert.strictEqual(answer.id, 100)
      assert.deepStrictEqual(resultOf(answer), { action: "accept", content: { name: "ada-again" } })
      assert.strictEqual(asked.length, 1)
    }))

  it.scoped("questions/with calls of two callers in flight nobody is asked; the question goes to unattributed", () =>
    Effect.gen(function*() {
      const { answers, ask, conn, release } = yield* stdio
      const asked: Array<string> = []
      const held: Array<{ server: string; callers: number }> = []
      const session = yield* makeSession("srv", conn, legacy, {
        clientInfo: { name: "t", version: "0" },
        clientCapabilities: {},
        unattributed: (server, _q, callers) =>
          Effect.sync(() => {
            held.push({ server, callers })
            return { action: "decline" }
          })
      })
      const a = yield* Effect.fork(session.request("tools/call", {}, { questions: host("ada", asked), callerId: "A" }))
      const b = yield* Effect.fork(session.request("tools/call", {}, { questions: host("grace", asked), callerId: "B" }))
      // A listing with no handler is no candidate: it does not make the question anyone's.
      yield* Effect.fork(session.request("tools/list", {}, {}))
      yield* Effect.yieldNow()
      yield* ask(7)
      const answer = yield* Queue.take(answers)
      assert.deepStrictEqual(resultOf(answer), { action: "decline" })
      assert.deepStrictEqual(asked, [])
      assert.deepStrictEqual(held, [{ server: "srv", callers: 2 }])
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(a)
      yield* Fiber.join(b)
    }))

  it.scoped("questions/without an unattributed handler an ambiguous elicitation is answered cancel, as if nobody could be asked", () =>
    Effect.gen(function*() {
      const { answers, ask, conn } = yield* stdio
      const asked: Array<string> = []
      const session = yield* makeSession("srv", conn, legacy, { clientInfo: { name: "t", version: "0" }, clientCapabilities: {} })
      yield* Effect.fork(session.request("tools/call", {}, { questions: host("ada", asked) }))
      yield* Effect.fork(session.request("tools/call", {}, { questions: host("grace", asked) }))
      yield* Effect.yieldNow()
      yield* ask(8)
      assert.deepStrictEqual(resultOf(yield* Queue.take(answers)), { action: "cancel" })
      assert.deepStrictEqual(asked, [])
    }))

  it.scoped("questions/a call that ran in place is no longer in flight once its in-place call is over", () =>
    Effect.gen(function*() {
      const untied = yield* Queue.unbounded<JsonRpc.Parsed>()
      const answers = yield* Queue.unbounded<JsonRpc.Response>()
      // "quick" is answered at once; every other call waits for good.
      const conn = testConnection(() => Stream.never, {
        call: (req) => req.params?.name === "quick" ? Effect.succeed(JsonRpc.success(req.id, {})) : Effect.never,
        respond: (r) => Queue.offer(answers, r),
        unsolicited: Stream.fromQueue(untied),
        wire: "stdio"
      })
      const asked: Array<string> = []
      const session = yield* makeSession("srv", conn, legacy, { clientInfo: { name: "t", version: "0" }, clientCapabilities: {} })
      yield* Effect.fork(session.request("tools/call", { name: "slow" }, { questions: host("grace", asked), callerId: "B" }))
      const call = new InPlaceCall<never>()
      const quick = Effect.withFiberRuntime<JsonObject, unknown>((fiber) => {
        const outer = enter(fiber, call)
        return Effect.ensuring(
          session.request("tools/call", { name: "quick" }, { questions: host("ada", asked), callerId: "A" }),
          Effect.sync(() => {
            call.finish()
            leave(fiber, outer)
          })
        )
      })
      assert.deepStrictEqual(yield* quick, {})
      yield* Queue.offer(untied, { message: JsonRpc.request(9, "elicitation/create", { message: "name?", requestedSchema: {} }), raw: {} })
      assert.deepStrictEqual(resultOf(yield* Queue.take(answers)), { action: "accept", content: { name: "grace" } })
      assert.deepStrictEqual(asked, ["grace"], "only the call still in flight could have asked")
    }))

  it.scoped("questions/a question waiting on a person does not hold back the next one", () =>
    Effect.gen(function*() {
      const { answers, ask, conn } = yield* stdio
      const slow = yield* Deferred.make<JsonObject>()
      let calls = 0
      const session = yield* makeSession("srv", conn, legacy, { clientInfo: { name: "t", version: "0" }, clientCapabilities: {} })
      const questions: QuestionHandler = () => (++calls === 1 ? Deferred.await(slow) : Effect.succeed({ action: "decline" }))
      yield* Effect.fork(session.request("tools/call", {}, { questions, callerId: "A" }))
      yield* Effect.yieldNow()
      yield* ask(1)
      yield* ask(2)
      const first = yield* Queue.take(answers)
      assert.strictEqual(first.id, 2)
      yield* Deferred.succeed(slow, { action: "accept", content: { name: "late" } })
      assert.strictEqual((yield* Queue.take(answers)).id, 1)
    }))

  it.scoped("questions/a call parked on its caller's answer does not make another caller's question unattributable", () =>
    Effect.gen(function*() {
      const { answers, ask, conn, release } = yield* stdio
      const asked: Array<string> = []
      const held: Array<number> = []
      const session = yield* makeSession("srv", conn, legacy, {
        clientInfo: { name: "t", version: "0" },
        clientCapabilities: {},
        unattributed: (_server, _q, callers) =>
          Effect.sync(() => {
            held.push(callers)
            return { action: "decline" }
          })
      })
      // Caller A's question is never answered: A walked away from its input_required round.
      const abandoned: QuestionHandler = () => Effect.never
      const a = yield* Effect.fork(session.request("tools/call", {}, { questions: abandoned, callerId: "A" }))
      yield* Effect.yieldNow()
      yield* ask(1)
      yield* TestClock.adjust("50 millis")
      const b = yield* Effect.fork(session.request("tools/call", {}, { questions: host("grace", asked), callerId: "B" }))
      yield* Effect.yieldNow()
      yield* ask(2)
      const answer = yield* Queue.take(answers)
      assert.strictEqual(answer.id, 2)
      assert.deepStrictEqual(resultOf(answer), { action: "accept", content: { name: "grace" } })
      assert.deepStrictEqual(asked, ["grace"])
      assert.deepStrictEqual(held, [])
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(b)
      yield* Fiber.interrupt(a)
    }))

  it.scoped("questions/a question asked together with a call's first is not charged to another caller", () =>
    Effect.gen(function*() {
      const { answers, ask, conn, release } = yield* stdio
      const asked: Array<string> = []
      const held: Array<number> = []
      const session = yield* makeSession("srv", conn, legacy, {
        clientInfo: { name: "t", version: "0" },
        clientCapabilities: {},
        unattributed: (_server, _q, callers) =>
          Effect.sync(() => {
            held.push(callers)
            return { action: "decline" }
          })
      })
      const first = yield* Deferred.make<JsonObject>()
      yield* Effect.fork(session.request("tools/call", {}, { questions: () => Deferred.await(first), callerId: "A" }))
      yield* Effect.yieldNow()
      yield* ask(1)
      yield* Effect.yieldNow()
      const b = yield* Effect.fork(session.request("tools/call", {}, { questions: host("grace", asked), callerId: "B" }))
      yield* Effect.yieldNow()
      // Within the moment of A's first question, A may still be asking: nobody's to say whose.
      yield* ask(2)
      assert.deepStrictEqual(resultOf(yield* Queue.take(answers)), { action: "decline" })
      assert.deepStrictEqual(asked, [])
      assert.deepStrictEqual(held, [2])
      yield* Deferred.succeed(first, { action: "cancel" })
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(b)
    }))

  it.scoped("questions/a roots/list nobody can be said to have asked is answered with no roots, not held", () =>
    Effect.gen(function*() {
      const { answers, conn, release, untied } = yield* stdio
      const asked: Array<string> = []
      const held: Array<number> = []
      const session = yield* makeSession("srv", conn, legacy, {
        clientInfo: { name: "t", version: "0" },
        clientCapabilities: {},
        unattributed: (_server, _q, callers) =>
          Effect.sync(() => {
            held.push(callers)
            return { roots: [{ uri: "file:///not-mcpx" }] }
          })
      })
      const a = yield* Effect.fork(session.request("tools/call", {}, { questions: host("ada", asked), callerId: "A" }))
      const b = yield* Effect.fork(session.request("tools/call", {}, { questions: host("grace", asked), callerId: "B" }))
      yield* Effect.yieldNow()
      yield* Queue.offer(untied, { message: JsonRpc.request(9, "roots/list", {}), raw: {} })
      const answer = yield* Queue.take(answers)
      assert.strictEqual(answer.id, 9)
      assert.deepStrictEqual(resultOf(answer), { roots: [] })
      assert.deepStrictEqual(asked, [])
      assert.deepStrictEqual(held, [])
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(a)
      yield* Fiber.join(b)
    }))
})
