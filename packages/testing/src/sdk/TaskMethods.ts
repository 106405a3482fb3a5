/**
 * The conformance fixture's task surface on one server instance, in the instance's era:
 *
 * - 2026-07-28 (the `io.modelcontextprotocol/tasks` extension): `tasks/get` (the detailed task),
 *   `tasks/update` and `tasks/cancel` (empty acknowledgements), each `-32021` for a request that
 *   did not declare the extension and `-32602` for an unknown task; the SDK itself answers
 *   `tasks/result` and `tasks/list` `-32601` and checks `Mcp-Name` against `params.taskId`.
 * - 2025-11-25 (core tasks): `tasks/get`, `tasks/result` (waits for the end, then the call's own
 *   result or error), `tasks/list` (paged) and `tasks/cancel` (`-32602` once the task has ended),
 *   `notifications/tasks/status` on every change; older legacy revisions have no tasks (`-32601`).
 *
 * The SDK has no task runtime, so the methods are registered with schemas of our own, the way its
 * extensions register theirs.
 */
import { type McpServer, ProtocolError, ProtocolErrorCode, type ServerContext } from "@modelcontextprotocol/server"
import * as z from "zod"
import { log } from "./Cli.js"
import type { TaskRecord, TaskStore } from "./TaskStore.js"

export const TasksExtensionId = "io.modelcontextprotocol/tasks"
export const RelatedTaskKey = "io.modelcontextprotocol/related-task"
/** The only legacy revision with tasks. */
export const TasksRevision = "2025-11-25"

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** The client capabilities a modern request declared in its own `_meta` (the only place that counts). */
const declared = (ctx: ServerContext): Record<string, unknown> => {
  const envelope: Record<string, unknown> = { ...ctx.mcpReq.envelope }
  const caps = envelope["io.modelcontextprotocol/clientCapabilities"]
  return isRecord(caps) ? caps : {}
}

/** Whether this request declared the tasks extension. */
export const declaresExtension = (ctx: ServerContext): boolean => {
  const extensions = declared(ctx)["extensions"]
  return isRecord(extensions) && isRecord(extensions[TasksExtensionId])
}

/** Whether this request declared that it can answer an elicitation. */
export const declaresElicitation = (ctx: ServerContext): boolean => isRecord(declared(ctx)["elicitation"])

/** The `-32021` a request gets for task work it did not declare the extension for. */
export const missingExtension = (what: string): ProtocolError =>
  new ProtocolError(ProtocolErrorCode.MissingRequiredClientCapability, `${what} needs the ${TasksExtensionId} extension`, {
    requiredCapabilities: { extensions: { [TasksExtensionId]: {} } }
  })

const timing = (record: TaskRecord) => ({
  taskId: record.taskId,
  status: record.status,
  ...(record.statusMessage === undefined ? {} : { statusMessage: record.statusMessage }),
  createdAt: record.createdAt,
  lastUpdatedAt: record.lastUpdatedAt
})

/** A task the 2025-11-25 way: `ttl` and `pollInterval`. */
export const legacyTask = (record: TaskRecord): Record<string, unknown> => ({
  ...timing(record),
  ttl: record.ttlMs,
  pollInterval: record.pollIntervalMs
})

/** The extension's flat handle. */
export const modernHandle = (record: TaskRecord): Record<string, unknown> => ({
  resultType: "task",
  ...timing(record),
  ttlMs: record.ttlMs,
  pollIntervalMs: record.pollIntervalMs
})

/** The extension's detailed task: the state's payload inline. */
export const detailedTask = (record: TaskRecord): Record<string, unknown> => ({
  ...timing(record),
  ttlMs: record.ttlMs,
  pollIntervalMs: record.pollIntervalMs,
  ...(record.status === "input_required" ? { inputRequests: Object.fromEntries(record.pending) } : {}),
  ...(record.status === "completed" && record.result !== undefined ? { result: record.result } : {}),
  ...(record.status === "failed" && record.error !== undefined ? { error: record.error } : {})
})

const TaskIdParams = z.looseObject({ taskId: z.string() })
// The SDK lifts `inputResponses` out of the params into the context before a handler runs.
const UpdateParams = TaskIdParams
const ListParams = z.looseObject({ cursor: z.string().optional() })

const unknownTask = (taskId: string): ProtocolError =>
  new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to retrieve task: no task ${JSON.stringify(taskId)} (unknown or expired)`)

const known = (store: TaskStore, taskId: string): TaskRecord => {
  const record = store.get(taskId)
  if (record === undefined) throw unknownTask(taskId)
  return record
}

const registerModern = (mcp: McpServer, store: TaskStore): void => {
  const gated = <P extends { readonly taskId: string }>(method: string, run: (params: P) => Record<string, unknown>) => (params: P, ctx: ServerContext) => {
    if (!declaresExtension(ctx)) throw missingExtension(method)
    return run(params)
  }
  mcp.server.setRequestHandler(
    "tasks/get",
    { params: TaskIdParams },
    gated("tasks/get", (params) => ({
      resultType: "complete",
      ...detailedTask(known(store, params.taskId))
    }))
  )
  mcp.server.setRequestHandler("tasks/update", { params: UpdateParams }, (params, ctx) => {
    if (!declaresExtension(ctx)) throw missingExtension("tasks/update")
    const answers: Record<string, Record<string, unknown>> = {}
    for (const [key, value] of Object.entries(ctx.mcpReq.inputResponses ?? {})) if (isRecord(value)) answers[key] = { ...value }
    if (!store.update(params.taskId, answers)) throw unknownTask(params.taskId)
    return { resultType: "complete" }
  })
  mcp.server.setRequestHandler(
    "tasks/cancel",
    { params: TaskIdParams },
    gated("tasks/cancel", (params) => {
      if (!store.cancel(params.taskId)) throw unknownTask(params.taskId)
      return { resultType: "complete" }
    })
  )
  mcp.server.registerCapabilities({ extensions: { [TasksExtensionId]: {} } })
}

const registerLegacy = (mcp: McpServer, store: TaskStore): void => {
  const inRevision = <P>(run: (params: P) => Record<string, unknown> | Promise<Record<string, unknown>>) => (params: P) => {
    if (mcp.server.getNegotiatedProtocolVersion() !== TasksRevision) {
      throw new ProtocolError(ProtocolErrorCode.MethodNotFound, "Method not found")
    }
    return run(params)
  }
  mcp.server.setRequestHandler("tasks/get", { params: TaskIdParams }, inRevision((params) => legacyTask(known(store, params.taskId))))
  mcp.server.setRequestHandler(
    "tasks/result",
    { params: TaskIdParams },
    inRevision(async (params) => {
      known(store, params.taskId)
      await store.settled(params.taskId)
      const record = known(store, params.taskId)
      const related = { [RelatedTaskKey]: { taskId: record.taskId } }
      if (record.status === "completed" && record.result !== undefined) {
        const meta = isRecord(record.result["_meta"]) ? record.result["_meta"] : {}
        return { ...record.result, _meta: { ...meta, ...related } }
      }
      if (record.status === "failed" && record.error !== undefined) {
        throw new ProtocolError(record.error.code, record.error.message, record.error.data)
      }
      throw new ProtocolError(ProtocolErrorCode.InternalError, "The task was cancelled before it produced a result", related)
    })
  )
  mcp.server.setRequestHandler(
    "tasks/list",
    { params: ListParams },
    inRevision((params) => {
      const all = store.all()
      const start = params.cursor === undefined ? 0 : Number(params.cursor)
      if (!Number.isInteger(start) || start < 0 || start > all.length) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid cursor ${JSON.stringify(params.cursor)}`)
      }
      const end = start + store.pageSize
      return { tasks: all.slice(start, end).map(legacyTask), ...(end < all.length ? { nextCursor: String(end) } : {}) }
    })
  )
  mcp.server.setRequestHandler(
    "tasks/cancel",
    { params: TaskIdParams },
    inRevision((params) => {
      const record = known(store, params.taskId)
      if (record.status === "completed" || record.status === "failed" || record.status === "cancelled") {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task ${record.taskId} already ended (${record.status})`)
      }
      store.cancel(record.taskId)
      return legacyTask(record)
    })
  )
  mcp.server.registerCapabilities({ tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } })
}

/** Registers the era's task methods and declares the era's task capability. */
export const registerTaskMethods = (mcp: McpServer, era: "legacy" | "modern", store: TaskStore): void =>
  era === "modern" ? registerModern(mcp, store) : registerLegacy(mcp, store)

/**
 * Sends `notifications/tasks/status` for `record` on this legacy instance until the task ends
 * (2025-11-25 lets a receiver push every change; the requestor must not rely on it).
 */
export const pushStatus = (mcp: McpServer, store: TaskStore, fixture: string, taskId: string): void => {
  const stop = store.listen((record) => {
    if (record.taskId !== taskId) return
    if (record.status === "completed" || record.status === "failed" || record.status === "cancelled") stop()
    if (!mcp.isConnected()) return stop()
    mcp.server
      .notification({ method: "notifications/tasks/status", params: legacyTask(record) })
      .catch((error: unknown) => log(fixture, `notifications/tasks/status failed: ${String(error)}`))
  })
}
