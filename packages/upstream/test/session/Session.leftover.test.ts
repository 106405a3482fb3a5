/**
 * A question tied to a call that ends before it is answered (the call answered, cancelled, or
 * expired under a host that never came back) is still answered upstream, for nobody — an
 * elicitation `cancel` — instead of being left waiting; an answer already on its way goes whole.
 */
import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { makeSession } from "../../src/session/Session.js"
import { legacyEstablished, testConnection } from "../util/TestConnection.js"

const legacy = legacyEstablished

/** A connection whose call asks one question, then waits for `release` (over HTTP, as a POST stream does). */
const asking = Effect.gen(function*() {
  const answers = yield* Queue.unbounded<JsonRpc.Response>()
  const release = yield* Deferred.make<void>()
  const conn = testConnection(() => Stream.never, {
    call: (req, onMessage) =>
      Effect.zipRight(
        onMessage({ message: JsonRpc.request("q1", "elicitation/create", { message: "name?", requestedSchema: {} }), raw: {} }),
        Effect.as(Deferred.await(release), JsonRpc.success(req.id, { content: [] }))
      ),
    respond: (r) => Queue.offer(answers, r),
    wire: "streamable-http"
  })
  return { answers, conn, release }
})

const open = { clientInfo: { name: "t", version: "0" }, clientCapabilities: {} }

describe("Session: questions a call leaves open", () => {
  it.scoped("questions/a call cancelled while its question waits has the question answered cancel upstream", () =>
    Effect.gen(function*() {
      const { answers, conn } = yield* asking
      const session = yield* makeSession("srv", conn, legacy, open)
      const call = yield* Effect.fork(session.request("tools/call", {}, { questions: () => Effect.never }))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(call)
      const answer = yield* Queue.take(answers)
      assert.strictEqual(answer.id, "q1")
      assert.deepStrictEqual(JsonRpc.isSuccess(answer) ? answer.result : answer.error, { action: "cancel" })
    }))

  it.scoped("questions/a call answered while its question waits has the question answered cancel upstream", () =>
    Effect.gen(function*() {
      const { answers, conn, release } = yield* asking
      const session = yield* makeSession("srv", conn, legacy, open)
      const call = yield* Effect.fork(session.request("tools/call", {}, { questions: () => Effect.never }))
      yield* Effect.yieldNow()
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(call)
      const answer = yield* Queue.take(answers)
      assert.strictEqual(answer.id, "q1")
      assert.deepStrictEqual(JsonRpc.isSuccess(answer) ? answer.result : answer.error, { action: "cancel" })
    }))

  it.scoped("questions/an answer given before the call ends goes upstream, once", () =>
    Effect.gen(function*() {
      const { answers, conn, release } = yield* asking
      const session = yield* makeSession("srv", conn, legacy, open)
      const call = yield* Effect.fork(session.request("tools/call", {}, { questions: () => Effect.succeed({ action: "accept", content: { name: "Ada" } }) }))
      const answer = yield* Queue.take(answers)
      assert.deepStrictEqual(JsonRpc.isSuccess(answer) ? answer.result : answer.error, { action: "accept", content: { name: "Ada" } })
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(call)
      assert.strictEqual(yield* Queue.size(answers), 0)
    }))
})
