/**
 * The Server's task requests, both eras, over HostTasks: which calls go to it and how the task
 * methods decode. The era rules (a 2026 host's extension declaration, a 2025-11-25 host's
 * `params.task`) are the Server's; what a task is and how it is kept are HostTasks'.
 */
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as Method from "@mcpx-fx/protocol/Method"
import * as Shape from "@mcpx-fx/protocol/Shape"
import * as Tasks from "@mcpx-fx/protocol/Tasks"
import * as TasksExtension from "@mcpx-fx/protocol/TasksExtension"
import * as Effect from "effect/Effect"
import type { Backend, Caller, InputRetry } from "../Backend.js"
import type { HostTasks } from "../HostTasks.js"
import { type HandleError, InvalidParams } from "../ServerErrors.js"
import { decodeParams, forwardMeta, ListParams, nameParams } from "./ServerParams.js"

/**
 * Every tool can be a 2025-11-25 host's task, since mcpx-fx runs it (following the upstream's own
 * task where it has one): the listing says what mcpx-fx honours.
 */
export const taskListing = (result: JsonObject): JsonObject => {
  const tools = Array.isArray(result.tools) ? result.tools : []
  const listed = tools.map((t) => isJsonObject(t) ? { ...t, execution: { ...(isJsonObject(t.execution) ? t.execution : {}), taskSupport: "optional" } } : t)
  return Shape.downgrade({ ...result, tools: listed }, Method.ToolsList, "2025-11-25")
}

export const make = (deps: {
  readonly backend: Backend["Type"]
  readonly tasks: HostTasks["Type"]
  /** mcpx-fx's signed state on an `input_required` the host is handed. */
  readonly sealInputRequired: (method: string, params: JsonObject, result: JsonObject) => Effect.Effect<JsonObject>
}) => {
  const { backend, tasks } = deps

  /**
   * A `tools/call` from a host that declared tasks: a task at once for a tool that supports them,
   * else one if it outlasts `tasks.after` or the upstream makes it one. Its later rounds are
   * mcpx-fx's own retries, so their `input_required` keeps the upstream's state, inside the task.
   */
  const modernCall = (caller: Caller, params: JsonObject, shaped: (result: JsonObject) => JsonObject): Effect.Effect<JsonObject, HandleError> =>
    Effect.flatMap(nameParams(params), (p) => {
      const meta = forwardMeta(params)
      const round = (roundCaller: Caller, retry: InputRetry | undefined) =>
        Effect.map(backend.callTool(retry === undefined ? roundCaller : { ...roundCaller, retry }, p.name, p.arguments ?? {}, meta), shaped)
      const support = backend.taskSupport === undefined ? Effect.succeed("forbidden" as const) : backend.taskSupport(caller, p.name)
      const abandon = backend.abandon === undefined ? undefined : (state: string) => backend.abandon!(caller, state)
      return Effect.flatMap(
        support,
        (s) =>
          Effect.flatMap(
            tasks.call(caller, Method.ToolsCall, s !== "forbidden", round, undefined, abandon),
            (result) =>
              Shape.resultTypeOf(result) !== "input_required"
                ? Effect.succeed(result)
                : Effect.map(deps.sealInputRequired(Method.ToolsCall, params, result), shaped)
          )
      )
    })

  /** A 2025-11-25 `tools/call` with `params.task`: a task whatever the tool (mcpx-fx runs it). */
  const legacyCall = (
    caller: Caller,
    params: JsonObject,
    shaped: (result: JsonObject) => Effect.Effect<JsonObject, HandleError>
  ): Effect.Effect<JsonObject, HandleError> => {
    const task = isJsonObject(params.task) ? params.task : {}
    const ttl = typeof task.ttl === "number" ? task.ttl : undefined
    return Effect.flatMap(
      nameParams(params),
      (p) =>
        tasks.call(
          caller,
          Method.ToolsCall,
          true,
          (roundCaller) => Effect.flatMap(backend.callTool(roundCaller, p.name, p.arguments ?? {}, forwardMeta(params)), shaped),
          ttl
        )
    )
  }

  /** `tasks/get`, `tasks/update` and `tasks/cancel` of the extension. */
  const modernRequest = (method: string, params: JsonObject, caller: Caller): Effect.Effect<JsonObject, HandleError> => {
    switch (method) {
      case Method.TasksGet:
        return Effect.flatMap(decodeParams(TasksExtension.TaskIdParams, params), (p) => tasks.get(caller, p.taskId))
      case Method.TasksUpdate:
        return Effect.flatMap(decodeParams(TasksExtension.UpdateTaskParams, params), (p) => tasks.update(caller, p.taskId, p.inputResponses))
      default:
        return Effect.flatMap(decodeParams(TasksExtension.TaskIdParams, params), (p) => tasks.cancel(caller, p.taskId))
    }
  }

  /** `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` of 2025-11-25. */
  const legacyRequest = (method: string, params: JsonObject, caller: Caller): Effect.Effect<JsonObject, HandleError> => {
    switch (method) {
      case Method.TasksList:
        return Effect.flatMap(decodeParams(ListParams, params), (p) => tasks.list(caller, p.cursor))
      case Method.TasksGet:
        return Effect.flatMap(decodeParams(Tasks.TaskIdParams, params), (p) => tasks.get(caller, p.taskId))
      case Method.TasksResult:
        return Effect.flatMap(decodeParams(Tasks.TaskIdParams, params), (p) => tasks.result(caller, p.taskId))
      case Method.TasksCancel:
        return Effect.flatMap(decodeParams(Tasks.TaskIdParams, params), (p) => tasks.cancel(caller, p.taskId))
      default:
        return Effect.fail(new InvalidParams({ detail: `${method} is not a task method` }))
    }
  }

  return { modernCall, legacyCall, modernRequest, legacyRequest }
}
