/**
 * The 2026-07-28 tasks extension `io.modelcontextprotocol/tasks`: negotiated per request through
 * `clientCapabilities.extensions`; a `tools/call` may answer `resultType: "task"` with the task's
 * fields inline; `tasks/get` returns the detailed task, `tasks/update` answers its input requests,
 * `tasks/cancel` asks it to stop. Over HTTP, `Mcp-Name` carries `params.taskId`.
 */
import * as Schema from "effect/Schema"
import { TasksExtensionId } from "./Capabilities.js"
import { InputRequests, InputResponses } from "./InputRequired.js"
import { isJsonObject, JsonObject, open, optionalKey } from "./Json.js"
import { resultFields } from "./Result.js"
import { TaskStatus } from "./Tasks.js"

/** The extension's id in `capabilities.extensions`. */
export const ExtensionId = TasksExtensionId

const base = {
  taskId: Schema.String,
  statusMessage: optionalKey(Schema.String),
  createdAt: Schema.String,
  lastUpdatedAt: Schema.String,
  ttlMs: Schema.NullOr(Schema.Number),
  pollIntervalMs: optionalKey(Schema.Number),
  _meta: optionalKey(JsonObject)
}

/** A task as the extension defines it (ms-suffixed timing fields). */
export const Task = open({ ...base, status: TaskStatus })
/** A task. */
export type Task = typeof Task.Type

/** The answer that turns a request into a task: `resultType: "task"` plus the task's fields. */
export const CreateTaskResult = open({ ...base, status: TaskStatus, resultType: Schema.Literal("task") })
/** The answer that turns a request into a task. */
export type CreateTaskResult = typeof CreateTaskResult.Type

const detailed = { ...base, resultType: resultFields.resultType }

/** A task in its current state with the state's payload inline. */
export const DetailedTask = Schema.Union(
  open({ ...detailed, status: Schema.Literal("working") }),
  open({ ...detailed, status: Schema.Literal("input_required"), inputRequests: InputRequests }),
  open({ ...detailed, status: Schema.Literal("completed"), result: JsonObject }),
  open({ ...detailed, status: Schema.Literal("failed"), error: JsonObject }),
  open({ ...detailed, status: Schema.Literal("cancelled") })
)
/** A task with its state's payload. */
export type DetailedTask = typeof DetailedTask.Type

/** Result of `tasks/get` (its `resultType` is "complete"). */
export const GetTaskResult = DetailedTask
/** Result of `tasks/get`. */
export type GetTaskResult = DetailedTask

/** Params of `tasks/get` and `tasks/cancel`. */
export const TaskIdParams = open({ taskId: Schema.String, _meta: optionalKey(JsonObject) })
/** Params naming a task. */
export type TaskIdParams = typeof TaskIdParams.Type

/** Params of `tasks/update`. */
export const UpdateTaskParams = open({ taskId: Schema.String, inputResponses: InputResponses, _meta: optionalKey(JsonObject) })
/** Params of `tasks/update`. */
export type UpdateTaskParams = typeof UpdateTaskParams.Type

/** Params of `notifications/tasks`: the detailed task. */
export const TaskNotificationParams = DetailedTask
/** Params of `notifications/tasks`. */
export type TaskNotificationParams = DetailedTask

/** Whether a raw result is a task handle rather than the request's own result. */
export const isCreateTaskResult = (result: JsonObject): boolean => result.resultType === "task"

/** Whether modern client capabilities declare the extension. */
export const declared = (clientCapabilities: unknown): boolean =>
  isJsonObject(clientCapabilities) && isJsonObject(clientCapabilities.extensions) &&
  isJsonObject(clientCapabilities.extensions[ExtensionId])
