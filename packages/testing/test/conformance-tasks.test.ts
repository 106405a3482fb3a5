/**
 * The conformance fixture's tasks over stdio, in both eras, checked against the wire schemas of
 * @mcpx-fx/protocol: the 2025-11-25 core on the legacy-only fixture (which the suite cannot reach:
 * its `tasks-*` scenarios are 2026-07-28 only) and the 2026-07-28 extension on the modern-only one
 * (the suite runs it over HTTP; `npm run conformance:fixture` gates that). Every wait is on a
 * reply or a frame the fixture sends; nothing sleeps.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as Tasks from "@mcpx-fx/protocol/Tasks"
import * as TasksExtension from "@mcpx-fx/protocol/TasksExtension"
import { errorOf, objectAt, resultOf, textOf } from "../src/era/client/Replies.js"
import * as Rq from "../src/era/client/Requests.js"
import { spawnStdio, type StdioPeer } from "../src/era/client/StdioPeer.js"
import type { JsonObject } from "../src/era/Wire.js"

const decode = <A, I>(schema: Schema.Schema<A, I>, value: unknown): A => {
  const r = Schema.decodeUnknownEither(schema)(value)
  if (Either.isLeft(r)) throw new Error(`${JSON.stringify(value)} does not decode: ${r.left.message}`)
  return r.right
}

const legacy = (version = "2025-11-25") =>
  Effect.gen(function*() {
    const peer = yield* spawnStdio("conformance-fixture", ["--legacy-only"])
    const init = resultOf(yield* peer.request("initialize", Rq.initialize(version, { elicitation: {} })))
    yield* peer.send(Rq.notification("notifications/initialized"))
    return { peer, init }
  })

const asTask = (name: string, args: JsonObject, ttl = 30_000): JsonObject => ({ ...Rq.call(name, args), task: { ttl } })

const ext = { extensions: { [TasksExtension.ExtensionId]: {} } }
const modernCall = (peer: StdioPeer, name: string, args: JsonObject, capabilities: JsonObject = ext, extra: JsonObject = {}) =>
  peer.request("tools/call", Rq.modern({ ...Rq.call(name, args), ...extra }, capabilities))

describe("conformance fixture: 2025-11-25 core tasks (legacy-only, stdio)", () => {
  it.scoped("declares tasks, lists task support per tool, and gates calls by the task hint", () =>
    Effect.gen(function*() {
      const { init, peer } = yield* legacy()
      assert.isTrue(Tasks.serverAugmentsToolCalls(objectAt(init, "capabilities")))
      const tools = resultOf(yield* peer.request("tools/list"))["tools"] as ReadonlyArray<JsonObject>
      const support = Object.fromEntries(tools.map((t) => [t["name"], (t["execution"] as JsonObject | undefined)?.["taskSupport"]]))
      assert.deepInclude(support, { slow_compute: "optional", failing_job: "required", test_tool_with_task: "required", greet: undefined })
      assert.strictEqual(errorOf(yield* peer.request("tools/call", Rq.call("failing_job"))).code, ErrorCode.MethodNotFound)
      assert.strictEqual(errorOf(yield* peer.request("tools/call", asTask("greet", { name: "Ada" }))).code, ErrorCode.MethodNotFound)
      assert.strictEqual(textOf(resultOf(yield* peer.request("tools/call", Rq.call("greet", { name: "Ada" })))), "Hello, Ada!")
    }))

  it.scoped("creates, gets, lists and cancels a task, and pushes its status", () =>
    Effect.gen(function*() {
      const { peer } = yield* legacy()
      const created = decode(Tasks.CreateTaskResult, resultOf(yield* peer.request("tools/call", asTask("slow_compute", { seconds: 60 }, 20_000)))).task
      assert.strictEqual(created.status, "working")
      assert.strictEqual(created.ttl, 20_000)
      const got = decode(Tasks.GetTaskResult, resultOf(yield* peer.request("tasks/get", { taskId: created.taskId })))
      assert.strictEqual(got.taskId, created.taskId)
      const listed = decode(Tasks.ListTasksResult, resultOf(yield* peer.request("tasks/list", {})))
      assert.isTrue(listed.tasks.some((t) => t.taskId === created.taskId))
      assert.strictEqual(errorOf(yield* peer.request("tasks/list", { cursor: "not-a-cursor" })).code, ErrorCode.InvalidParams)
      const cancelled = decode(Tasks.CancelTaskResult, resultOf(yield* peer.request("tasks/cancel", { taskId: created.taskId })))
      assert.strictEqual(cancelled.status, "cancelled")
      const pushed = yield* peer.next("a cancelled status push", (m) => "method" in m && m.method === "notifications/tasks/status")
      assert.strictEqual(decode(Tasks.TaskStatusNotificationParams, "params" in pushed ? pushed.params : undefined).status, "cancelled")
      assert.strictEqual(errorOf(yield* peer.request("tasks/cancel", { taskId: created.taskId })).code, ErrorCode.InvalidParams)
      assert.strictEqual(errorOf(yield* peer.request("tasks/get", { taskId: "no-such-task" })).code, ErrorCode.InvalidParams)
    }))

  it.scoped("tasks/result waits for the end and returns the call's own result or error", () =>
    Effect.gen(function*() {
      const { peer } = yield* legacy()
      const failing = decode(Tasks.CreateTaskResult, resultOf(yield* peer.request("tools/call", asTask("failing_job", {})))).task
      const payload = decode(Tasks.TaskPayloadResult, resultOf(yield* peer.request("tasks/result", { taskId: failing.taskId })))
      assert.strictEqual(Tasks.relatedTaskOf(payload._meta), failing.taskId)
      assert.strictEqual(payload["isError"], true)
      const ended = decode(Tasks.GetTaskResult, resultOf(yield* peer.request("tasks/get", { taskId: failing.taskId })))
      assert.strictEqual(ended.status, "completed", "a tool error is a completed call, not a failed task")
      const broken = decode(Tasks.CreateTaskResult, resultOf(yield* peer.request("tools/call", asTask("protocol_error_job", {})))).task
      assert.strictEqual(errorOf(yield* peer.request("tasks/result", { taskId: broken.taskId })).code, ErrorCode.InternalError)
      assert.strictEqual(decode(Tasks.GetTaskResult, resultOf(yield* peer.request("tasks/get", { taskId: broken.taskId }))).status, "failed")
    }))

  it.scoped("asks a task's question as elicitation/create tied to the task, then finishes with the answer", () =>
    Effect.gen(function*() {
      const { peer } = yield* legacy()
      const task = decode(Tasks.CreateTaskResult, resultOf(yield* peer.request("tools/call", asTask("confirm_delete", { filename: "notes.txt" })))).task
      const asked = yield* peer.next("the task's elicitation", (m) => "method" in m && m.method === "elicitation/create")
      assert.isTrue("id" in asked)
      const params = "params" in asked ? asked.params : undefined
      assert.strictEqual(Tasks.relatedTaskOf(params?.["_meta"]), task.taskId)
      if ("id" in asked) yield* peer.send({ jsonrpc: "2.0", id: asked.id, result: { action: "accept", content: { confirm: true } } })
      const result = resultOf(yield* peer.request("tasks/result", { taskId: task.taskId }))
      assert.strictEqual(textOf(result), "Deleted notes.txt")
    }))

  it.scoped("asks test_tool_with_task's question on the call itself, then answers its tasks/result from the task", () =>
    Effect.gen(function*() {
      const { peer } = yield* legacy()
      const callId = "with-task"
      yield* peer.send(Rq.rpc(callId, "tools/call", asTask("test_tool_with_task", {})))
      const asked = yield* peer.next("the call's elicitation", (m) => "method" in m && m.method === "elicitation/create")
      assert.isUndefined(Tasks.relatedTaskOf("params" in asked ? asked.params?.["_meta"] : undefined), "no task exists yet")
      if ("id" in asked) yield* peer.send({ jsonrpc: "2.0", id: asked.id, result: { action: "accept", content: { name: "Bo" } } })
      const task = decode(Tasks.CreateTaskResult, resultOf(yield* peer.reply(callId))).task
      const result = resultOf(yield* peer.request("tasks/result", { taskId: task.taskId }))
      assert.match(textOf(result), /^Hello, Bo!/)
    }))

  it.scoped("has no tasks before 2025-11-25", () =>
    Effect.gen(function*() {
      const { init, peer } = yield* legacy("2025-06-18")
      assert.strictEqual(init["protocolVersion"], "2025-06-18")
      assert.strictEqual(errorOf(yield* peer.request("tasks/get", { taskId: "x" })).code, ErrorCode.MethodNotFound)
      const slow = resultOf(yield* peer.request("tools/call", asTask("slow_compute", { seconds: 0 })))
      assert.isUndefined(slow["task"], "a task hint is ignored where tasks do not exist")
      assert.strictEqual(textOf(slow), "slow_compute finished after 0s")
    }))
})

describe("conformance fixture: 2026-07-28 tasks extension (modern-only, stdio)", () => {
  it.scoped("advertises the extension and makes a task only for a request that declared it", () =>
    Effect.gen(function*() {
      const peer = yield* spawnStdio("conformance-fixture", ["--modern-only"])
      const discover = resultOf(yield* peer.request("server/discover", Rq.modern()))
      assert.isTrue(TasksExtension.declared(objectAt(discover, "capabilities")))
      const handle = decode(TasksExtension.CreateTaskResult, resultOf(yield* modernCall(peer, "slow_compute", { seconds: 60 })))
      assert.isTrue(Number.isInteger(handle.ttlMs) && (handle.ttlMs ?? 0) > 0)
      const working = decode(TasksExtension.GetTaskResult, resultOf(yield* peer.request("tasks/get", Rq.modern({ taskId: handle.taskId }, ext))))
      assert.strictEqual(working.status, "working")
      decode(TasksExtension.CancelTaskResult, resultOf(yield* peer.request("tasks/cancel", Rq.modern({ taskId: handle.taskId }, ext))))
      decode(TasksExtension.CancelTaskResult, resultOf(yield* peer.request("tasks/cancel", Rq.modern({ taskId: handle.taskId }, ext))))
      const cancelled = decode(TasksExtension.GetTaskResult, resultOf(yield* peer.request("tasks/get", Rq.modern({ taskId: handle.taskId }, ext))))
      assert.strictEqual(cancelled.status, "cancelled")
      const sync = resultOf(yield* modernCall(peer, "slow_compute", { seconds: 0 }, {}, { task: { ttl: 1000 } }))
      assert.strictEqual(sync["resultType"], "complete")
      assert.isUndefined(sync["taskId"])
    }))

  it.scoped("refuses task work to a request without the extension (-32021), unknown tasks (-32602) and the removed methods (-32601)", () =>
    Effect.gen(function*() {
      const peer = yield* spawnStdio("conformance-fixture", ["--modern-only"])
      for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
        const refused = errorOf(yield* peer.request(method, Rq.modern({ taskId: "x", inputResponses: {} })))
        assert.strictEqual(refused.code, ErrorCode.MissingRequiredClientCapability, method)
        assert.deepStrictEqual<unknown>(refused.data, { requiredCapabilities: TasksExtension.requiredCapabilities })
      }
      assert.strictEqual(errorOf(yield* modernCall(peer, "failing_job", {}, {})).code, ErrorCode.MissingRequiredClientCapability)
      assert.strictEqual(errorOf(yield* peer.request("tasks/get", Rq.modern({ taskId: "x" }, ext))).code, ErrorCode.InvalidParams)
      for (const method of ["tasks/result", "tasks/list"]) {
        assert.strictEqual(errorOf(yield* peer.request(method, Rq.modern({ taskId: "x" }, ext))).code, ErrorCode.MethodNotFound, method)
      }
    }))

  it.scoped("parks a task on its question, takes the answer by tasks/update and completes", () =>
    Effect.gen(function*() {
      const peer = yield* spawnStdio("conformance-fixture", ["--modern-only"])
      const handle = decode(TasksExtension.CreateTaskResult, resultOf(yield* modernCall(peer, "confirm_delete", { filename: "a.txt" })))
      const waiting = decode(TasksExtension.GetTaskResult, resultOf(yield* peer.request("tasks/get", Rq.modern({ taskId: handle.taskId }, ext))))
      assert.strictEqual(waiting.status, "input_required")
      const keys = waiting.status === "input_required" ? Object.keys(waiting.inputRequests) : []
      assert.deepStrictEqual(keys, ["confirm_delete"])
      const answers = { confirm_delete: { action: "accept", content: { confirm: true } }, stale: { ignored: true } }
      decode(TasksExtension.UpdateTaskResult, resultOf(yield* peer.request("tasks/update", Rq.modern({ taskId: handle.taskId, inputResponses: answers }, ext))))
      const done = decode(TasksExtension.GetTaskResult, resultOf(yield* peer.request("tasks/get", Rq.modern({ taskId: handle.taskId }, ext))))
      assert.strictEqual(done.status, "completed")
      assert.strictEqual(done.status === "completed" ? textOf(done.result as JsonObject) : "", "Deleted a.txt")
    }))

  it.scoped("gathers input by MRTR before it creates the task test_tool_with_task needs", () =>
    Effect.gen(function*() {
      const peer = yield* spawnStdio("conformance-fixture", ["--modern-only"])
      const mute = errorOf(yield* modernCall(peer, "test_tool_with_task", {}))
      assert.strictEqual(mute.code, ErrorCode.MissingRequiredClientCapability, "it cannot ask a request that declared no elicitation")
      const caps = { ...ext, elicitation: {} }
      const first = resultOf(yield* modernCall(peer, "test_tool_with_task", {}, caps))
      assert.strictEqual(first["resultType"], "input_required")
      assert.deepStrictEqual(Object.keys(objectAt(first, "inputRequests")), ["user_name"])
      const second = resultOf(
        yield* modernCall(peer, "test_tool_with_task", {}, caps, {
          inputResponses: { user_name: { action: "accept", content: { name: "Alice" } } }
        })
      )
      const handle = decode(TasksExtension.CreateTaskResult, second)
      assert.strictEqual(handle.status, "working")
    }))
})
