/**
 * The experimental core tasks of 2025-11-25: a `tools/call` carrying `params.task` answers at once
 * with a `CreateTaskResult` (the task nested under `task`), and the client polls `tasks/get`,
 * waits on `tasks/result` for the call's own result or error, pages through `tasks/list` and
 * cancels with `tasks/cancel`. The receiver may push `notifications/tasks/status`.
 *
 * Not wire-compatible with the 2026 tasks extension (see TasksExtension): there the timing fields
 * end in `Ms`, the handle is flat, `tasks/result` and `tasks/list` do not exist and input travels by
 * `tasks/update` rather than by server→client requests tagged with the related-task `_meta` key.
 */
import * as Schema from "effect/Schema"
import * as Capabilities from "./Capabilities.js"
import { isJsonObject, JsonObject, open, optionalKey } from "./Json.js"
import { Cursor, PaginatedParams, resultFields } from "./Result.js"

/** A task's state. */
export const TaskStatus = Schema.Literal("working", "input_required", "completed", "failed", "cancelled")
/** A task's state. */
export type TaskStatus = typeof TaskStatus.Type

/** The states a task never leaves. */
export const TerminalStatuses: ReadonlyArray<TaskStatus> = ["completed", "failed", "cancelled"]

/** Whether a status is terminal. */
export const isTerminal = (status: TaskStatus): boolean => TerminalStatuses.includes(status)

/** Whether a tool may, must or must not be called as a task (`execution.taskSupport`, 2025-11-25). */
export const TaskSupport = Schema.Literal("forbidden", "optional", "required")
/** A tool's task support; absent means "forbidden". */
export type TaskSupport = typeof TaskSupport.Type

/** A tool's `execution` member. */
export const ToolExecution = open({ taskSupport: optionalKey(TaskSupport) })
/** A tool's `execution` member. */
export type ToolExecution = typeof ToolExecution.Type

const millis = Schema.Number.pipe(Schema.nonNegative())

/** The `task` param that asks for task-augmented execution: the retention the caller would like. */
export const TaskMetadata = open({ ttl: optionalKey(millis) })
/** The `task` param. */
export type TaskMetadata = typeof TaskMetadata.Type

/** The `_meta` key that ties a request, notification or `tasks/result` answer to its task. */
export const RelatedTaskKey = "io.modelcontextprotocol/related-task"

/** The value at `_meta["io.modelcontextprotocol/related-task"]`. */
export const RelatedTaskMetadata = open({ taskId: Schema.String })
/** The related-task `_meta` value. */
export type RelatedTaskMetadata = typeof RelatedTaskMetadata.Type

/** The task a message's `_meta` names, if it names one. */
export const relatedTaskOf = (meta: unknown): string | undefined => {
  const related = isJsonObject(meta) ? meta[RelatedTaskKey] : undefined
  return isJsonObject(related) && typeof related.taskId === "string" ? related.taskId : undefined
}

const taskFields = {
  taskId: Schema.String,
  status: TaskStatus,
  statusMessage: optionalKey(Schema.String),
  createdAt: Schema.String,
  lastUpdatedAt: Schema.String,
  ttl: Schema.NullOr(millis),
  pollInterval: optionalKey(millis)
}

/** A task (2025-11-25). */
export const Task = open(taskFields)
/** A task. */
export type Task = typeof Task.Type

/** The immediate answer to a task-augmented request: the task, nested. */
export const CreateTaskResult = open({ task: Task, ...resultFields })
/** The immediate answer to a task-augmented request. */
export type CreateTaskResult = typeof CreateTaskResult.Type

/** Params of `tasks/get`, `tasks/result` and `tasks/cancel`: `taskId` is the only source of truth. */
export const TaskIdParams = open({ taskId: Schema.String, _meta: optionalKey(JsonObject) })
/** Params naming a task. */
export type TaskIdParams = typeof TaskIdParams.Type

/** Result of `tasks/get`: the task itself, flat. */
export const GetTaskResult = open({ ...taskFields, ...resultFields })
/** Result of `tasks/get`. */
export type GetTaskResult = typeof GetTaskResult.Type

/** Result of `tasks/cancel`: the task, already `cancelled`. */
export const CancelTaskResult = GetTaskResult
/** Result of `tasks/cancel`. */
export type CancelTaskResult = GetTaskResult

/**
 * Result of `tasks/result`: exactly what the underlying request returned (a `CallToolResult` for a
 * `tools/call`), with the related-task key in its `_meta`. Its shape is the original method's, so
 * only the `_meta` link is checked here.
 */
export const TaskPayloadResult = open({ _meta: JsonObject }).pipe(
  Schema.filter((r) => relatedTaskOf(r._meta) !== undefined || `a tasks/result answer names its task in _meta["${RelatedTaskKey}"]`)
)
/** Result of `tasks/result`. */
export type TaskPayloadResult = typeof TaskPayloadResult.Type

/** Params of `tasks/list`: an opaque cursor. */
export const ListTasksParams = PaginatedParams
/** Params of `tasks/list`. */
export type ListTasksParams = typeof ListTasksParams.Type

/** Result of `tasks/list`: one page of tasks, `nextCursor` while more remain. */
export const ListTasksResult = open({ tasks: Schema.Array(Task), nextCursor: optionalKey(Cursor), ...resultFields })
/** Result of `tasks/list`. */
export type ListTasksResult = typeof ListTasksResult.Type

/** Params of `notifications/tasks/status`: the task itself. */
export const TaskStatusNotificationParams = open({ ...taskFields, _meta: optionalKey(JsonObject) })
/** Params of `notifications/tasks/status`. */
export type TaskStatusNotificationParams = typeof TaskStatusNotificationParams.Type

/** A server's `capabilities.tasks` (declared in Capabilities, which the capability schemas need first). */
export const ServerTasksCapability = Capabilities.ServerTasksCapability
/** A server's `capabilities.tasks`. */
export type ServerTasksCapability = Capabilities.ServerTasksCapability

/** A client's `capabilities.tasks`. */
export const ClientTasksCapability = Capabilities.ClientTasksCapability
/** A client's `capabilities.tasks`. */
export type ClientTasksCapability = Capabilities.ClientTasksCapability

/** Whether legacy server capabilities let a client call tools as tasks (`tasks.requests.tools.call`). */
export const serverAugmentsToolCalls = (capabilities: unknown): boolean => {
  const tasks = isJsonObject(capabilities) ? capabilities.tasks : undefined
  const requests = isJsonObject(tasks) ? tasks.requests : undefined
  const tools = isJsonObject(requests) ? requests.tools : undefined
  return isJsonObject(tools) && isJsonObject(tools.call)
}
