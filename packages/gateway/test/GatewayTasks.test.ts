/**
 * Tasks through the whole in-process path, against the conformance fixture (the official SDK's
 * task tools: `slow_compute`, `failing_job` that runs only as a task, `confirm_delete` that asks
 * inside its task): Server → HostTasks → GatewayBackend → Gateway → TaskCall → Pool → fixture.
 *
 * A modern upstream decides which calls become tasks; mcpx-fx follows them to their end for a
 * host that knows no tasks, and hands a host that declared the extension a task of its own at once.
 */
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import type { QuestionChannel } from "@mcpx-fx/server/Backend"
import * as Server from "@mcpx-fx/server/Server"
import { RequestState } from "@mcpx-fx/server/RequestState"
import * as Fixtures from "@mcpx-fx/testing/Fixtures"
import { layer as gateway } from "@mcpx-fx/testing/gateway/TestGateway"
import * as TestTasks from "@mcpx-fx/testing/server/TestTasks"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as GatewayBackend from "../src/GatewayBackend.js"

const Ext = "io.modelcontextprotocol/tasks"

const serverFor = (args: ReadonlyArray<string> = []) =>
  Server.Server.layer.pipe(
    Layer.provide(TestTasks.layer),
    Layer.provide(GatewayBackend.layer),
    Layer.provide(gateway({ conf: Fixtures.stdioCommand("conformance-fixture", args) })),
    Layer.provide(RequestState.layer)
  )

const modernMeta = (capabilities: JsonObject): JsonObject => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": capabilities,
  "io.modelcontextprotocol/clientInfo": { name: "tasks-test", version: "1.0.0" },
  "dev.mcpx/session": "tasks-test"
})
const withTasks = modernMeta({ elicitation: {}, extensions: { [Ext]: {} } })
const withoutTasks = modernMeta({ elicitation: {} })

const send = (message: JsonRpc.Request) =>
  Effect.gen(function*() {
    const server = yield* Server.Server
    const connection = yield* Server.makeConnection(`c-${message.id}`)
    return yield* server.handle(message, { connection })
  })

const resultOf = (r: JsonRpc.Response | undefined): JsonObject => {
  if (r === undefined || !JsonRpc.isSuccess(r)) throw new Error(`expected a result, got ${JSON.stringify(r)}`)
  return r.result
}

let ids = 1
const call = (name: string, args: JsonObject, meta: JsonObject) => JsonRpc.request(ids++, "tools/call", { name: `conf__${name}`, arguments: args, _meta: meta })
const taskReq = (method: string, params: JsonObject) => JsonRpc.request(ids++, method, { ...params, _meta: withTasks })

/** Polls `tasks/get` at the interval a host is told to, until the task reads `status` (or a terminal one). */
const until = (taskId: string, status: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 300; i++) {
      const task = resultOf(yield* send(taskReq("tasks/get", { taskId })))
      if (task.status === status || ["completed", "failed", "cancelled"].includes(String(task.status))) return task
      yield* Effect.sleep(Duration.millis(100))
    }
    return assert.fail(`task ${taskId} never read ${status}`)
  })

const text = (result: unknown): string => JSON.stringify((result as JsonObject).content)

describe("tasks through the gateway (conformance fixture upstream)", () => {
  it.scopedLive("a host without tasks gets the final result of a call the upstream ran as a task", () =>
    Effect.gen(function*() {
      const slow = resultOf(yield* send(call("slow_compute", { seconds: 0 }, withoutTasks)))
      assert.strictEqual(slow.resultType, "complete")
      assert.include(text(slow), "slow_compute finished")
      // failing_job runs only as a task upstream; its tool error comes back as the call's result.
      const failing = resultOf(yield* send(call("failing_job", {}, withoutTasks)))
      assert.strictEqual(failing.isError, true)
      assert.isUndefined(failing.taskId)
    }).pipe(Effect.provide(serverFor())))

  it.scopedLive("a host with tasks gets a task at once when the upstream makes one, and its result inline once done", () =>
    Effect.gen(function*() {
      // One second is under tasks.after: only the upstream's own task makes this a task now.
      const created = resultOf(yield* send(call("slow_compute", { seconds: 1 }, withTasks)))
      assert.strictEqual(created.resultType, "task")
      assert.isString(created.taskId)
      const done = yield* until(String(created.taskId), "completed")
      assert.strictEqual(done.status, "completed")
      assert.include(text(done.result), "slow_compute finished after 1s")
    }).pipe(Effect.provide(serverFor())))

  it.scopedLive("a question inside the upstream's task makes the host's task input_required, and tasks/update answers it upstream", () =>
    Effect.gen(function*() {
      const created = resultOf(yield* send(call("confirm_delete", { filename: "a.txt" }, withTasks)))
      assert.strictEqual(created.resultType, "task")
      const taskId = String(created.taskId)
      const asking = yield* until(taskId, "input_required")
      assert.strictEqual(asking.status, "input_required")
      const keys = Object.keys(asking.inputRequests as JsonObject)
      assert.isAtLeast(keys.length, 1)
      const answers = Object.fromEntries(keys.map((k) => [k, { action: "accept", content: { confirm: true } }]))
      assert.strictEqual(resultOf(yield* send(taskReq("tasks/update", { taskId, inputResponses: answers }))).resultType, "complete")
      const done = yield* until(taskId, "completed")
      assert.strictEqual(done.status, "completed")
      assert.include(text(done.result), "a.txt")
    }).pipe(Effect.provide(serverFor())))

  it.scopedLive("tasks/cancel ends the host's task cancelled while the upstream's runs", () =>
    Effect.gen(function*() {
      const taskId = String(resultOf(yield* send(call("slow_compute", { seconds: 60 }, withTasks))).taskId)
      yield* send(taskReq("tasks/cancel", { taskId }))
      const cancelled = yield* until(taskId, "cancelled")
      assert.strictEqual(cancelled.status, "cancelled")
    }).pipe(Effect.provide(serverFor())))

  it.scopedLive("a 2025-11-25 upstream's question inside its task, naming the task, reaches the 2026 host's task as input_required", () =>
    Effect.gen(function*() {
      // Over stdio the question names no call, only the task (related-task _meta), and may come
      // before mcpx-fx has sent the tasks/result that follows it.
      const created = resultOf(yield* send(call("confirm_delete", { filename: "b.txt" }, withTasks)))
      assert.strictEqual(created.resultType, "task")
      const taskId = String(created.taskId)
      const asking = yield* until(taskId, "input_required")
      assert.strictEqual(asking.status, "input_required")
      const keys = Object.keys(asking.inputRequests as JsonObject)
      assert.strictEqual(keys.length, 1)
      const answers = Object.fromEntries(keys.map((k) => [k, { action: "accept", content: { confirm: true } }]))
      yield* send(taskReq("tasks/update", { taskId, inputResponses: answers }))
      const done = yield* until(taskId, "completed")
      assert.strictEqual(done.status, "completed")
      assert.include(text(done.result), "b.txt")
      assert.notInclude(JSON.stringify(done.result), "related-task")
    }).pipe(Effect.provide(serverFor(["--legacy-only"]))))

  it.scopedLive("two questions a 2025-11-25 upstream's task asks together reach the 2026 host's task in one round", () =>
    Effect.gen(function*() {
      // Over stdio they come as two requests naming the task, often before its tasks/result is sent.
      const created = resultOf(yield* send(call("multi_input", {}, withTasks)))
      const taskId = String(created.taskId)
      const asking = yield* until(taskId, "input_required")
      const keys = Object.keys(asking.inputRequests as JsonObject)
      assert.strictEqual(keys.length, 2, JSON.stringify(asking.inputRequests))
      const messages = keys.map((k) => String(((asking.inputRequests as Record<string, JsonObject>)[k]!.params as JsonObject).message))
      assert.sameMembers(messages, ["First: what is your name?", "Second: shall we go on?"])
      const answers = Object.fromEntries(keys.map((k) => [k, { action: "accept", content: { name: "Ada", confirm: true } }]))
      yield* send(taskReq("tasks/update", { taskId, inputResponses: answers }))
      const done = yield* until(taskId, "completed")
      assert.strictEqual(done.status, "completed")
      assert.include(text(done.result), "Ada")
    }).pipe(Effect.provide(serverFor(["--legacy-only"]))))

  it.scopedLive("a 2025-11-25 host gets failing_job's result from a legacy upstream through core tasks (params.task, tasks/result)", () =>
    Effect.gen(function*() {
      const server = yield* Server.Server
      const connection = yield* Server.makeConnection("legacy-host")
      const questions: QuestionChannel = () => Effect.succeed({ action: "cancel" })
      resultOf(
        yield* server.handle(
          JsonRpc.request(0, "initialize", {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "legacy-host", version: "1.0.0" }
          }),
          { connection }
        )
      )
      yield* server.handle(JsonRpc.notification("notifications/initialized"), { connection })
      const failing = resultOf(
        yield* server.handle(JsonRpc.request(1, "tools/call", { name: "conf__failing_job", arguments: {} }), {
          connection,
          questions
        })
      )
      assert.strictEqual(failing.isError, true)
    }).pipe(Effect.provide(serverFor(["--legacy-only"]))))
})
