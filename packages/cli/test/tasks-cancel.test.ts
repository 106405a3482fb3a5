/**
 * A host's task cancelled while it waits on a question (issue 26), through the bundle: a daemon in
 * front of the SDK 1.x task upstream (sdk-v1-tasks: the SDK's own `registerToolTask`, task store and
 * `tasks/cancel`), a 2026-07-28 host declaring the tasks extension over `/mcp`.
 *
 * The host calls `ask`: a task at once (the upstream's tool supports tasks), which reads
 * `input_required` with the upstream's question. `tasks/cancel` makes it `cancelled`; a later
 * `tasks/update` is acknowledged and changes nothing (the answer never reaches the upstream, and
 * the next task on the same upstream gets its own answer). The upstream must hear of the cancel
 * at once too (its task cancelled, or at least the `tasks/result` that follows it), as it does
 * when a `working` task is cancelled: that test fails today (see the comment on it).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { result } from "./support/Replies.js"
import { daemon, lines, modernHost, pollUntil, upstreamSaw, upstreamTasks } from "./support/TaskHosts.js"

/** The one question an `input_required` task of `ask` reads, and its key. */
const question = (task: Readonly<Record<string, unknown>>): { readonly key: string; readonly message: unknown } => {
  const requests = task.inputRequests
  assert.isObject(requests, JSON.stringify(task))
  const entries = Object.entries(requests as Record<string, { method?: unknown; params?: { message?: unknown; _meta?: object } }>)
  assert.lengthOf(entries, 1, JSON.stringify(task))
  const [key, request] = entries[0]!
  assert.strictEqual(request.method, "elicitation/create", JSON.stringify(task))
  // The upstream ties it to its own task, whose id means nothing here (and is 2025-11-25's word).
  assert.notProperty(request.params?._meta ?? {}, "io.modelcontextprotocol/related-task", JSON.stringify(task))
  return { key, message: request.params?.message }
}

/** A daemon and a task of `ask` reading `input_required`; the upstream's own task id with it. */
const asking = Effect.gen(function*() {
  // Questions wait ten minutes for their caller: nothing below may be that wait running out.
  const running = yield* daemon({ "questions.ttl": "10m" })
  const alice = modernHost(running.http, "alice")
  const created = result(yield* alice("create", "tools/call", { name: "up__ask", arguments: {} }))
  assert.strictEqual(created.resultType, "task", JSON.stringify(created))
  assert.include(["working", "input_required"], created.status, JSON.stringify(created))
  const taskId = String(created.taskId)
  const get = alice("get", "tasks/get", { taskId })
  const task = yield* pollUntil(get, "input_required")
  const asked = question(task)
  assert.strictEqual(asked.message, "What is your name?")
  const upstreamTask = upstreamTasks(running.log, "input_required")
  assert.lengthOf(upstreamTask, 1, lines(running.log).join("\n"))
  return { ...running, alice, taskId, get, key: asked.key, upstreamTask: upstreamTask[0]! }
})

describe("a task cancelled while input_required", () => {
  it.scopedLive(
    "tasks/cancel/input-required: tasks/cancel makes it cancelled; a later tasks/update is acknowledged and changes nothing",
    () =>
      Effect.gen(function*() {
        const { alice, get, key, log, taskId, upstreamTask } = yield* asking
        assert.deepStrictEqual(result(yield* alice("cancel", "tasks/cancel", { taskId })), { resultType: "complete" })
        const cancelled = result(yield* get)
        assert.strictEqual(cancelled.status, "cancelled", JSON.stringify(cancelled))
        assert.notProperty(cancelled, "inputRequests")
        assert.notProperty(cancelled, "result")

        const late = yield* alice("late", "tasks/update", { taskId, inputResponses: { [key]: { action: "accept", content: { name: "Ada" } } } })
        assert.deepStrictEqual(result(late), { resultType: "complete" })
        const after = result(yield* get)
        assert.strictEqual(after.status, "cancelled", JSON.stringify(after))
        assert.strictEqual(after.lastUpdatedAt, cancelled.lastUpdatedAt)

        // The same upstream still serves the next task, which gets its own answer and not Ada.
        const next = result(yield* alice("next", "tools/call", { name: "up__ask", arguments: {} }))
        const nextId = String(next.taskId)
        const nextGet = alice("next-get", "tasks/get", { taskId: nextId })
        const nextKey = question(yield* pollUntil(nextGet, "input_required")).key
        yield* alice("answer", "tasks/update", { taskId: nextId, inputResponses: { [nextKey]: { action: "accept", content: { name: "Grace" } } } })
        const done = yield* pollUntil(nextGet, "completed")
        assert.deepStrictEqual((done.result as { content?: unknown }).content, [{ type: "text", text: "hello, Grace" }], JSON.stringify(done))
        // The late answer never reached the upstream; the next task's did.
        assert.notInclude(lines(log), `elicited ${upstreamTask} accept Ada`, lines(log).join("\n"))
        assert.isTrue(lines(log).some((l) => /^elicited \S+ accept Grace$/.test(l)), lines(log).join("\n"))
        assert.strictEqual(result(yield* get).status, "cancelled")
      }),
    120_000
  )

  // Fails today: see the report of issue 26. The call behind an `input_required` task is parked
  // on its question with no fiber running, and tasks/cancel only interrupts a running fiber, so
  // the upstream hears nothing until `questions.ttl` answers the question for it (ten minutes
  // by default); only then does its tasks/cancel go out.
  it.scopedLive(
    "tasks/cancel/input-required: the upstream hears of the cancel at once (tasks/cancel, or its tasks/result cancelled)",
    () =>
      Effect.gen(function*() {
        const { alice, log, taskId, upstreamTask } = yield* asking
        assert.deepStrictEqual(result(yield* alice("cancel", "tasks/cancel", { taskId })), { resultType: "complete" })
        // Either way of telling it counts: its task cancelled, or the tasks/result that follows the task.
        yield* upstreamSaw(
          log,
          (seen) => seen.includes("legacy tasks/cancel") || seen.includes("legacy notifications/cancelled"),
          "the host's tasks/cancel of an input_required task did not reach the upstream (neither tasks/cancel nor notifications/cancelled)"
        )
        assert.isFalse(lines(log).some((l) => l.startsWith(`elicited ${upstreamTask} accept`)), lines(log).join("\n"))
      }),
    120_000
  )

  it.scopedLive("tasks/cancel/working: a working task cancelled by its host is cancelled upstream (the SDK's tasks/cancel)", () =>
    Effect.gen(function*() {
      const { http, log } = yield* daemon()
      const bob = modernHost(http, "bob")
      const created = result(yield* bob("create", "tools/call", { name: "up__work", arguments: { ms: 600_000 } }))
      assert.strictEqual(created.resultType, "task", JSON.stringify(created))
      const taskId = String(created.taskId)
      yield* upstreamSaw(log, (seen) => seen.includes("legacy tasks/result"), "mcpx-fx never followed the upstream's task")
      assert.deepStrictEqual(result(yield* bob("cancel", "tasks/cancel", { taskId })), { resultType: "complete" })
      assert.strictEqual(result(yield* bob("get", "tasks/get", { taskId })).status, "cancelled")
      yield* upstreamSaw(log, (seen) =>
        seen.includes("legacy tasks/cancel") && seen.some((l) => l.startsWith("task cancelled ")), "the upstream's task was not cancelled")
      assert.lengthOf(upstreamTasks(log, "completed"), 0)
    }), 120_000)
})
