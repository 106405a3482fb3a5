/**
 * A task is its caller's alone (issue 26), through the bundle: a daemon in front of the SDK 1.x task
 * upstream (sdk-v1-tasks). Another caller asking for the task by its id gets -32602, as for an id
 * nobody issued, on every task method of its era, and the task is untouched by it:
 *
 * - two SDK 1.x clients, each its own legacy session over `/mcp` (`tasks/get`, `tasks/result`,
 *   `tasks/cancel`, and `tasks/list` leaves it out);
 * - callers named by `dev.mcpx/session`: another name on a legacy session (`tasks/get`,
 *   `tasks/result`, `tasks/cancel`) and on 2026-07-28 requests declaring the tasks extension
 *   (`tasks/get`, `tasks/update`, `tasks/cancel`), and a 2026-07-28 request naming no session.
 */
import { assert, describe, it } from "@effect/vitest"
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CreateTaskResultSchema } from "@modelcontextprotocol/sdk/experimental/tasks/types.js"
import { CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import { openSession } from "./support/HttpMcp.js"
import { error, result } from "./support/Replies.js"
import type { Message } from "./support/StdioServe.js"
import { daemon, lines, modernHost, upstreamSaw } from "./support/TaskHosts.js"

const InvalidParams = -32602

const legacyClient = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new LegacyClient({ name: "tasks-owner-test", version: "1.0.0" }, { capabilities: { tasks: { list: {}, cancel: {} } } })
      const transport = new LegacyTransport(new URL(url))
      await client.connect(transport)
      return { client, session: transport.sessionId }
    }),
    ({ client }) => Effect.promise(() => client.close())
  )

/** The JSON-RPC error code a request of the SDK was refused with (the test fails if it was answered). */
const refusal = (request: () => Promise<unknown>): Effect.Effect<number> =>
  Effect.flatMap(
    Effect.promise(() => request().then((answered: unknown) => ({ answered }), (refused: unknown) => ({ refused }))),
    (outcome) =>
      "refused" in outcome && outcome.refused instanceof McpError
        ? Effect.succeed(outcome.refused.code)
        : Effect.dieMessage(`the other caller was not refused with an McpError: ${JSON.stringify(outcome)}`)
  )

const owned = (who: string): Message => ({ _meta: { "dev.mcpx/session": who } })

describe("a task is its caller's alone", () => {
  it.scopedLive("tasks/owner/sdk: another SDK 1.x client's session gets -32602 on tasks/get, tasks/result and tasks/cancel", () =>
    Effect.gen(function*() {
      const { daemon: d, log } = yield* daemon()
      const owner = yield* legacyClient(d.info.mcp)
      const other = yield* legacyClient(d.info.mcp)
      assert.notStrictEqual(owner.session, other.session)
      const created = yield* Effect.promise(() =>
        owner.client.request({ method: "tools/call", params: { name: "up__work", arguments: { ms: 600_000 }, task: {} } }, CreateTaskResultSchema)
      )
      const taskId = created.task.taskId
      yield* upstreamSaw(log, (seen) => seen.includes("legacy tasks/result"), "mcpx-fx never followed the upstream's task")

      assert.strictEqual(yield* refusal(() => other.client.experimental.tasks.getTask(taskId)), InvalidParams)
      assert.strictEqual(yield* refusal(() => other.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)), InvalidParams)
      assert.strictEqual(yield* refusal(() => other.client.experimental.tasks.cancelTask(taskId)), InvalidParams)
      const theirs = yield* Effect.promise(() => other.client.experimental.tasks.listTasks())
      assert.notInclude(theirs.tasks.map((t) => t.taskId), taskId)
      assert.notInclude(lines(log), "legacy tasks/cancel")

      // Untouched: still working for its owner, whose cancel then reaches the upstream's task.
      assert.strictEqual((yield* Effect.promise(() => owner.client.experimental.tasks.getTask(taskId))).status, "working")
      assert.strictEqual((yield* Effect.promise(() => owner.client.experimental.tasks.cancelTask(taskId))).status, "cancelled")
      yield* upstreamSaw(log, (seen) => seen.includes("legacy tasks/cancel"), "the owner's cancel did not reach the upstream")
    }), 120_000)

  it.scopedLive("tasks/owner/session: another dev.mcpx/session gets -32602 in either era; the owner's name reads it in both", () =>
    Effect.gen(function*() {
      const { http } = yield* daemon()
      const alice = yield* openSession(http, "2025-11-25", { tasks: { list: {}, cancel: {} } })
      const mallory = yield* openSession(http, "2025-11-25", { tasks: { list: {}, cancel: {} } })
      const created = result(
        (yield* alice.request(1, "tools/call", { name: "up__work", arguments: { ms: 600_000 }, task: {}, ...owned("alice") })).body as Message
      )
      const taskId = String((created.task as Message).taskId)

      // A legacy session naming another caller.
      for (const [id, method] of [[2, "tasks/get"], [3, "tasks/result"], [4, "tasks/cancel"]] as const) {
        const refused = (yield* mallory.request(id, method, { taskId, ...owned("mallory") })).body as Message
        assert.strictEqual(error(refused).code, InvalidParams, `${method}: ${JSON.stringify(refused)}`)
      }
      // 2026-07-28 requests naming another caller, or none.
      const modernMallory = modernHost(http, "mallory")
      const nobody = modernHost(http, undefined)
      const answer = { inputResponses: { anything: { action: "accept", content: { name: "Mallory" } } } }
      for (
        const [host, method] of [[modernMallory, "tasks/get"], [modernMallory, "tasks/update"], [modernMallory, "tasks/cancel"], [nobody, "tasks/get"], [
          nobody,
          "tasks/cancel"
        ]] as const
      ) {
        const refused = yield* host(`m-${method}`, method, method === "tasks/update" ? { taskId, ...answer } : { taskId })
        assert.strictEqual(error(refused).code, InvalidParams, `${method}: ${JSON.stringify(refused)}`)
      }

      // Untouched, and the owner's name reads it in both eras.
      const legacy = result((yield* alice.request(5, "tasks/get", { taskId, ...owned("alice") })).body as Message)
      assert.strictEqual(legacy.status, "working", JSON.stringify(legacy))
      const modern = result(yield* modernHost(http, "alice")("m-own", "tasks/get", { taskId }))
      assert.strictEqual(modern.status, "working", JSON.stringify(modern))
      assert.strictEqual(modern.resultType, "complete", JSON.stringify(modern))
      const cancelled = result((yield* alice.request(6, "tasks/cancel", { taskId, ...owned("alice") })).body as Message)
      assert.strictEqual(cancelled.status, "cancelled", JSON.stringify(cancelled))
    }), 120_000)
})
