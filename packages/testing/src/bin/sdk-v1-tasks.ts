/**
 * A 2025-11-25 task upstream on `@modelcontextprotocol/sdk` 1.x's own experimental tasks, as a
 * server in the wild would write one: `server.experimental.tasks.registerToolTask`, the SDK's
 * `InMemoryTaskStore` and `InMemoryTaskMessageQueue`, and the tasks capability it then answers
 * (`tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` are the SDK's, not ours).
 *
 * | tool | task support | behaviour |
 * |---|---|---|
 * | `work` | required | works `ms` milliseconds in the background, then `worked <ms>ms` |
 * | `ask` | required | reads `input_required`, asks a name (`elicitation/create` related to the task, delivered on `tasks/result`), then `hello, <name>` |
 *
 *   node sdk-v1-tasks.js                 stdio
 *   node sdk-v1-tasks.js --http [--port] sessionful Streamable HTTP on 127.0.0.1 at /mcp
 *   --log <file>                         what it received and asked, one line each (../sdk/WireLog.ts),
 *                                        plus `task <status> <taskId>` when a task's status is written
 *                                        and `elicited <taskId> <action> [<name>]` when `ask` is answered
 */
import { randomUUID } from "node:crypto"
import { appendFileSync } from "node:fs"
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { type CallToolResult, CallToolResultSchema, type Task } from "@modelcontextprotocol/sdk/types.js"
import * as z from "zod"
import { log, parseArgs } from "../sdk/Cli.js"
import { localhostOnly, serveHttp } from "../sdk/HttpHost.js"
import { legacySessions } from "../sdk/LegacySessions.js"
import { logWire } from "../sdk/WireLog.js"

const fixture = "sdk-v1-tasks"
const args = parseArgs(fixture, process.argv.slice(2), [], ["--log"])
const logFile = args.values.get("--log")
const note = (line: string) => {
  if (logFile !== undefined) appendFileSync(logFile, `${line}\n`)
}

/** The SDK's store, with every status it writes noted in the log (a cancel reaching it, too). */
class NotedTaskStore extends InMemoryTaskStore {
  override async updateTaskStatus(taskId: string, status: Task["status"], statusMessage?: string, sessionId?: string): Promise<void> {
    note(`task ${status} ${taskId}`)
    return super.updateTaskStatus(taskId, status, statusMessage, sessionId)
  }
  override async storeTaskResult(
    taskId: string,
    status: "completed" | "failed",
    result: Parameters<InMemoryTaskStore["storeTaskResult"]>[2],
    sessionId?: string
  ): Promise<void> {
    note(`task ${status} ${taskId}`)
    return super.storeTaskResult(taskId, status, result, sessionId)
  }
}

const taskStore = new NotedTaskStore()
const taskMessageQueue = new InMemoryTaskMessageQueue()
const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] })
/** A stored result, as the tool result it is (this store only keeps the ones `text` made). */
const resultOf = (stored: unknown): CallToolResult => CallToolResultSchema.parse(stored)
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
/** A question in a task may wait as long as a person does; the SDK's default is a minute. */
const Patience = 600_000

const build = (): McpServer => {
  const mcp = new McpServer(
    { name: fixture, version: "1.0.0" },
    { capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }, taskStore, taskMessageQueue }
  )

  mcp.experimental.tasks.registerToolTask(
    "work",
    {
      description: "Works ms milliseconds in the background, then reports; only as a task",
      inputSchema: { ms: z.number().int().min(0).max(600_000) },
      execution: { taskSupport: "required" }
    },
    {
      createTask: async ({ ms }, extra) => {
        const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? null, pollInterval: 100 })
        void (async () => {
          await pause(ms)
          const now = await extra.taskStore.getTask(task.taskId)
          if (now.status === "working") await extra.taskStore.storeTaskResult(task.taskId, "completed", text(`worked ${ms}ms`))
        })().catch((e: unknown) => log(fixture, `work ${task.taskId}: ${String(e)}`))
        return { task }
      },
      getTask: (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (_args, extra) => resultOf(await extra.taskStore.getTaskResult(extra.taskId))
    }
  )

  mcp.experimental.tasks.registerToolTask(
    "ask",
    {
      description: "Asks the caller's name from a task (elicitation), then greets it; only as a task",
      execution: { taskSupport: "required" }
    },
    {
      createTask: async (extra) => {
        const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? null, pollInterval: 100 })
        void (async () => {
          await extra.taskStore.updateTaskStatus(task.taskId, "input_required", "waiting for a name")
          const answer = await mcp.server.elicitInput(
            {
              mode: "form",
              message: "What is your name?",
              requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] }
            },
            { relatedTask: { taskId: task.taskId }, timeout: Patience }
          )
          const name = answer.action === "accept" && typeof answer.content?.["name"] === "string" ? answer.content["name"] : undefined
          note(`elicited ${task.taskId} ${answer.action}${name === undefined ? "" : ` ${name}`}`)
          const now = await extra.taskStore.getTask(task.taskId)
          if (now.status === "cancelled") return
          await extra.taskStore.updateTaskStatus(task.taskId, "working")
          await extra.taskStore.storeTaskResult(task.taskId, "completed", text(`hello, ${name ?? `(${answer.action})`}`))
        })().catch((e: unknown) => log(fixture, `ask ${task.taskId}: ${String(e)}`))
        return { task }
      },
      getTask: (extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (extra) => resultOf(await extra.taskStore.getTaskResult(extra.taskId))
    }
  )

  return mcp
}

log(fixture, `starting (legacy, tasks) over ${args.http ? "http" : "stdio"}`)
if (args.http) {
  const sessions = legacySessions(async (callbacks) => {
    const mcp = build()
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: callbacks.onsessioninitialized,
      onsessionclosed: callbacks.onsessionclosed
    })
    await mcp.connect(transport)
    logWire(transport, logFile, "legacy")
    return { transport, close: () => mcp.close() }
  })
  await serveHttp(fixture, sessions, { port: args.port, guard: localhostOnly })
} else {
  const transport = new StdioServerTransport()
  await build().connect(transport)
  logWire(transport, logFile, "legacy")
  // The SDK's transport does not end the process when its stdin ends: a fixture whose gateway was
  // killed (the fleet tests kill instances) was seen living on after its test, orphaned.
  process.stdin.once("end", () => process.exit(0))
}
