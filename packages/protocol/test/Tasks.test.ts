/**
 * Tasks on the wire in both eras: the 2025-11-25 core (`params.task`, nested handle, tasks/get,
 * tasks/result, tasks/list, tasks/cancel, notifications/tasks/status, `capabilities.tasks`,
 * `execution.taskSupport`) and the 2026-07-28 extension (flat handle, detailed tasks/get,
 * tasks/update, acknowledgements, notifications/tasks). The messages follow the specification's
 * examples, re-worded.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Capabilities from "../src/Capabilities.js"
import * as ErrorData from "../src/ErrorData.js"
import * as JsonRpc from "../src/JsonRpc.js"
import * as Method from "../src/Method.js"
import * as Subscriptions from "../src/Subscriptions.js"
import * as Tasks from "../src/Tasks.js"
import * as TasksExtension from "../src/TasksExtension.js"
import * as Tools from "../src/Tools.js"

const accepts = <A, I>(schema: Schema.Schema<A, I>, value: unknown): A => {
  const r = Schema.decodeUnknownEither(schema)(value)
  if (Either.isLeft(r)) throw new Error(`expected ${JSON.stringify(value)} to decode: ${r.left.message}`)
  return r.right
}
const rejects = <A, I>(schema: Schema.Schema<A, I>, value: unknown): void => {
  assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(schema)(value)), `expected ${JSON.stringify(value)} to be rejected`)
}

/** The params of a JSON-RPC request line, after the envelope decoded. */
const paramsOf = (line: string, method: string): unknown => {
  const frame = JSON.parse(line) as unknown
  const request = accepts(JsonRpc.Request, frame)
  assert.strictEqual(request.method, method)
  return request.params
}
/** The result of a JSON-RPC success line, after the envelope decoded. */
const resultOf = (line: string): unknown => accepts(JsonRpc.SuccessResponse, JSON.parse(line) as unknown).result

const id = "5a3c9d2e-81f0-4b7e-9c11-0d2f6e4a7b90"

describe("2025-11-25 core tasks", () => {
  const task = {
    taskId: id,
    status: "working",
    statusMessage: "Crunching the numbers.",
    createdAt: "2025-11-25T09:00:00Z",
    lastUpdatedAt: "2025-11-25T09:05:00Z",
    ttl: 45000,
    pollInterval: 2000
  }

  it("decodes a tools/call that asks for a task, and the nested handle it gets back", () => {
    const params = accepts(
      Tools.CallToolParams,
      paramsOf(
        `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"render_report","arguments":{"quarter":"Q3"},"task":{"ttl":45000}}}`,
        "tools/call"
      )
    )
    assert.deepStrictEqual(params.task, { ttl: 45000 })
    const handle = accepts(Tasks.CreateTaskResult, resultOf(JSON.stringify({ jsonrpc: "2.0", id: 7, result: { task } })))
    assert.strictEqual(handle.task.taskId, id)
    rejects(Tools.CallToolParams, { name: "render_report", task: { ttl: -1 } })
    rejects(Tasks.CreateTaskResult, task)
    rejects(Tasks.CreateTaskResult, { task: { ...task, ttl: undefined } })
  })

  it("decodes tasks/get and tasks/cancel with their flat task results", () => {
    accepts(Tasks.TaskIdParams, paramsOf(`{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"taskId":"${id}"}}`, "tasks/get"))
    const got = accepts(Tasks.GetTaskResult, { ...task, ttl: null })
    assert.isNull(got.ttl)
    const cancelled = accepts(Tasks.CancelTaskResult, { ...task, status: "cancelled", statusMessage: "Stopped on request." })
    assert.isTrue(Tasks.isTerminal(cancelled.status))
    assert.isFalse(Tasks.isTerminal(got.status))
    rejects(Tasks.TaskIdParams, {})
    rejects(Tasks.TaskIdParams, { taskId: 42 })
    rejects(Tasks.GetTaskResult, { ...task, status: "paused" })
    rejects(Tasks.GetTaskResult, { ...task, ttlMs: 45000, ttl: undefined })
  })

  it("decodes tasks/result: the call's own result, tied to its task in _meta", () => {
    const payload = {
      content: [{ type: "text", text: "Q3 revenue up 4%" }],
      isError: false,
      _meta: { [Tasks.RelatedTaskKey]: { taskId: id } }
    }
    const r = accepts(Tasks.TaskPayloadResult, payload)
    assert.strictEqual(Tasks.relatedTaskOf(r._meta), id)
    accepts(Tools.LegacyCallToolResult, payload)
    rejects(Tasks.TaskPayloadResult, { content: [] })
    rejects(Tasks.TaskPayloadResult, { content: [], _meta: { [Tasks.RelatedTaskKey]: { id } } })
    assert.isUndefined(Tasks.relatedTaskOf({ [Tasks.RelatedTaskKey]: "not-an-object" }))
  })

  it("decodes a paginated tasks/list", () => {
    accepts(Tasks.ListTasksParams, paramsOf(`{"jsonrpc":"2.0","id":9,"method":"tasks/list","params":{"cursor":"page-2"}}`, "tasks/list"))
    accepts(Tasks.ListTasksParams, {})
    const page = accepts(Tasks.ListTasksResult, {
      tasks: [task, { ...task, taskId: "older", status: "completed", ttl: 90000 }],
      nextCursor: "page-3"
    })
    assert.strictEqual(page.tasks.length, 2)
    assert.strictEqual(page.nextCursor, "page-3")
    rejects(Tasks.ListTasksParams, { cursor: 3 })
    rejects(Tasks.ListTasksResult, { tasks: [{ taskId: "x" }] })
  })

  it("decodes notifications/tasks/status", () => {
    const frame = accepts(JsonRpc.Notification, { jsonrpc: "2.0", method: Method.NotificationsTasksStatus, params: { ...task, status: "completed" } })
    accepts(Tasks.TaskStatusNotificationParams, frame.params)
    rejects(Tasks.TaskStatusNotificationParams, { taskId: id, status: "completed" })
  })

  it("decodes the tasks capabilities of both sides and execution.taskSupport on tools", () => {
    const server = accepts(Capabilities.LegacyServerCapabilities, {
      tools: {},
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } }
    })
    assert.isTrue(Tasks.serverAugmentsToolCalls(server))
    assert.isFalse(Tasks.serverAugmentsToolCalls({ tasks: { list: {} } }))
    accepts(Capabilities.LegacyClientCapabilities, {
      tasks: { cancel: {}, requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } }
    })
    rejects(Capabilities.LegacyServerCapabilities, { tasks: { requests: { tools: { call: true } } } })
    rejects(Capabilities.LegacyClientCapabilities, { tasks: { list: "yes" } })
    const tool = accepts(Tools.Tool, { name: "render_report", inputSchema: { type: "object" }, execution: { taskSupport: "required" } })
    assert.strictEqual(tool.execution?.taskSupport, "required")
    rejects(Tools.Tool, { name: "x", inputSchema: { type: "object" }, execution: { taskSupport: "sometimes" } })
  })

  it("knows which methods only 2025-11-25 has", () => {
    assert.isTrue(Method.isClientRequestIn("2025-11-25", Method.TasksList))
    assert.isFalse(Method.isClientRequestIn("2025-06-18", Method.TasksResult))
    assert.deepStrictEqual(Method.TasksRemovedByExtension, ["tasks/result", "tasks/list"])
  })
})

describe("2026-07-28 tasks extension", () => {
  const fields = {
    taskId: id,
    createdAt: "2026-07-28T12:00:00Z",
    lastUpdatedAt: "2026-07-28T12:00:30Z",
    ttlMs: 600000,
    pollIntervalMs: 1500
  }

  it("decodes the flat CreateTaskResult and refuses nested or stray fields", () => {
    const handle = accepts(
      TasksExtension.CreateTaskResult,
      resultOf(JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        result: { resultType: "task", status: "working", statusMessage: "Queued.", ...fields }
      }))
    )
    assert.strictEqual(handle.taskId, id)
    assert.isTrue(TasksExtension.isCreateTaskResult({ resultType: "task" }))
    accepts(TasksExtension.CreateTaskResult, { resultType: "task", status: "working", ...fields, ttlMs: null })
    rejects(TasksExtension.CreateTaskResult, { resultType: "complete", status: "working", ...fields })
    rejects(TasksExtension.CreateTaskResult, { resultType: "task", task: { status: "working", ...fields } })
    rejects(TasksExtension.CreateTaskResult, { resultType: "task", status: "working", ...fields, requestState: "s" })
    rejects(TasksExtension.CreateTaskResult, { resultType: "task", status: "working", ...fields, result: { content: [] } })
    rejects(TasksExtension.CreateTaskResult, { resultType: "task", status: "working", ...fields, ttlMs: 1.5 })
    rejects(TasksExtension.CreateTaskResult, { resultType: "task", status: "working", ...fields, ttl: 600000, ttlMs: undefined })
  })

  it("decodes tasks/get params and each state of the detailed task", () => {
    accepts(TasksExtension.TaskIdParams, paramsOf(`{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"${id}"}}`, "tasks/get"))
    const complete = { resultType: "complete", ...fields }
    accepts(TasksExtension.GetTaskResult, { ...complete, status: "working" })
    const waiting = accepts(TasksExtension.GetTaskResult, {
      ...complete,
      status: "input_required",
      inputRequests: {
        approve: {
          method: "elicitation/create",
          params: {
            mode: "form",
            message: "Publish the report?",
            requestedSchema: { type: "object", properties: { publish: { type: "boolean" } }, required: ["publish"] }
          }
        }
      }
    })
    assert.strictEqual(waiting.status, "input_required")
    accepts(TasksExtension.GetTaskResult, {
      ...complete,
      status: "completed",
      result: { content: [{ type: "text", text: "Published." }], isError: false }
    })
    accepts(TasksExtension.GetTaskResult, { ...complete, status: "failed", statusMessage: "Upstream quota hit", error: { code: -32603, message: "quota" } })
    accepts(TasksExtension.GetTaskResult, { ...complete, status: "cancelled" })
    rejects(TasksExtension.GetTaskResult, { ...fields, status: "working" })
    rejects(TasksExtension.GetTaskResult, { ...complete, status: "completed" })
    rejects(TasksExtension.GetTaskResult, { ...complete, status: "failed", error: { message: "no code" } })
    rejects(TasksExtension.GetTaskResult, { ...complete, status: "input_required", inputRequests: { k: { method: "ping" } } })
  })

  it("decodes tasks/update, tolerating answers to keys that are not outstanding, and its acknowledgement", () => {
    const params = accepts(
      TasksExtension.UpdateTaskParams,
      paramsOf(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 5,
          method: "tasks/update",
          params: { taskId: id, inputResponses: { approve: { action: "accept", content: { publish: true } }, stale: { ignored: true } } }
        }),
        "tasks/update"
      )
    )
    assert.deepStrictEqual(Object.keys(params.inputResponses), ["approve", "stale"])
    rejects(TasksExtension.UpdateTaskParams, { taskId: id })
    rejects(TasksExtension.UpdateTaskParams, { taskId: id, inputResponses: { approve: "yes" } })
    accepts(TasksExtension.UpdateTaskResult, resultOf(`{"jsonrpc":"2.0","id":5,"result":{"resultType":"complete"}}`))
    accepts(TasksExtension.UpdateTaskResult, TasksExtension.acknowledgement)
  })

  it("decodes tasks/cancel and refuses an acknowledgement that carries the task", () => {
    accepts(TasksExtension.TaskIdParams, paramsOf(`{"jsonrpc":"2.0","id":6,"method":"tasks/cancel","params":{"taskId":"${id}"}}`, "tasks/cancel"))
    accepts(TasksExtension.CancelTaskResult, { resultType: "complete" })
    rejects(TasksExtension.CancelTaskResult, { resultType: "complete", taskId: id, status: "cancelled" })
    rejects(TasksExtension.CancelTaskResult, {})
    rejects(TasksExtension.CancelTaskResult, { resultType: "task" })
  })

  it("decodes notifications/tasks and the listen filter that asks for them", () => {
    const frame = accepts(JsonRpc.Notification, {
      jsonrpc: "2.0",
      method: Method.NotificationsTasks,
      params: { ...fields, status: "completed", result: { content: [{ type: "text", text: "Published." }] } }
    })
    accepts(TasksExtension.TaskNotificationParams, frame.params)
    rejects(TasksExtension.TaskNotificationParams, { ...fields, status: "failed" })
    const listen = accepts(Subscriptions.ListenParams, { notifications: { taskIds: [id] }, _meta: {} })
    assert.isTrue(Subscriptions.wants(listen.notifications, Method.NotificationsTasks, { taskId: id }))
    assert.isFalse(Subscriptions.wants(listen.notifications, Method.NotificationsTasks, { taskId: "another" }))
  })

  it("negotiates per request and names itself in -32021", () => {
    assert.isTrue(TasksExtension.declared({ extensions: { "io.modelcontextprotocol/tasks": {} } }))
    assert.isFalse(TasksExtension.declared({ extensions: {} }))
    assert.isFalse(TasksExtension.declared({ tasks: {} }))
    const refusal = ErrorData.missingRequiredClientCapability(11, TasksExtension.requiredCapabilities)
    assert.deepStrictEqual(refusal.error.data, { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } })
    assert.isTrue(Method.isTasksExtensionRequest("tasks/update"))
    assert.isFalse(Method.isTasksExtensionRequest("tasks/result"))
  })
})
