/**
 * A 2025-11-25 host's task whose call asks a question, over Streamable HTTP: the request that made
 * the task has answered, so the question waits, the task reads `input_required`, and the host's
 * `tasks/result` carries it (tied to the task by its related-task `_meta`) on its own stream; the
 * answer goes on to the call, and the same stream ends with the task's result.
 */
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import { RelatedTaskKey } from "@mcpx-fx/protocol/Tasks"
import * as Effect from "effect/Effect"
import { QuestionWaiting } from "../src/HostTasks.js"
import { type Harness, harness, objectOf, sse } from "./HttpHostHarness.js"
import { initialize, req } from "./support.js"

/** Opens an initialized 2025-11-25 session; its id. */
const open = (h: Harness) =>
  Effect.gen(function*() {
    const r = yield* h.post(initialize("2025-11-25"))
    const id = r.headers.get("mcp-session-id")
    if (id === null) return assert.fail("initialize minted no session")
    assert.strictEqual((yield* h.post({ jsonrpc: "2.0", method: "notifications/initialized" }, { "mcp-session-id": id })).status, 202)
    return id
  })

/** Reads the task until `done` says it is where the test wants it, letting the host's fibers run. */
const until = (h: Harness, session: string, taskId: string, done: (task: JsonObject) => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      const body = yield* objectOf(yield* h.post(req("tasks/get", { taskId }, 500 + i), { "mcp-session-id": session }))
      const task = body.result as JsonObject
      if (done(task)) return task
      yield* Effect.yieldNow()
    }
    return assert.fail(`task ${taskId} never got there`)
  })

const makeTask = (h: Harness, session: string) =>
  Effect.gen(function*() {
    const made = yield* objectOf(yield* h.post(req("tools/call", { name: "question", arguments: {}, task: {} }, 1), { "mcp-session-id": session }))
    return ((made.result as JsonObject).task as JsonObject).taskId as string
  })

describe("HttpHost: a 2025-11-25 task's questions", () => {
  it.scoped("2025-11-25/http/a task's question waits for tasks/result, which carries it and then the result", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const session = yield* open(h)
      const taskId = yield* makeTask(h, session)
      const waiting = yield* until(h, session, taskId, (t) => t.status === "input_required")
      assert.strictEqual(waiting.statusMessage, QuestionWaiting)

      const collecting = sse(yield* h.post(req("tasks/result", { taskId }, 2), { "mcp-session-id": session }))
      const asked = (yield* collecting.next)?.data as JsonObject
      assert.strictEqual(asked.method, "elicitation/create", JSON.stringify(asked))
      const params = asked.params as JsonObject
      assert.strictEqual(params.message, "name?")
      assert.deepStrictEqual((params._meta as JsonObject)[RelatedTaskKey], { taskId })

      const answered = yield* h.post({ jsonrpc: "2.0", id: asked.id, result: { action: "accept", content: { name: "Ada" } } }, { "mcp-session-id": session })
      assert.strictEqual(answered.status, 202)
      const reply = (yield* collecting.next)?.data as JsonObject
      assert.strictEqual(reply.id, 2, JSON.stringify(reply))
      const result = reply.result as JsonObject
      assert.include(JSON.stringify(result.content), "Ada")
      assert.deepStrictEqual((result._meta as JsonObject)[RelatedTaskKey], { taskId })
      assert.strictEqual((yield* until(h, session, taskId, () => true)).status, "completed")
    }))

  it.scoped("2025-11-25/http/a question stays asked when its tasks/result goes away; answered by id, a later tasks/result has the result; another session's gets nothing", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const session = yield* open(h)
      const other = yield* open(h)
      const taskId = yield* makeTask(h, session)
      yield* until(h, session, taskId, (t) => t.status === "input_required")

      // Another session is refused as for an unknown task, and is asked nothing.
      const theirs = yield* objectOf(yield* h.post(req("tasks/result", { taskId }, 3), { "mcp-session-id": other }))
      assert.strictEqual((theirs.error as JsonObject).code, -32602)

      const controller = new AbortController()
      const first = sse(yield* h.post(req("tasks/result", { taskId }, 4), { "mcp-session-id": session }, { signal: controller.signal }))
      const asked = (yield* first.next)?.data as JsonObject
      assert.strictEqual(asked.method, "elicitation/create")
      controller.abort()

      // A session's answers go by id, from any of its POSTs.
      const answered = yield* h.post({ jsonrpc: "2.0", id: asked.id, result: { action: "decline" } }, { "mcp-session-id": session })
      assert.strictEqual(answered.status, 202)
      const second = yield* objectOf(yield* h.post(req("tasks/result", { taskId }, 5), { "mcp-session-id": session }))
      assert.strictEqual(second.id, 5, JSON.stringify(second))
      assert.include(JSON.stringify((second.result as JsonObject).content), "decline")
    }))
})
