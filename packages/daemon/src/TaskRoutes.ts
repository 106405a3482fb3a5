/**
 * What `/v1/tasks` and `POST /v1/call` with `task` do (TasksApi.ts has the routes). A `/v1` task is
 * a host task like any other: HostTasks runs it, the TaskStore keeps it, and its call goes through
 * the same Backend an MCP host's does, as a 2026-07-28 caller. So a question its tool asks makes it
 * `input_required` with that question, and `POST /v1/tasks/{id}/answers` answers it upstream.
 *
 * `/v1` tasks belong to `/v1:<session>`, an identity of their own: a task an MCP host made is not
 * reached through `/v1`, nor the other way round.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as Method from "@mcpx-fx/protocol/Method"
import { RelatedTaskKey } from "@mcpx-fx/protocol/Tasks"
import { Backend, type Caller as HostCaller } from "@mcpx-fx/server/Backend"
import { HostTasks } from "@mcpx-fx/server/HostTasks"
import type { HandleError } from "@mcpx-fx/server/ServerErrors"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { Api } from "./Api.js"
import type { CallRequest } from "./ApiBodies.js"
import { apiCaller, type CallerHeaders } from "./ApiCaller.js"
import { type BadArguments, UpstreamFailed, upstreamFailed } from "./ApiErrors.js"
import * as ArgumentCheck from "./ArgumentCheck.js"
import type { Gateway } from "@mcpx-fx/gateway/Gateway"
import type { GatewayCallError, UnknownName } from "@mcpx-fx/gateway/GatewayModel"
import { qualifiedToolName } from "@mcpx-fx/gateway/Names"
import * as Redact from "@mcpx-fx/gateway/Redact"
import { BadCursor, DefaultWaitMs, Task, TaskCancelled, TaskNotFound, TaskPending, TasksForbidden, TasksUnavailable } from "./TasksApi.js"
import type * as TasksApi from "./TasksApi.js"

/** What a `/v1` task's call may ask when the request does not say: form and URL elicitations, as `mcpx-fx call` answers. */
const DefaultCapabilities: JsonObject = { elicitation: { form: {}, url: {} } }

/** The identity `/v1` tasks of `session` belong to. */
const ownerOf = (session: string | undefined): string => `/v1:${session ?? ""}`

/** The caller HostTasks sees for a `/v1` request: a 2026-07-28 caller, owned by its `/v1` identity. */
const hostCaller = (session: string | undefined, capabilities: JsonObject = DefaultCapabilities): HostCaller => ({
  revision: "2026-07-28",
  era: "modern",
  clientCapabilities: capabilities,
  sessionId: ownerOf(session)
})

const decodeTask = Schema.decodeUnknownSync(Task)

/** A task as `/v1` shows it, from either era's shape HostTasks answers in. */
const asTask = (o: JsonObject): typeof Task.Type =>
  decodeTask({
    ...o,
    ttlMs: o.ttlMs ?? o.ttl ?? null,
    pollIntervalMs: o.pollIntervalMs ?? o.pollInterval
  })

type Refusal = TaskNotFound | TasksUnavailable

/** A HostTasks failure as `/v1` tells it: an unknown id is a 404; a full or broken store, a 503. */
const refused = (taskId: string) => (e: HandleError): Refusal =>
  e._tag === "InvalidParams"
    ? new TaskNotFound({ taskId, detail: `no task ${taskId} (never made, expired, or made under another session)` })
    : new TasksUnavailable({ detail: e._tag === "InputRefused" ? e.detail : e.message })

/** `POST /v1/call` with `task`: the name and arguments are checked now (404, 400); the call runs as a task. */
export const begin = (
  gateway: Gateway["Type"],
  request: typeof CallRequest.Type,
  task: typeof TasksApi.TaskRequest.Type,
  headers: typeof CallerHeaders.Type = {}
): Effect.Effect<typeof TasksApi.TaskAccepted.Type, UnknownName | BadArguments | UpstreamFailed | TasksUnavailable, Backend | HostTasks> =>
  Effect.gen(function*() {
    const backend = yield* Backend
    const tasks = yield* HostTasks
    const tool = qualifiedToolName(request.tool)
    const { args, resolution } = yield* ArgumentCheck.check(gateway, apiCaller(request.session, headers), tool, request.arguments ?? {}).pipe(
      Effect.catchIf(
        (e): e is Exclude<GatewayCallError, UnknownName> => e._tag !== "UnknownName" && e._tag !== "BadArguments",
        (e) => Effect.fail(upstreamFailed(e))
      )
    )
    // The check's resolution goes to the task's first round alone (HostTasks drops it after).
    const caller: HostCaller = { ...hostCaller(request.session), resolved: resolution }
    // Each round is the Backend's call under the caller's own session (which pools key by), not
    // the task's owner.
    const round = (roundCaller: HostCaller, retry: HostCaller["retry"]) => {
      const { sessionId: _owner, ...rest } = roundCaller
      const called: HostCaller = {
        ...rest,
        ...(request.session === undefined ? {} : { sessionId: request.session }),
        ...(retry === undefined ? {} : { retry })
      }
      return backend.callTool(called, tool, args)
    }
    const abandon = backend.abandon === undefined ? undefined : (state: string) => backend.abandon!(caller, state)
    const created = yield* tasks.call(caller, Method.ToolsCall, true, round, task.ttlMs, abandon).pipe(
      Effect.mapError((e) => new TasksUnavailable({ detail: e._tag === "InputRefused" ? e.detail : e.message }))
    )
    return { task: asTask(created) }
  })

/** `GET /v1/tasks/{id}`. */
export const get = (taskId: string, session: string | undefined) =>
  Effect.flatMap(HostTasks, (tasks) => Effect.mapBoth(tasks.get(hostCaller(session), taskId), { onFailure: refused(taskId), onSuccess: asTask }))

/** `GET /v1/tasks`: the owner's alone (on the unix socket), since it hands out ids. */
export const list = (query: typeof TasksApi.ListQuery.Type) =>
  Effect.gen(function*() {
    if (!(yield* FiberRef.get(Redact.RawForOwner))) {
      return yield* new TasksForbidden({
        detail: "only the daemon's owner lists tasks (mcpx-fx tasks list, on the unix socket); over TCP a task is read by its id"
      })
    }
    const tasks = yield* HostTasks
    const page = yield* tasks.list(hostCaller(query.session), query.cursor).pipe(
      Effect.mapError((e) => (e._tag === "InvalidParams" ? new BadCursor({ detail: e.detail }) : new TasksUnavailable({ detail: e.message })))
    )
    const rows = Array.isArray(page.tasks) ? page.tasks.filter(isJsonObject) : []
    return {
      tasks: rows.map(asTask),
      ...(typeof page.nextCursor === "string" ? { nextCursor: page.nextCursor } : {})
    }
  })

/** The call's result without the task's own `_meta` key, which `/v1` says in `taskId`. */
const ownResult = (result: JsonObject): JsonObject => {
  const meta = isJsonObject(result._meta) ? result._meta : undefined
  if (meta === undefined) return result
  const { [RelatedTaskKey]: _task, ...rest } = meta
  const { _meta: _, ...body } = result
  return Object.keys(rest).length === 0 ? body : { ...body, _meta: rest }
}

/**
 * `GET /v1/tasks/{id}/result`: waits up to `waitMs` for the end, then the call's result; a task
 * still running, or waiting for answers (told as soon as it is), is a 408 saying where it stands
 * (with its questions), one that failed is the call's failure (502), one cancelled a 409.
 */
export const result = (taskId: string, query: typeof TasksApi.ResultQuery.Type) =>
  Effect.gen(function*() {
    const tasks = yield* HostTasks
    const caller = hostCaller(query.session)
    // A task that waits for answers will not end by waiting: the caller is told at once.
    const asked = get(taskId, query.session).pipe(
      Effect.repeat({ schedule: Schedule.spaced(Duration.millis(250)), until: (t) => t.status === "input_required" }),
      Effect.as(Option.none())
    )
    const ended = yield* tasks.result(caller, taskId).pipe(
      Effect.map((done) => ({ done })),
      Effect.catchTag("TaskEnded", (e) => Effect.succeed({ error: e.error })),
      Effect.mapError(refused(taskId)),
      Effect.map(Option.some),
      Effect.raceFirst(asked),
      Effect.timeoutTo({ duration: Duration.millis(query.waitMs ?? DefaultWaitMs), onTimeout: Option.none, onSuccess: (o) => o })
    )
    if (Option.isNone(ended)) {
      const now = yield* get(taskId, query.session)
      return yield* new TaskPending({
        taskId,
        status: now.status,
        detail: now.status === "input_required"
          ? `task ${taskId} waits for answers to its questions (mcpx-fx tasks get ${taskId}; answer with mcpx-fx tasks answer)`
          : `task ${taskId} is still ${now.status}; ask again later`,
        ...(now.inputRequests === undefined ? {} : { inputRequests: now.inputRequests })
      })
    }
    const end = ended.value
    if ("error" in end) {
      const now = yield* get(taskId, query.session)
      if (now.status === "cancelled") return yield* new TaskCancelled({ taskId, detail: `task ${taskId} was cancelled` })
      return yield* new UpstreamFailed({
        kind: "TaskFailed",
        detail: end.error.message,
        code: end.error.code,
        ...(end.error.data === undefined ? {} : { data: end.error.data })
      })
    }
    const own = ownResult(end.done)
    return { taskId, result: own, isError: own.isError === true }
  })

/** `POST /v1/tasks/{id}/answers`: answers the questions named; the task as it is then. */
export const answer = (taskId: string, payload: typeof TasksApi.TaskAnswers.Type) =>
  Effect.flatMap(HostTasks, (tasks) =>
    Effect.zipRight(
      Effect.mapError(tasks.update(hostCaller(payload.session), taskId, payload.inputResponses), refused(taskId)),
      get(taskId, payload.session)
    ))

/** `POST /v1/tasks/{id}/cancel`: stops the call; the task as it is then (`cancelled`, or how it had ended). */
export const cancel = (taskId: string, payload: typeof TasksApi.TaskCancel.Type) =>
  Effect.flatMap(HostTasks, (tasks) =>
    Effect.zipRight(
      Effect.mapError(tasks.cancel(hostCaller(payload.session), taskId), refused(taskId)),
      get(taskId, payload.session)
    ))

/** `/v1/tasks` and `/v1/tasks/{id}`. */
export const TasksLive = HttpApiBuilder.group(Api, "tasks", (handlers) =>
  handlers
    .handle("list", ({ urlParams }) => list(urlParams))
    .handle("get", ({ path, urlParams }) => get(path.id, urlParams.session))
    .handle("result", ({ path, urlParams }) => result(path.id, urlParams))
    .handle("answer", ({ path, payload }) => answer(path.id, payload))
    .handle("cancel", ({ path, payload }) => cancel(path.id, payload)))
