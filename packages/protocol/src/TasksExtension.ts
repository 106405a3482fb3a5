/**
 * The 2026-07-28 tasks extension `io.modelcontextprotocol/tasks`: negotiated per request through
 * `clientCapabilities.extensions` (and advertised in `server/discover`); the server alone decides
 * whether a `tools/call` answers `resultType: "task"` with the task's fields inline; `tasks/get`
 * returns the detailed task (its `inputRequests` while `input_required`, its `result` once
 * `completed`, the JSON-RPC `error` once `failed`); `tasks/update` answers input requests;
 * `tasks/cancel` asks it to stop. Both answer an empty `resultType: "complete"` acknowledgement.
 * Over HTTP, `Mcp-Name` carries `params.taskId`. An unknown task is `-32602`; a request that did
 * not declare the extension gets `-32021` for `tasks/*` and never a task for `tools/call`.
 */
import * as Schema from "effect/Schema"
import { TasksExtensionId } from "./Capabilities.js"
import { InputRequests } from "./InputRequired.js"
import { hasKey, isJsonObject, type JsonObject, open, optionalKey } from "./Json.js"
import { ErrorObject } from "./JsonRpc.js"
import { ResultMeta } from "./Meta.js"
import { TaskStatus } from "./Tasks.js"

/** The extension's id in `capabilities.extensions`. */
export const ExtensionId = TasksExtensionId

/** The `requiredCapabilities` of the `-32021` a request that did not declare the extension gets. */
export const requiredCapabilities: JsonObject = { extensions: { [ExtensionId]: {} } }

/** Integer milliseconds: the extension puts the unit in the field name and forbids fractions. */
const millis = Schema.Int.pipe(Schema.nonNegative())

const base = {
  taskId: Schema.String,
  statusMessage: optionalKey(Schema.String),
  createdAt: Schema.String,
  lastUpdatedAt: Schema.String,
  ttlMs: Schema.NullOr(millis),
  pollIntervalMs: optionalKey(millis)
}

/** A task as the extension defines it (ms-suffixed timing fields). */
export const Task = open({ ...base, status: TaskStatus, _meta: optionalKey(ResultMeta) })
/** A task. */
export type Task = typeof Task.Type

/** Keys that belong on a detailed task or an MRTR result, never on a task handle or an ack. */
const envelopeKeys = ["task", "result", "error", "inputRequests", "requestState"]

/**
 * The answer that turns a request into a task: `resultType: "task"` plus the task's fields, flat.
 * No nested `task` (that is 2025-11-25's handle) and no `result`, `error`, `inputRequests` or
 * `requestState` (those live on `tasks/get` and on MRTR results).
 */
export const CreateTaskResult = open({ ...base, status: TaskStatus, resultType: Schema.Literal("task"), _meta: optionalKey(ResultMeta) }).pipe(
  Schema.filter((r) => {
    const stray = envelopeKeys.find((k) => hasKey(r, k))
    return stray === undefined || `a CreateTaskResult carries no "${stray}"`
  })
)
/** The answer that turns a request into a task. */
export type CreateTaskResult = typeof CreateTaskResult.Type

const variants = <Extra extends Schema.Struct.Fields>(extra: Extra) =>
  [
    open({ ...base, ...extra, status: Schema.Literal("working") }),
    open({ ...base, ...extra, status: Schema.Literal("input_required"), inputRequests: InputRequests }),
    open({ ...base, ...extra, status: Schema.Literal("completed"), result: Schema.Record({ key: Schema.String, value: Schema.Unknown }) }),
    open({ ...base, ...extra, status: Schema.Literal("failed"), error: ErrorObject }),
    open({ ...base, ...extra, status: Schema.Literal("cancelled") })
  ] as const

/** A task in its current state with the state's payload inline (the params of `notifications/tasks`). */
export const DetailedTask = Schema.Union(...variants({ _meta: optionalKey(ResultMeta) }))
/** A task with its state's payload. */
export type DetailedTask = typeof DetailedTask.Type

/** Result of `tasks/get`: the detailed task, `resultType: "complete"` (it is the method's own result). */
export const GetTaskResult = Schema.Union(...variants({ resultType: Schema.Literal("complete"), _meta: optionalKey(ResultMeta) }))
/** Result of `tasks/get`. */
export type GetTaskResult = typeof GetTaskResult.Type

/** Params of `notifications/tasks`: the detailed task, exactly as `tasks/get` would return it then. */
export const TaskNotificationParams = DetailedTask
/** Params of `notifications/tasks`. */
export type TaskNotificationParams = DetailedTask

/** Params of `tasks/get` and `tasks/cancel`. */
export const TaskIdParams = open({ taskId: Schema.String, _meta: optionalKey(Schema.Record({ key: Schema.String, value: Schema.Unknown })) })
/** Params naming a task. */
export type TaskIdParams = typeof TaskIdParams.Type

/**
 * Params of `tasks/update`. Each answer is checked against the input request its key names, by
 * whoever holds that request: a server ignores keys that are not outstanding (never issued, already
 * answered), whatever their value, so this schema only requires objects.
 */
export const UpdateTaskParams = open({
  taskId: Schema.String,
  inputResponses: Schema.Record({ key: Schema.String, value: Schema.Record({ key: Schema.String, value: Schema.Unknown }) }),
  _meta: optionalKey(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
/** Params of `tasks/update`. */
export type UpdateTaskParams = typeof UpdateTaskParams.Type

/** The empty acknowledgement `tasks/update` and `tasks/cancel` answer: no task fields at all. */
export const Acknowledgement = open({ resultType: Schema.Literal("complete"), _meta: optionalKey(ResultMeta) }).pipe(
  Schema.filter((r) => {
    const stray = ["taskId", "status", ...envelopeKeys].find((k) => hasKey(r, k))
    return stray === undefined || `a tasks acknowledgement carries no "${stray}"`
  })
)
/** The empty acknowledgement. */
export type Acknowledgement = typeof Acknowledgement.Type

/** Result of `tasks/update`. */
export const UpdateTaskResult = Acknowledgement
/** Result of `tasks/cancel`. */
export const CancelTaskResult = Acknowledgement

/** The acknowledgement, built. */
export const acknowledgement: JsonObject = { resultType: "complete" }

/** Whether a raw result is a task handle rather than the request's own result. */
export const isCreateTaskResult = (result: JsonObject): boolean => result.resultType === "task"

/** Whether modern client capabilities declare the extension. */
export const declared = (clientCapabilities: unknown): boolean =>
  isJsonObject(clientCapabilities) && isJsonObject(clientCapabilities.extensions) &&
  isJsonObject(clientCapabilities.extensions[ExtensionId])
