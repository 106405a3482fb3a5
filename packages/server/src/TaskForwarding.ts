/**
 * `tasks/update` and `tasks/cancel` of a task whose live call another instance of the fleet runs:
 * the request goes to that process (the row names it), which checks the owner again and does the
 * update or cancel itself, and its answer — result or protocol error — comes back as it is.
 *
 * When that process is gone, nothing can reach its call any more: the task is failed at once
 * rather than left `working` until the lease sweep notices.
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { type JsonObject, JsonObject as JsonObjectSchema } from "@mcpx-fx/protocol/Json"
import * as Revision from "@mcpx-fx/protocol/Revision"
import * as Duration from "effect/Duration"
import { isTerminal } from "@mcpx-fx/protocol/Tasks"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { Caller } from "./Backend.js"
import type { FleetService, InstanceGone } from "./Fleet.js"
import { errorObject, type HandleError, TaskEnded } from "./ServerErrors.js"
import { type TaskRow, TaskStoreError } from "./TaskStore.js"

/** Why a task reads `failed` when the process running it was found gone. */
export const GoneMessage = "the mcpx-fx instance running this task stopped; the call's outcome is unknown"

/** The message kinds, served by every process that runs tasks. */
export const UpdateKind = "tasks.update"
export const CancelKind = "tasks.cancel"

/** How long a forwarded update or cancel may take: the other process only answers from memory and its store. */
export const ForwardTimeout = Duration.seconds(10)

const Request = Schema.Struct({
  taskId: Schema.String.pipe(Schema.maxLength(256)),
  owner: Schema.String.pipe(Schema.maxLength(4096)),
  era: Schema.Literal("modern", "legacy"),
  inputResponses: Schema.optionalWith(JsonObjectSchema, { exact: true })
})
type Request = typeof Request.Type

const ErrorShape = Schema.Struct({ code: Schema.Number, message: Schema.String, data: Schema.optional(Schema.Unknown) })
const Reply = Schema.Union(Schema.Struct({ result: JsonObjectSchema }), Schema.Struct({ error: ErrorShape }))
type Reply = typeof Reply.Type

const decodeRequest = Schema.decodeUnknownEither(Request)
const decodeReply = Schema.decodeUnknownEither(Reply)

/** What this process does with a task whose live call it holds. */
export interface Local {
  readonly update: (caller: Caller, taskId: string, inputResponses: JsonObject) => Effect.Effect<JsonObject, HandleError>
  readonly cancel: (caller: Caller, taskId: string) => Effect.Effect<JsonObject, HandleError>
}

/**
 * The caller as far as a forwarded request needs one: its identity (the task's owner) and its
 * era (what a cancel answers). The call itself keeps the caller it was started with.
 */
const callerOf = (request: Request): Caller => ({
  revision: request.era === "modern" ? Revision.LatestModernRevision : Revision.LatestLegacyRevision,
  era: request.era,
  clientCapabilities: {},
  ...(request.owner === "" ? {} : { sessionId: request.owner })
})

const answer = (request: Request, run: Effect.Effect<JsonObject, HandleError>): Effect.Effect<JsonObject> =>
  run.pipe(
    Effect.match({
      onSuccess: (result): Reply => ({ result }),
      onFailure: (e): Reply => {
        const o = errorObject(e, request.era)
        return { error: o.data === undefined ? { code: o.code, message: o.message } : { code: o.code, message: o.message, data: o.data } }
      }
    }),
    Effect.map((reply): JsonObject => reply)
  )

const refused = (detail: string): JsonObject => ({ error: { code: ErrorCode.InvalidParams, message: detail } })

/** Answers the other processes' forwarded updates and cancels, for the scope's life. */
export const serve = (fleet: FleetService, local: Local): Effect.Effect<void, never, Scope.Scope> =>
  Effect.zipRight(
    fleet.serve(UpdateKind, (payload) =>
      Either.match(decodeRequest(payload), {
        onLeft: () => Effect.succeed(refused("malformed forwarded tasks/update")),
        onRight: (request) => answer(request, local.update(callerOf(request), request.taskId, request.inputResponses ?? {}))
      })),
    fleet.serve(CancelKind, (payload) =>
      Either.match(decodeRequest(payload), {
        onLeft: () => Effect.succeed(refused("malformed forwarded tasks/cancel")),
        onRight: (request) => answer(request, local.cancel(callerOf(request), request.taskId))
      }))
  )

/**
 * Sends an update (with `inputResponses`) or a cancel (without) to the process `row` names, and
 * answers what it answered. `InstanceGone`: the caller fails the task.
 */
export const forward = (
  fleet: FleetService,
  row: TaskRow,
  caller: Caller,
  inputResponses?: JsonObject
): Effect.Effect<JsonObject, HandleError | InstanceGone> => {
  const request: Request = {
    taskId: row.taskId,
    owner: row.owner,
    era: caller.era,
    ...(inputResponses === undefined ? {} : { inputResponses })
  }
  const kind = inputResponses === undefined ? CancelKind : UpdateKind
  return fleet.send(row.instance, kind, request, ForwardTimeout).pipe(
    Effect.catchTag("FleetError", (e) => Effect.fail(new TaskStoreError({ operation: `reach the instance running task ${row.taskId}`, reason: e.detail }))),
    Effect.flatMap((payload): Effect.Effect<JsonObject, HandleError> =>
      Either.match(decodeReply(payload), {
        onLeft: (): Effect.Effect<JsonObject, HandleError> =>
          Effect.fail(new TaskStoreError({ operation: `reach the instance running task ${row.taskId}`, reason: "its reply was malformed" })),
        onRight: (reply): Effect.Effect<JsonObject, HandleError> =>
          "result" in reply ? Effect.succeed(reply.result) : Effect.fail(new TaskEnded({ error: reply.error }))
      })
    )
  )
}

/** What routing needs of the process's own task engine. */
export interface Routing {
  /** This process's id, as task rows name it. */
  readonly instance: string
  /** Whether this process holds the task's live call. */
  readonly isLive: (taskId: string) => boolean
  /** The caller's task, or the error for an id it does not own. */
  readonly owned: (caller: Caller, taskId: string) => Effect.Effect<TaskRow, HandleError>
  /** Records the task failed with `GoneMessage`; the row after, none when it was already terminal. */
  readonly failGone: (taskId: string) => Effect.Effect<Option.Option<TaskRow>, TaskStoreError>
  /** A 2025-11-25 `tasks/cancel` answer: the task as it now is. */
  readonly legacyShape: (row: TaskRow) => JsonObject
}

/**
 * `local`, with an update or cancel of a task another live process runs sent to it; and this
 * process answering the others' (for the scope's life).
 */
export const routed = (fleet: FleetService, local: Local, routing: Routing): Effect.Effect<Local, never, Scope.Scope> => {
  const via = (caller: Caller, taskId: string, inputResponses: JsonObject | undefined, here: Effect.Effect<JsonObject, HandleError>) =>
    Effect.gen(function*() {
      const row = yield* routing.owned(caller, taskId)
      if (isTerminal(row.status) || row.instance === routing.instance || routing.isLive(taskId)) return yield* here
      return yield* forward(fleet, row, caller, inputResponses).pipe(
        Effect.catchTag("InstanceGone", () =>
          Effect.map(routing.failGone(taskId), (after): JsonObject =>
            inputResponses !== undefined || caller.era === "modern"
              ? { resultType: "complete" }
              : routing.legacyShape(Option.getOrElse(after, () => row))))
      )
    })
  return Effect.as(serve(fleet, local), {
    update: (caller, taskId, inputResponses) => via(caller, taskId, inputResponses, local.update(caller, taskId, inputResponses)),
    cancel: (caller, taskId) => via(caller, taskId, undefined, local.cancel(caller, taskId))
  })
}
