/**
 * The `/v1/tasks` routes: calls that outlive their request, for callers that are not MCP hosts
 * (the CLI, scripts). `POST /v1/call` with `task` starts one and answers 202 at once; the task is
 * then followed by its id: `GET /v1/tasks/{id}` reads it (its questions while `input_required`),
 * `GET /v1/tasks/{id}/result?waitMs=` waits for its end, `POST /v1/tasks/{id}/answers` answers its
 * questions, `POST /v1/tasks/{id}/cancel` stops it; `GET /v1/tasks` lists them. They are the same
 * tasks MCP hosts make, in the same store: they survive a daemon restart, and one that was running
 * when the daemon stopped reads `failed`.
 *
 * A task id is unguessable (128 random bits) and names its task to whoever holds it. Listing shows
 * ids, so it is only for the daemon's owner, on the unix socket (as `/v1/elicit` is).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"
import { UpstreamFailed } from "./ApiErrors.js"

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** The longest a request may wait for a task's end. */
export const MaxWaitMs = 300_000
/** How long `result` waits when it does not say. */
export const DefaultWaitMs = 30_000

/** `task` of `POST /v1/call`: run the call as a task, kept `ttlMs` (at most `tasks.ttl`, its default). */
export const TaskRequest = Schema.Struct({
  ttlMs: Schema.optionalWith(Schema.Int.pipe(Schema.nonNegative()), { exact: true })
})

/** A task's error once it `failed`: the JSON-RPC error its call ended with. */
export const TaskFailure = Schema.Struct({
  code: Schema.Number,
  message: Schema.String,
  data: Schema.optionalWith(Schema.Unknown, { exact: true })
})

/**
 * A task as `/v1` shows it. `inputRequests` while `input_required`: the questions its tool asked,
 * by key (answer them with `POST /v1/tasks/{id}/answers`); `error` once `failed`.
 */
export const Task = Schema.Struct({
  taskId: Schema.String,
  status: Schema.Literal("working", "input_required", "completed", "failed", "cancelled"),
  statusMessage: Schema.optionalWith(Schema.String, { exact: true }),
  createdAt: Schema.String,
  lastUpdatedAt: Schema.String,
  /** How long after `createdAt` it stays readable; null: until the daemon purges it. */
  ttlMs: Schema.NullOr(Schema.Number),
  pollIntervalMs: Schema.Number,
  inputRequests: Schema.optionalWith(JsonObject, { exact: true }),
  error: Schema.optionalWith(TaskFailure, { exact: true })
})

/** `POST /v1/call` with `task`: 202, the task just made. */
export const TaskAccepted = Schema.Struct({ task: Task })

/** `GET /v1/tasks`: the caller's tasks, newest first, a page at a time. */
export const TaskListing = Schema.Struct({
  tasks: Schema.Array(Task),
  nextCursor: Schema.optionalWith(Schema.String, { exact: true })
})

/** `GET /v1/tasks/{id}/result`: the call's own result (`isError` as the tool said). */
export const TaskResult = Schema.Struct({
  taskId: Schema.String,
  result: JsonObject,
  isError: Schema.Boolean
})

/** The session a task was made under (`session` of `POST /v1/call`), for the routes that name one. */
export const SessionQuery = Schema.Struct({ session: Schema.optionalWith(Schema.String, { exact: true }) })

/** `GET /v1/tasks?session=&cursor=`. */
export const ListQuery = Schema.Struct({
  session: Schema.optionalWith(Schema.String, { exact: true }),
  cursor: Schema.optionalWith(Schema.String, { exact: true })
})

/** `GET /v1/tasks/{id}/result?waitMs=&session=`. */
export const ResultQuery = Schema.Struct({
  session: Schema.optionalWith(Schema.String, { exact: true }),
  waitMs: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, MaxWaitMs)), { exact: true })
})

/** `POST /v1/tasks/{id}/answers`: answers by question key (an MCP ElicitResult, CreateMessageResult, ListRootsResult). */
export const TaskAnswers = Schema.Struct({
  inputResponses: JsonObject,
  session: Schema.optionalWith(Schema.String, { exact: true })
})

/** `POST /v1/tasks/{id}/cancel`. */
export const TaskCancel = Schema.Struct({ session: Schema.optionalWith(Schema.String, { exact: true }) })

/** No such task for this caller: never made, expired, or another caller's. */
export class TaskNotFound extends Schema.TaggedError<TaskNotFound>("@mcpx-fx/daemon/TasksApi/TaskNotFound")(
  "TaskNotFound",
  { taskId: Schema.String, detail: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {
  override get message(): string {
    return this.detail
  }
}

/** The task has not ended within the wait: its status now, and its questions if it has some. */
export class TaskPending extends Schema.TaggedError<TaskPending>("@mcpx-fx/daemon/TasksApi/TaskPending")(
  "TaskPending",
  { taskId: Schema.String, status: Schema.String, detail: Schema.String, inputRequests: Schema.optionalWith(JsonObject, { exact: true }) },
  HttpApiSchema.annotations({ status: 408 })
) {
  override get message(): string {
    return this.detail
  }
}

/** The task was cancelled: it has no result. */
export class TaskCancelled extends Schema.TaggedError<TaskCancelled>("@mcpx-fx/daemon/TasksApi/TaskCancelled")(
  "TaskCancelled",
  { taskId: Schema.String, detail: Schema.String },
  HttpApiSchema.annotations({ status: 409 })
) {
  override get message(): string {
    return this.detail
  }
}

/** Listing tasks over TCP: only the owner, on the unix socket, may list. */
export class TasksForbidden extends Schema.TaggedError<TasksForbidden>("@mcpx-fx/daemon/TasksApi/TasksForbidden")(
  "TasksForbidden",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 403 })
) {
  override get message(): string {
    return this.detail
  }
}

/**
 * No task can be made now: too many unfinished (`tasks.perCaller`, `tasks.total`), or the task
 * store could not be opened or written.
 */
export class TasksUnavailable extends Schema.TaggedError<TasksUnavailable>("@mcpx-fx/daemon/TasksApi/TasksUnavailable")(
  "TasksUnavailable",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 503 })
) {
  override get message(): string {
    return this.detail
  }
}

/** A cursor that is not one `GET /v1/tasks` gave. */
export class BadCursor extends Schema.TaggedError<BadCursor>("@mcpx-fx/daemon/TasksApi/BadCursor")(
  "BadCursor",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 400 })
) {
  override get message(): string {
    return this.detail
  }
}

const TaskPath = Schema.Struct({ id: Schema.String })

/** Tasks by id; a failed task's `result` is its call's failure, as `/v1/call` would have answered it. */
export class TasksGroup extends HttpApiGroup.make("tasks")
  .add(
    HttpApiEndpoint.get("list", "/tasks").setUrlParams(ListQuery).addSuccess(TaskListing)
      .addError(TasksForbidden).addError(BadCursor).addError(TasksUnavailable)
  )
  .add(
    HttpApiEndpoint.get("get", "/tasks/:id").setPath(TaskPath).setUrlParams(SessionQuery).addSuccess(Task)
      .addError(TaskNotFound).addError(TasksUnavailable)
  )
  .add(
    HttpApiEndpoint.get("result", "/tasks/:id/result").setPath(TaskPath).setUrlParams(ResultQuery).addSuccess(TaskResult)
      .addError(TaskNotFound).addError(TaskPending).addError(TaskCancelled).addError(UpstreamFailed).addError(TasksUnavailable)
  )
  .add(
    HttpApiEndpoint.post("answer", "/tasks/:id/answers").setPath(TaskPath).setPayload(TaskAnswers).addSuccess(Task)
      .addError(TaskNotFound).addError(TasksUnavailable)
  )
  .add(
    HttpApiEndpoint.post("cancel", "/tasks/:id/cancel").setPath(TaskPath).setPayload(TaskCancel).addSuccess(Task)
      .addError(TaskNotFound).addError(TasksUnavailable)
  )
{}
