/**
 * The experimental core tasks of 2025-11-25: a request augmented with `task` answers at once with a
 * `CreateTaskResult`, and the client polls `tasks/get`, fetches `tasks/result`, lists and cancels.
 * Not wire-compatible with the 2026 tasks extension (see TasksExtension).
 */
import * as Schema from "effect/Schema"
import { JsonObject, open, optionalKey } from "./Json.js"
import { Cursor, resultFields } from "./Result.js"

/** A task's state. */
export const TaskStatus = Schema.Literal("working", "input_required", "completed", "failed", "cancelled")
/** A task's state. */
export type TaskStatus = typeof TaskStatus.Type

/** The `task` param that asks for task-augmented execution. */
export const TaskMetadata = open({ ttl: optionalKey(Schema.Number) })
/** The `task` param. */
export type TaskMetadata = typeof TaskMetadata.Type

/** The value at `_meta["io.modelcontextprotocol/related-task"]`. */
export const RelatedTaskMetadata = open({ taskId: Schema.String })
/** The related-task `_meta` value. */
export type RelatedTaskMetadata = typeof RelatedTaskMetadata.Type

const taskFields = {
  taskId: Schema.String,
  status: TaskStatus,
  statusMessage: optionalKey(Schema.String),
  createdAt: Schema.String,
  lastUpdatedAt: Schema.String,
  ttl: Schema.NullOr(Schema.Number),
  pollInterval: optionalKey(Schema.Number)
}

/** A task (2025-11-25). */
export const Task = open(taskFields)
/** A task. */
export type Task = typeof Task.Type

/** The immediate answer to a task-augmented request. */
export const CreateTaskResult = open({ task: Task, ...resultFields })
/** The immediate answer to a task-augmented request. */
export type CreateTaskResult = typeof CreateTaskResult.Type

/** Params of `tasks/get`, `tasks/result` and `tasks/cancel`. */
export const TaskIdParams = open({ taskId: Schema.String, _meta: optionalKey(JsonObject) })
/** Params naming a task. */
export type TaskIdParams = typeof TaskIdParams.Type

/** Result of `tasks/get` and `tasks/cancel`: the task itself. */
export const GetTaskResult = open({ ...taskFields, ...resultFields })
/** Result of `tasks/get` and `tasks/cancel`. */
export type GetTaskResult = typeof GetTaskResult.Type

/** Result of `tasks/list`. */
export const ListTasksResult = open({ tasks: Schema.Array(Task), nextCursor: optionalKey(Cursor), ...resultFields })
/** Result of `tasks/list`. */
export type ListTasksResult = typeof ListTasksResult.Type

/** Params of `notifications/tasks/status`: the task itself. */
export const TaskStatusNotificationParams = open({ ...taskFields, _meta: optionalKey(JsonObject) })
/** Params of `notifications/tasks/status`. */
export type TaskStatusNotificationParams = typeof TaskStatusNotificationParams.Type
