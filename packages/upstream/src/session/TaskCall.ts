/**
 * A tool call an upstream may run as a task, made so and followed to its end, so the caller gets
 * the call's own result whatever it speaks: a host without tasks simply waits for it, and a host's
 * task (HostTasks) runs it like every other call, made a task at once (`onTask`).
 *
 * - 2026-07-28 upstream: the server decides, so every `tools/call` declares the
 *   `io.modelcontextprotocol/tasks` extension; a `resultType: "task"` answer is polled with
 *   `tasks/get` until terminal (the detailed task carries the result or the error inline). While it
 *   is `input_required`, its questions are answered through the caller (`resolve`) or handed back
 *   as an `input_required` result whose `requestState` names the task (`return`), and the caller's
 *   retry with the answers goes upstream as `tasks/update` (`resume`).
 * - 2025-11-25 upstream: a tool whose listing declares `taskSupport` carries `params.task`, and
 *   `tasks/result` waits for the outcome. The questions the task asks come as requests on that
 *   exchange, answered as every call's questions are.
 *
 * Polling keeps to the upstream's interval within bounds, so a lying upstream can neither flood
 * nor stall it. A call given up while its task runs cancels the task upstream.
 */
import { TasksExtensionId } from "@mcpx-fx/protocol/Capabilities"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as Method from "@mcpx-fx/protocol/Method"
import * as Revision from "@mcpx-fx/protocol/Revision"
import { isTerminal, RelatedTaskKey, type TaskStatus } from "@mcpx-fx/protocol/Tasks"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { outOfPlace } from "../transport/internal/InPlace.js"
import { answerAlone, resolveInputs } from "./Questions.js"
import { type SessionError, UpstreamRpcError } from "./SessionErrors.js"
import type { CallContext, Session } from "./SessionModel.js"

/** Bounds on an upstream's poll interval, in milliseconds. */
export const MinPollMs = 100
export const MaxPollMs = 5_000

/** How many rounds of questions one upstream task may ask. */
export const MaxInputRounds = 16

/** The `requestState` of an `input_required` that an upstream task asked: the task's id. */
const HandlePrefix = "mcpx-upstream-task:"

/** The upstream task a retry's `requestState` names, if it names one. */
export const resumedTask = (requestState: unknown): string | undefined =>
  typeof requestState === "string" && requestState.startsWith(HandlePrefix) ? requestState.slice(HandlePrefix.length) : undefined

/**
 * Whether `tools/call` of `tool` goes upstream as a task on `session`: always to a modern
 * upstream (it decides), and to a 2025-11-25 one when the tool declares task support.
 */
export const asTask = (session: Session, tool: JsonObject): boolean => {
  if (session.era === "modern") return true
  if (!Revision.atLeast(session.negotiated, "2025-11-25")) return false
  const support = isJsonObject(tool.execution) ? tool.execution.taskSupport : undefined
  return support === "optional" || support === "required"
}

const statuses: ReadonlyArray<string> = ["working", "input_required", "completed", "failed", "cancelled"]

const statusOf = (task: JsonObject): TaskStatus | undefined =>
  typeof task.status === "string" && statuses.includes(task.status) ? (task.status as TaskStatus) : undefined

/** The task handle an answer carries: the 2026 flat one or the 2025-11-25 nested one. */
const handleOf = (result: JsonObject, modern: boolean): { readonly taskId: string; readonly pollMs: number } | undefined => {
  const task = modern ? (result.resultType === "task" ? result : undefined) : isJsonObject(result.task) ? result.task : undefined
  if (task === undefined || typeof task.taskId !== "string") return undefined
  const interval = modern ? task.pollIntervalMs : task.pollInterval
  return { taskId: task.taskId, pollMs: typeof interval === "number" && Number.isFinite(interval) ? interval : 1_000 }
}

/** A `tasks/result` answer as the call's own: the related-task key names the upstream's task, not the caller's. */
const withoutRelatedTask = (result: JsonObject): JsonObject => {
  if (!isJsonObject(result._meta) || !(RelatedTaskKey in result._meta)) return result
  const { [RelatedTaskKey]: _related, ...meta } = result._meta
  const { _meta: _old, ...rest } = result
  return Object.keys(meta).length === 0 ? rest : { _meta: meta, ...rest }
}

/** The context a modern upstream's task requests go with: the caller's, plus the extension. */
const declaring = (ctx: CallContext): CallContext => {
  const caps = ctx.clientCapabilities ?? {}
  const extensions = isJsonObject(caps.extensions) ? caps.extensions : {}
  // Each key goes in before the copy it is added to: a key added after a spread is the slow path
  // of V8 (docs/performance.md, A key added after a spread). A copy's own value came second and
  // is set again.
  const extension = {}
  const declared: Record<string, unknown> = { [TasksExtensionId]: extension, ...extensions }
  declared[TasksExtensionId] = extension
  const capabilities: Record<string, unknown> = { extensions: declared, ...caps }
  capabilities.extensions = declared
  const out: Record<string, unknown> = { clientCapabilities: capabilities, ...ctx }
  out.clientCapabilities = capabilities
  return out as CallContext
}

/**
 * Follows the upstream task `taskId` from now on. Questions keyed in `answered` were just
 * answered: a task still showing only those has not taken the answers in yet, and is polled on.
 */
const follow = (
  session: Session,
  taskId: string,
  pollMs: number,
  ctx: CallContext,
  answered: ReadonlyArray<string> = []
): Effect.Effect<JsonObject, SessionError> => {
  const modern = session.era === "modern"
  const every = Duration.millis(Math.min(MaxPollMs, Math.max(MinPollMs, pollMs)))
  const failure = (code: number, message: string, data?: unknown) =>
    new UpstreamRpcError({ server: session.name, method: Method.ToolsCall, code, rpcMessage: message, ...(data === undefined ? {} : { data }) })
  // The upstream ties its task's questions to its own task id, which means nothing to the caller
  // (a 2025-11-25 host's questions are tied to the host's own task where they are asked).
  const questions = ctx.questions
  const tied: CallContext = {
    ...ctx,
    task: taskId,
    ...(questions === undefined ? {} : { questions: (q) => questions({ ...q, params: withoutRelatedTask(q.params) }) })
  }
  const ask = (method: string, extra: JsonObject = {}) => session.request(method, { taskId, ...extra }, tied)

  const outcome = (task: JsonObject, status: TaskStatus): Effect.Effect<JsonObject, SessionError> => {
    if (status === "completed") return Effect.succeed(isJsonObject(task.result) ? task.result : {})
    if (status === "cancelled") return Effect.fail(failure(ErrorCode.InternalError, "the upstream cancelled the task"))
    const e = isJsonObject(task.error) ? task.error : {}
    return Effect.fail(failure(
      typeof e.code === "number" ? e.code : ErrorCode.InternalError,
      typeof e.message === "string" ? e.message : "the upstream's task failed",
      e.data
    ))
  }

  const poll = (rounds: number): Effect.Effect<JsonObject, SessionError> =>
    Effect.flatMap(ask(Method.TasksGet), (task) => {
      const status = statusOf(task)
      if (status === undefined) return Effect.fail(failure(ErrorCode.InternalError, "the upstream's tasks/get named no known status"))
      if (isTerminal(status)) return outcome(task, status)
      const requests = isJsonObject(task.inputRequests) ? task.inputRequests : undefined
      const fresh = requests === undefined ? [] : Object.keys(requests).filter((k) => !answered.includes(k))
      if (status !== "input_required" || requests === undefined || fresh.length === 0) {
        return Effect.zipRight(Effect.sleep(every), poll(rounds))
      }
      if (ctx.inputRequired !== "resolve") {
        return Effect.succeed({ resultType: "input_required", inputRequests: requests, requestState: `${HandlePrefix}${taskId}` })
      }
      if (rounds >= MaxInputRounds) {
        return Effect.fail(failure(ErrorCode.InternalError, `the upstream's task asked more than ${MaxInputRounds} rounds of questions`))
      }
      return resolveInputs(requests, ctx.questions ?? answerAlone).pipe(
        Effect.flatMap((inputResponses) => ask(Method.TasksUpdate, { inputResponses })),
        Effect.zipRight(poll(rounds + 1))
      )
    })

  // A call given up (its host cancelled, its deadline passed) gives the upstream's task up too.
  // 2025-11-25's tasks/result waits for the end itself, and the questions the task asks ride its
  // stream (tied to it, as every call's are), so a legacy task is not polled.
  const following = modern ? poll(0) : Effect.map(ask(Method.TasksResult), withoutRelatedTask)
  const cancellable = Effect.onInterrupt(following, () => Effect.ignore(Effect.timeout(ask(Method.TasksCancel), Duration.seconds(5))))
  // A modern task is polled, with sleeps no cut in place ends, so a call run in place follows it
  // out of place. A legacy one is one tasks/result, a wait on the upstream's answer that the cut
  // itself ends at once, so that a stop records its own reason before the tasks are released.
  return modern ? outOfPlace(cancellable) : cancellable
}

/**
 * Calls `tools/call` with `params` as a task on `session` and returns the call's own result (or
 * an `input_required` naming the task), or fails with the error the task ended with.
 */
export const call = (session: Session, params: JsonObject, ctx: CallContext): Effect.Effect<JsonObject, SessionError> => {
  const modern = session.era === "modern"
  const taskCtx = modern ? declaring(ctx) : ctx
  return Effect.flatMap(session.request(Method.ToolsCall, modern ? params : { ...params, task: {} }, taskCtx), (first) => {
    const handle = handleOf(first, modern)
    // An upstream may answer at once, without a task.
    if (handle === undefined) return Effect.succeed(first)
    return Effect.zipRight(ctx.onTask ?? Effect.void, follow(session, handle.taskId, handle.pollMs, taskCtx))
  })
}

/** A caller's answers to an upstream task's questions: `tasks/update`, then the task is followed on. */
export const resume = (session: Session, taskId: string, inputResponses: JsonObject, ctx: CallContext): Effect.Effect<JsonObject, SessionError> => {
  const taskCtx = declaring(ctx)
  return Effect.zipRight(
    session.request(Method.TasksUpdate, { taskId, inputResponses }, taskCtx),
    follow(session, taskId, MinPollMs, taskCtx, Object.keys(inputResponses))
  )
}
