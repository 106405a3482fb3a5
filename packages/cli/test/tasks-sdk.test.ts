/**
 * Tasks end to end with peers nobody here wrote (issue 26): an upstream on the official SDK 1.x's
 * own experimental tasks (`registerToolTask`, `execution.taskSupport: "required"`; the
 * sdk-v1-tasks fixture) behind a daemon from the bundle, called by the official SDK clients.
 *
 * - The SDK 1.x client, declaring tasks, runs the tool as a task through `/mcp` with the SDK's own
 *   task API (`callToolStream`, `getTask`, `getTaskResult`): a CreateTaskResult, then the result.
 * - The same client answers the question the upstream's task asks: the SDK delivers it on
 *   `tasks/result`, related to the host's own task (mcpx-fx renames the upstream's task id).
 * - The SDK 1.x client that asks for no task gets the tool's result in its request: mcpx-fx made
 *   the upstream call a task itself and followed it (the upstream's log shows the task).
 * - The SDK 2.x client (2.4.0, pinned to 2026-07-28) has no runtime for tasks of either era (its
 *   typed surface leaves the task methods out and it never declares the extension), so it gets the
 *   plain result too.
 * - A 2025-11-25 host over `mcpx-fx serve` (stdio) gets the same CreateTaskResult and result.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client"
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CreateTaskResultSchema } from "@modelcontextprotocol/sdk/experimental/tasks/types.js"
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import * as EraLog from "./support/EraLog.js"
import { HttpDaemon } from "./support/HttpDaemon.js"
import { firstText, result } from "./support/Replies.js"
import * as StdioServe from "./support/StdioServe.js"
import type { Sandbox } from "./support/Sandbox.js"

const clientInfo = { name: "tasks-sdk-test", version: "1.0.0" }
const RelatedTask = "io.modelcontextprotocol/related-task"

/** An sdk-v1-tasks upstream logging what it receives into the sandbox's `<name>.log`. */
const upstream = (sb: Sandbox, name: string) => Fixtures.stdioCommand("sdk-v1-tasks", ["--log", sb.path(`${name}.log`)])
/** An upstream of its own for each test (they run at once). */
const config = (sb: Sandbox) => ({
  servers: { up: upstream(sb, "up"), asker: upstream(sb, "asker"), plain: upstream(sb, "plain"), modern: upstream(sb, "modern") }
})

/** A call's first text block, whichever SDK's result type it came in. */
const textOf = (value: unknown): string => firstText({ result: value })

const legacyClient = (url: string, capabilities: ConstructorParameters<typeof LegacyClient>[1]) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new LegacyClient(clientInfo, capabilities)
      await client.connect(new LegacyTransport(new URL(url)))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

/** Whether the upstream logging to `file` ran a task to its end (the fixture notes `task completed <id>`). */
const ranTask = (file: string): boolean => EraLog.read(file).some((l) => l.era === "task" && l.method.startsWith("completed "))

describe("tasks with the official SDKs", () => {
  layer(HttpDaemon.layer(config), { timeout: 60_000 })("an SDK 1.x task upstream behind a daemon", (it) => {
    it.effect("tasks/sdk/the SDK 1.x client declaring tasks runs a required-task tool as a task with the SDK's own task API", () =>
      Effect.scoped(Effect.gen(function*() {
        const { daemon, sandbox } = yield* HttpDaemon
        const client = yield* legacyClient(daemon.info.mcp, { capabilities: { tasks: { list: {}, cancel: {} } } })
        assert.isObject(client.getServerCapabilities()?.tasks?.requests?.tools?.call, JSON.stringify(client.getServerCapabilities()))
        // The listing is mcpx-fx's: it runs any tool as a task, and one the upstream requires as a task without one too.
        const listed = yield* Effect.promise(() => client.listTools())
        const work = listed.tools.find((t) => t.name === "up__work")
        assert.strictEqual(work?.execution?.taskSupport, "optional", JSON.stringify(work))

        // The SDK's stream, left to decide from the listing: the task made, tasks/get polled, tasks/result read.
        const messages = yield* Effect.promise(async () => {
          const all = []
          for await (const m of client.experimental.tasks.callToolStream({ name: "up__work", arguments: { ms: 300 } })) all.push(m)
          return all
        })
        const kinds = messages.map((m) => (m.type === "error" ? `error: ${m.error.message}` : m.type))
        assert.strictEqual(kinds[0], "taskCreated", kinds.join(", "))
        const last = messages.at(-1)
        assert.strictEqual(last?.type, "result", kinds.join(", "))
        if (last?.type === "result") assert.strictEqual(textOf(last.result), "worked 300ms")

        // The same, a request at a time: tools/call with params.task, then tasks/get, tasks/result, tasks/list.
        const created = yield* Effect.promise(() =>
          client.request({ method: "tools/call", params: { name: "up__work", arguments: { ms: 200 }, task: { ttl: 60_000 } } }, CreateTaskResultSchema)
        )
        assert.strictEqual(created.task.status, "working", JSON.stringify(created))
        const got = yield* Effect.promise(() => client.experimental.tasks.getTask(created.task.taskId))
        assert.strictEqual(got.taskId, created.task.taskId)
        const payload = yield* Effect.promise(() => client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema))
        assert.strictEqual(textOf(payload), "worked 200ms")
        assert.strictEqual((yield* Effect.promise(() => client.experimental.tasks.getTask(created.task.taskId))).status, "completed")
        const mine = yield* Effect.promise(() => client.experimental.tasks.listTasks())
        assert.include(mine.tasks.map((t) => t.taskId), created.task.taskId)
        assert.isTrue(ranTask(sandbox.path("up.log")))
      })))

    it.effect("tasks/sdk/the SDK 1.x client answers the upstream task's question through its own task (tasks/result delivers it)", () =>
      Effect.scoped(Effect.gen(function*() {
        const { daemon, sandbox } = yield* HttpDaemon
        const client = yield* legacyClient(daemon.info.mcp, { capabilities: { elicitation: { form: {} }, tasks: { list: {}, cancel: {} } } })
        const asked: Array<Readonly<Record<string, unknown>>> = []
        client.setRequestHandler(ElicitRequestSchema, (request) => {
          asked.push(request.params)
          return Promise.resolve({ action: "accept", content: { name: "Ada" } })
        })
        yield* Effect.promise(() => client.listTools())
        const messages = yield* Effect.promise(async () => {
          const all = []
          for await (const m of client.experimental.tasks.callToolStream({ name: "asker__ask", arguments: {} })) all.push(m)
          return all
        })
        const created = messages[0]
        assert.strictEqual(created?.type, "taskCreated", JSON.stringify(messages))
        const taskId = created?.type === "taskCreated" ? created.task.taskId : ""
        const last = messages.at(-1)
        assert.strictEqual(last?.type, "result", JSON.stringify(messages))
        if (last?.type === "result") assert.strictEqual(textOf(last.result), "hello, Ada")
        // The question came related to the host's own task, never to the upstream's.
        assert.lengthOf(asked, 1)
        assert.deepStrictEqual(asked[0]?._meta, { [RelatedTask]: { taskId } })
        assert.isTrue(EraLog.read(sandbox.path("asker.log")).some((l) => l.era === "elicited" && l.method.endsWith(" accept Ada")))
      })))

    it.effect("tasks/sdk/the SDK 1.x client that asks for no task gets the result in its request; mcpx-fx ran the upstream's task", () =>
      Effect.scoped(Effect.gen(function*() {
        const { daemon, sandbox } = yield* HttpDaemon
        const client = yield* legacyClient(daemon.info.mcp, { capabilities: {} })
        // Listed first, as a host does: a tool listed as required would be refused by the SDK itself here.
        yield* Effect.promise(() => client.listTools())
        const called = yield* Effect.promise(() => client.callTool({ name: "plain__work", arguments: { ms: 250 } }))
        assert.strictEqual(textOf(called), "worked 250ms")
        assert.notProperty(called, "task")
        const log = sandbox.path("plain.log")
        assert.includeMembers(EraLog.read(log).map((l) => `${l.era} ${l.method}`), ["legacy tools/call", "legacy tasks/result"])
        assert.isTrue(ranTask(log))
      })))

    it.effect("tasks/sdk/the SDK 2.x client pinned to 2026-07-28 (no tasks runtime, no extension) gets the plain result", () =>
      Effect.scoped(Effect.gen(function*() {
        const { daemon, sandbox } = yield* HttpDaemon
        const client = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const c = new ModernClient(clientInfo, { capabilities: {}, versionNegotiation: { mode: { pin: "2026-07-28" } } })
            await c.connect(new ModernTransport(new URL(daemon.info.mcp)))
            return c
          }),
          (c) => Effect.promise(() => c.close())
        )
        assert.strictEqual(client.getNegotiatedProtocolVersion(), "2026-07-28")
        const called = yield* Effect.promise(() => client.callTool({ name: "modern__work", arguments: { ms: 150 } }))
        assert.strictEqual(textOf(called), "worked 150ms")
        assert.notProperty(called, "resultType")
        assert.isTrue(ranTask(sandbox.path("modern.log")))
      })))
  })

  layer(
    StdioServe.SharedServe.layer((sb) => ({ servers: { up: upstream(sb, "up") } }), (serve) =>
      Effect.zipRight(
        serve.request("init", "initialize", { protocolVersion: "2025-11-25", capabilities: { tasks: { list: {}, cancel: {} } }, clientInfo }),
        serve.send({ method: "notifications/initialized" })
      )),
    { timeout: 60_000 }
  )("the same upstream behind mcpx-fx serve", (it) => {
    it.effect("tasks/sdk/stdio: a 2025-11-25 host makes the SDK 1.x tool a task over mcpx-fx serve and reads its result", () =>
      Effect.gen(function*() {
        const serve = yield* StdioServe.SharedServe
        const created = result(yield* serve.request(1, "tools/call", { name: "up__work", arguments: { ms: 200 }, task: {} }))
        const task = created.task as { taskId?: unknown; status?: unknown }
        assert.isString(task.taskId, JSON.stringify(created))
        assert.strictEqual(task.status, "working", JSON.stringify(created))
        const done = yield* serve.request(2, "tasks/result", { taskId: task.taskId })
        assert.strictEqual(firstText(done), "worked 200ms")
        assert.strictEqual(result(yield* serve.request(3, "tasks/get", { taskId: task.taskId })).status, "completed")
        assert.isTrue(ranTask(serve.sandbox.path("up.log")))
      }))
  })
})
