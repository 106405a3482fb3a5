/**
 * Task changes over Streamable HTTP. 2025-11-25's `notifications/tasks/status`: a legacy session
 * is told of its own tasks' changes on its GET stream, as it is of list changes; another session's
 * tasks and a session of a revision without core tasks are not. 2026-07-28's `notifications/tasks`:
 * on the SSE stream of a listen that named the caller's task.
 */
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Tasks from "@mcpx-fx/protocol/Tasks"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { type Harness, harness, modernHeaders, objectOf, sse } from "./HttpHostHarness.js"
import { C, initialize, meta, req } from "./support.js"

const SubscriptionId = "io.modelcontextprotocol/subscriptionId"
/** A modern `_meta` that declares the tasks extension. */
const tasksMeta = meta({ [C]: { extensions: { "io.modelcontextprotocol/tasks": {} } } })

/** Opens an initialized session at `version`; its id. */
const open = (h: Harness, version: string) =>
  Effect.gen(function*() {
    const r = yield* h.post(initialize(version))
    const id = r.headers.get("mcp-session-id")
    if (id === null) return assert.fail("initialize minted no session")
    assert.strictEqual((yield* h.post({ jsonrpc: "2.0", method: "notifications/initialized" }, { "mcp-session-id": id })).status, 202)
    return id
  })

/** A task-augmented `tools/call` of `echo` (which ends at once) in a session; its task id. */
const echoTask = (h: Harness, session: string, id: number) =>
  Effect.gen(function*() {
    const body = yield* objectOf(yield* h.post(req("tools/call", { name: "echo", arguments: { id }, task: {} }, id), { "mcp-session-id": session }))
    return ((body.result as JsonObject).task as JsonObject).taskId as string
  })

/** Waits until the task reads `completed` in its session, letting the host's fibers run. */
const completed = (h: Harness, session: string, taskId: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 100; i++) {
      const body = yield* objectOf(yield* h.post(req("tasks/get", { taskId }, 90 + i), { "mcp-session-id": session }))
      if ((body.result as JsonObject).status === "completed") return
      yield* Effect.yieldNow()
    }
    assert.fail(`task ${taskId} never completed`)
  })

describe("HttpHost: task changes pushed to hosts", () => {
  it.scoped("2025-11-25/http/a session's GET stream carries its own task's change, and no other session's", () =>
    Effect.gen(function*() {
      const h = yield* harness({ sseKeepAlive: "10 seconds" })
      const mine = yield* open(h, "2025-11-25")
      const other = yield* open(h, "2025-11-25")
      const older = yield* open(h, "2025-06-18")
      const stream = sse(yield* h.get({ "mcp-session-id": mine }))
      const olderStream = sse(yield* h.get({ "mcp-session-id": older }))
      assert.deepStrictEqual(yield* stream.next, { comment: "keep-alive" })
      assert.deepStrictEqual(yield* olderStream.next, { comment: "keep-alive" })

      const taskId = yield* echoTask(h, mine, 1)
      const event = (yield* stream.next)?.data as JsonObject
      assert.strictEqual(event.method, "notifications/tasks/status")
      const params = event.params as JsonObject
      assert.isTrue(Schema.is(Tasks.TaskStatusNotificationParams)(params), JSON.stringify(params))
      assert.strictEqual(params.taskId, taskId)
      assert.strictEqual(params.status, "completed")

      // Tasks of another session, and of a 2025-06-18 session (which has no core tasks), end
      // unheard here: the next thing either stream carries is its keep-alive.
      yield* completed(h, other, yield* echoTask(h, other, 2))
      const olderTask = yield* objectOf(yield* h.post(req("tools/call", { name: "echo", arguments: {}, task: {} }, 3), { "mcp-session-id": older }))
      assert.isString(((olderTask.result as JsonObject).task as JsonObject).taskId)
      yield* Effect.repeatN(Effect.yieldNow(), 100)
      yield* TestClock.adjust("10 seconds")
      assert.deepStrictEqual(yield* stream.next, { comment: "keep-alive" })
      assert.deepStrictEqual(yield* olderStream.next, { comment: "keep-alive" })
    }))

  it.scoped("2026-07-28/http/a listen naming the caller's task carries its state, then its cancellation, on the listen's stream", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      // `block` runs until interrupted: a task once it outlasts tasks.after (2 s).
      const calling = yield* Effect.fork(
        h.post(req("tools/call", { name: "block", arguments: { tag: "t" }, _meta: tasksMeta }, 1), modernHeaders("tools/call", "block"))
      )
      assert.strictEqual(yield* Queue.take(h.events.started), "t")
      yield* Effect.repeatN(Effect.yieldNow(), 100)
      yield* TestClock.adjust("2 seconds")
      const created = (yield* objectOf(yield* Fiber.join(calling))).result as JsonObject
      assert.strictEqual(created.resultType, "task")
      const taskId = created.taskId as string

      const listening = sse(
        yield* h.post(
          req("subscriptions/listen", { notifications: { taskIds: [taskId, "nope"] }, _meta: tasksMeta }, "L"),
          modernHeaders("subscriptions/listen")
        )
      )
      const ack = (yield* listening.next)?.data as JsonObject
      assert.strictEqual(ack.method, "notifications/subscriptions/acknowledged")
      assert.deepStrictEqual((ack.params as JsonObject).notifications, { taskIds: [taskId] })
      const now = (yield* listening.next)?.data as JsonObject
      assert.strictEqual(now.method, "notifications/tasks")
      assert.strictEqual((now.params as JsonObject).status, "working")

      const cancelled = yield* h.post(req("tasks/cancel", { taskId, _meta: tasksMeta }, 2), modernHeaders("tasks/cancel", taskId))
      assert.strictEqual(cancelled.status, 200)
      const end = (yield* listening.next)?.data as JsonObject
      assert.strictEqual(end.method, "notifications/tasks")
      const params = end.params as JsonObject
      assert.strictEqual(params.taskId, taskId)
      assert.strictEqual(params.status, "cancelled")
      assert.deepStrictEqual(params._meta, { [SubscriptionId]: "L" })
      yield* listening.cancel
    }))
})
