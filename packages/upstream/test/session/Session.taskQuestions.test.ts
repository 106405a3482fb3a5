/**
 * A 2025-11-25 server's task asks its questions tied to the task (related-task `_meta`), not to a
 * call; over stdio they can reach mcpx-fx just as it starts the `tasks/result` that follows the
 * task. Such a question belongs to that follower at once, whichever of the two comes first.
 */
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import { RelatedTaskKey } from "@mcpx-fx/protocol/Tasks"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type { QuestionHandler } from "../../src/session/Questions.js"
import { makeSession } from "../../src/session/Session.js"
import type { Session } from "../../src/session/SessionModel.js"
import { legacyEstablished, stdioConnection, testConnection } from "../util/TestConnection.js"

const taskId = "task-1"

const question = (id: number): JsonRpc.Parsed => ({
  message: JsonRpc.request(id, "elicitation/create", { message: `question ${id}`, requestedSchema: {}, _meta: { [RelatedTaskKey]: { taskId } } }),
  raw: {}
})

/** A stdio connection whose calls wait until released, and `ask` for a question naming the task. */
const stdio = Effect.gen(function*() {
  const { answers, conn, untied } = yield* stdioConnection
  const ask = (id: number) => Queue.offer(untied, question(id))
  return { conn, ask, answers }
})

const host = (asked: Array<unknown>): QuestionHandler => (q) =>
  Effect.sync((): JsonObject => {
    asked.push(q.params.message)
    return { action: "accept", content: {} }
  })

const open = { clientInfo: { name: "t", version: "0" }, clientCapabilities: {} }

describe("Session: a legacy task's questions", () => {
  it.scopedLive("questions/read just before the follower starts, before their own fiber runs, go to it", () =>
    Effect.gen(function*() {
      const answers = yield* Queue.unbounded<JsonRpc.Response>()
      const ready = yield* Deferred.make<Session>()
      const asked: Array<unknown> = []
      // The reader takes the question, then (in the same fiber, before anything else is
      // scheduled) the follower's tasks/result is made; the server answers it at once.
      const follower = Effect.flatMap(Deferred.await(ready), (s) => s.request("tasks/result", { taskId }, { task: taskId, questions: host(asked) }))
      const conn = testConnection(() => Stream.never, {
        call: (req) => Effect.succeed(JsonRpc.success(req.id, {})),
        respond: (r) => Queue.offer(answers, r),
        unsolicited: Stream.fromEffect(Deferred.await(ready)).pipe(
          Stream.drain,
          Stream.concat(Stream.make(question(1))),
          Stream.concat(Stream.drain(Stream.fromEffect(Effect.orDie(follower))))
        ),
        wire: "stdio"
      })
      const session = yield* makeSession("srv", conn, legacyEstablished, open)
      yield* Deferred.succeed(ready, session)
      const answer = yield* Queue.take(answers)
      assert.strictEqual(answer.id, 1)
      assert.deepStrictEqual(JsonRpc.isSuccess(answer) ? answer.result : answer.error, { action: "accept", content: {} })
      assert.deepStrictEqual(asked, ["question 1"])
    }))

  it.scopedLive("questions/arriving after the follower started, they go to it at once", () =>
    Effect.gen(function*() {
      const { answers, ask, conn } = yield* stdio
      const session = yield* makeSession("srv", conn, legacyEstablished, open)
      const asked: Array<unknown> = []
      yield* Effect.fork(session.request("tasks/result", { taskId }, { task: taskId, questions: host(asked) }))
      yield* Effect.yieldNow()
      yield* ask(1)
      assert.strictEqual((yield* Queue.take(answers)).id, 1)
      assert.deepStrictEqual(asked, ["question 1"])
    }))
})
