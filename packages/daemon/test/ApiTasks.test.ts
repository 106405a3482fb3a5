/**
 * `/v1/tasks` and `POST /v1/call` with `task`, over the API's web handler in front of the era
 * fixture (real stdio processes): a task answers 202 at once and is followed by id; its questions
 * make it `input_required` and its answers go upstream; cancel, a wait that runs out, and another
 * session are told apart by status.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redact from "@mcpx-fx/gateway/Redact"
import * as TestGateway from "@mcpx-fx/testing/gateway/TestGateway"
import * as TaskRoutes from "../src/TaskRoutes.js"
import { call, dependencies, webHandler } from "./support/ApiHarness.js"

const servers = { dual: TestGateway.era("dual"), leg: TestGateway.era("legacy-32601") }
type Body = Record<string, unknown>
const taskOf = (body: Body) => body.task as Body
const textOf = (body: Body) => JSON.stringify((body.result as Body | undefined)?.content)

describe("/v1/tasks", () => {
  it.scopedLive("v1/tasks/a call with task answers 202 at once; its result is the call's own", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const made = yield* call(web.handler, "POST", "/v1/call", { tool: "dual.slow", arguments: { ms: 300 }, task: {} })
      assert.strictEqual(made.status, 202, JSON.stringify(made.body))
      const task = taskOf(made.body)
      assert.strictEqual(task.status, "working")
      // 128 random bits, base64url.
      assert.match(String(task.taskId), /^[A-Za-z0-9_-]{22,}$/)
      assert.isNumber(task.pollIntervalMs)
      const read = yield* call(web.handler, "GET", `/v1/tasks/${String(task.taskId)}`)
      assert.strictEqual(read.status, 200, JSON.stringify(read.body))
      assert.include(["working", "completed"], read.body.status)
      const done = yield* call(web.handler, "GET", `/v1/tasks/${String(task.taskId)}/result?waitMs=20000`)
      assert.strictEqual(done.status, 200, JSON.stringify(done.body))
      assert.strictEqual(done.body.taskId, task.taskId)
      assert.isFalse(done.body.isError)
      assert.include(textOf(done.body), "slept 300ms")
      // The task's own _meta key is said by taskId, not left in the result.
      assert.notInclude(JSON.stringify(done.body.result), "related-task")
      assert.strictEqual((yield* call(web.handler, "GET", `/v1/tasks/${String(task.taskId)}`)).body.status, "completed")
    }).pipe(Effect.provide(dependencies(servers))))

  it.scopedLive("v1/tasks/a wait that runs out is a 408 with the status; cancel stops it, and its result is a 409", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const made = yield* call(web.handler, "POST", "/v1/call", { tool: "dual.slow", arguments: { ms: 600_000 }, task: { ttlMs: 60_000 } })
      const id = String(taskOf(made.body).taskId)
      assert.strictEqual(taskOf(made.body).ttlMs, 60_000)
      const waited = yield* call(web.handler, "GET", `/v1/tasks/${id}/result?waitMs=50`)
      assert.strictEqual(waited.status, 408, JSON.stringify(waited.body))
      assert.deepInclude(waited.body, { _tag: "TaskPending", taskId: id, status: "working" })
      const cancelled = yield* call(web.handler, "POST", `/v1/tasks/${id}/cancel`, {})
      assert.strictEqual(cancelled.status, 200, JSON.stringify(cancelled.body))
      assert.strictEqual(cancelled.body.status, "cancelled")
      const result = yield* call(web.handler, "GET", `/v1/tasks/${id}/result?waitMs=1000`)
      assert.strictEqual(result.status, 409, JSON.stringify(result.body))
      assert.strictEqual(result.body._tag, "TaskCancelled")
    }).pipe(Effect.provide(dependencies(servers))))

  it.scopedLive("v1/tasks/a question makes the task input_required; its answer goes upstream and the call ends", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const made = yield* call(web.handler, "POST", "/v1/call", { tool: "leg.ask_name", task: {} })
      const id = String(taskOf(made.body).taskId)
      const waited = yield* call(web.handler, "GET", `/v1/tasks/${id}/result?waitMs=20000`)
      assert.strictEqual(waited.status, 408, JSON.stringify(waited.body))
      assert.strictEqual(waited.body.status, "input_required")
      const read = yield* call(web.handler, "GET", `/v1/tasks/${id}`)
      const requests = read.body.inputRequests as Record<string, Body>
      const [key, question] = Object.entries(requests)[0] ?? []
      assert.strictEqual(question?.method, "elicitation/create", JSON.stringify(read.body))
      const answered = yield* call(web.handler, "POST", `/v1/tasks/${id}/answers`, {
        inputResponses: { [String(key)]: { action: "accept", content: { name: "Ada" } } }
      })
      assert.strictEqual(answered.status, 200, JSON.stringify(answered.body))
      assert.notStrictEqual(answered.body.status, "input_required")
      const done = yield* call(web.handler, "GET", `/v1/tasks/${id}/result?waitMs=20000`)
      assert.strictEqual(done.status, 200, JSON.stringify(done.body))
      assert.include(textOf(done.body), "hello, Ada")
    }).pipe(Effect.provide(dependencies(servers))))

  it.scopedLive("v1/tasks/names and arguments are checked before a task is made; an unknown id is a 404", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const unknown = yield* call(web.handler, "POST", "/v1/call", { tool: "dual.nope", task: {} })
      assert.strictEqual(unknown.status, 404, JSON.stringify(unknown.body))
      const bad = yield* call(web.handler, "POST", "/v1/call", { tool: "dual.slow", arguments: { ms: "soon" }, task: {} })
      assert.strictEqual(bad.status, 400, JSON.stringify(bad.body))
      const missing = yield* call(web.handler, "GET", "/v1/tasks/AAAAAAAAAAAAAAAAAAAAAA")
      assert.strictEqual(missing.status, 404, JSON.stringify(missing.body))
      assert.strictEqual(missing.body._tag, "TaskNotFound")
      assert.strictEqual((yield* call(web.handler, "POST", "/v1/tasks/AAAAAAAAAAAAAAAAAAAAAA/cancel", {})).status, 404)
      const owned = yield* Effect.locally(Redact.RawForOwner, true)(TaskRoutes.list({}))
      assert.deepStrictEqual(owned.tasks, [])
    }).pipe(Effect.provide(dependencies(servers))))

  it.scopedLive("v1/tasks/a task is its session's; listing is the owner's alone, on the socket", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const made = yield* call(web.handler, "POST", "/v1/call", { tool: "dual.hello", task: {}, session: "alice" })
      const id = String(taskOf(made.body).taskId)
      assert.strictEqual((yield* call(web.handler, "GET", `/v1/tasks/${id}?session=bob`)).status, 404)
      assert.strictEqual((yield* call(web.handler, "GET", `/v1/tasks/${id}`)).status, 404)
      assert.strictEqual((yield* call(web.handler, "POST", `/v1/tasks/${id}/cancel`, { session: "bob" })).status, 404)
      assert.strictEqual((yield* call(web.handler, "GET", `/v1/tasks/${id}/result?session=alice&waitMs=20000`)).status, 200)
      const listed = yield* call(web.handler, "GET", "/v1/tasks?session=alice")
      assert.strictEqual(listed.status, 403, JSON.stringify(listed.body))
      const owned = yield* Effect.locally(Redact.RawForOwner, true)(TaskRoutes.list({ session: "alice" }))
      assert.deepStrictEqual(owned.tasks.map((t) => [t.taskId, t.status]), [[id, "completed"]])
      const others = yield* Effect.locally(Redact.RawForOwner, true)(TaskRoutes.list({}))
      assert.deepStrictEqual(others.tasks, [])
    }).pipe(Effect.provide(dependencies(servers))))
})
