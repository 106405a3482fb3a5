/**
 * A stored task as each era's hosts see it: the 2026-07-28 extension's (flat handle, `ttlMs` and
 * `pollIntervalMs`, the state's payload inline on `tasks/get`) and 2025-11-25's core tasks (the
 * handle nested under `task`, `ttl` and `pollInterval`, the outcome only from `tasks/result`).
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as Cause from "effect/Cause"
import * as Option from "effect/Option"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import { RelatedTaskKey } from "@mcpx-fx/protocol/Tasks"
import { errorObject, type HandleError } from "../ServerErrors.js"
import type { TaskError, TaskRow } from "../TaskStore.js"

const iso = (ms: number): string => new Date(ms).toISOString()

const common = (row: TaskRow): JsonObject => ({
  taskId: row.taskId,
  status: row.status,
  ...(row.statusMessage === undefined ? {} : { statusMessage: row.statusMessage }),
  createdAt: iso(row.createdAt),
  lastUpdatedAt: iso(row.updatedAt)
})

/** The task's fields in the extension's names. */
export const modern = (row: TaskRow): JsonObject => ({ ...common(row), ttlMs: row.ttlMs, pollIntervalMs: row.pollIntervalMs })

/** The task's fields in 2025-11-25's names. */
export const legacy = (row: TaskRow): JsonObject => ({ ...common(row), ttl: row.ttlMs, pollInterval: row.pollIntervalMs })

/** The error a failed task reads, whatever the store kept. */
export const errorOf = (row: TaskRow): TaskError => row.error ?? { code: ErrorCode.InternalError, message: "the task failed" }

/** The extension's detailed task, as `tasks/get` returns it: the state's payload inline. */
export const detailed = (row: TaskRow): JsonObject => {
  const base = modern(row)
  switch (row.status) {
    case "input_required":
      return { ...base, inputRequests: row.inputRequests ?? {} }
    case "completed":
      return { ...base, result: row.result ?? {} }
    case "failed":
      return { ...base, error: errorOf(row) }
    default:
      return base
  }
}

/** The answer that makes a call a task, in the caller's era. */
export const created = (row: TaskRow, era: "modern" | "legacy"): JsonObject => era === "modern" ? { ...modern(row), resultType: "task" } : { task: legacy(row) }

/** A completed task's result as 2025-11-25's `tasks/result` returns it: tied to its task. */
export const payload = (row: TaskRow): JsonObject => {
  const result = row.result ?? {}
  const meta = typeof result._meta === "object" && result._meta !== null && !Array.isArray(result._meta) ? result._meta : {}
  return { ...result, _meta: { ...meta, [RelatedTaskKey]: { taskId: row.taskId } } }
}

/** A completed task's result, without what only the envelope of a response carries. */
export const inlined = (result: JsonObject): JsonObject => {
  const { requestState: _state, inputRequests: _requests, ...rest } = result
  return rest
}

/** What a failed round tells the host, in the modern era's codes. */
export const failure = (cause: Cause.Cause<HandleError>): TaskError => {
  const failed = Cause.failureOption(cause)
  if (Option.isSome(failed)) {
    const o = errorObject(failed.value, "modern")
    return o.data === undefined ? { code: o.code, message: o.message } : { code: o.code, message: o.message, data: o.data }
  }
  return { code: ErrorCode.InternalError, message: "Internal error" }
}

/** The keys of `o` named in `keys`. */
export const pick = (o: JsonObject, keys: ReadonlyArray<string>): JsonObject => Object.fromEntries(Object.entries(o).filter(([k]) => keys.includes(k)))

/** The keys of `o` not named in `keys`. */
export const omit = (o: JsonObject, keys: ReadonlyArray<string>): JsonObject => Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)))
