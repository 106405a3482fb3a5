/**
 * The call behind a task while it lives in the process running it (HostTasks.ts), and its rounds:
 * how one ended is recorded, and the next runs with the host's answers.
 */
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as Shape from "@mcpx-fx/protocol/Shape"
import { isTerminal } from "@mcpx-fx/protocol/Tasks"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { Caller, InputRetry } from "../Backend.js"
import type { HandleError } from "../ServerErrors.js"
import type { TaskRow, TaskStoreError, TaskUpdate } from "../TaskStore.js"
import type * as TaskQuestions from "./TaskQuestions.js"
import * as TaskShapes from "./TaskShapes.js"

/** Ends what an `input_required` round left waiting upstream (the task was cancelled then). */
export type Abandon = (requestState: string) => Effect.Effect<void>

export type Round = (caller: Caller, retry: InputRetry | undefined) => Effect.Effect<JsonObject, HandleError>

/** The call behind a task while it lives in this process. */
export interface Live {
  readonly caller: Caller
  readonly round: Round
  /** The round running now; undefined while the task waits for answers. */
  fiber: Fiber.RuntimeFiber<JsonObject, HandleError> | undefined
  /** The upstream's state of the round that asked, handed back with the answers. */
  requestState: string | undefined
  /** The questions not answered yet, keyed as the host sees them. */
  outstanding: JsonObject
  /** Answers that came while a round ran, for the questions the next one asks. */
  queued: JsonObject
  /** A 2025-11-25 task's questions, which its host collects with `tasks/result`. */
  readonly questions: TaskQuestions.TaskQuestions | undefined
  readonly abandon: Abandon | undefined
}

/** What the rounds of the tasks this process runs share with HostTasks. */
export interface RoundsContext {
  readonly live: Map<string, Live>
  /** Moves a task on in the store, telling whoever follows its statuses. */
  readonly record: (taskId: string, update: TaskUpdate) => Effect.Effect<Option.Option<TaskRow>, TaskStoreError>
  /** Where rounds and their followers run: the service's, not a request's. */
  readonly scope: Scope.Scope
}

/** The rounds of live tasks: `follow` records a running round's end; `answer` runs the next one. */
export const rounds = ({ live, record, scope }: RoundsContext) => {
  /** Records how a round ended and, on `input_required`, parks the call for `tasks/update`. */
  const settle = (taskId: string, exit: Exit.Exit<JsonObject, HandleError>): Effect.Effect<void> => {
    const entry = live.get(taskId)
    if (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) {
      // Whoever interrupted (a cancel, a stop) has written the status already.
      live.delete(taskId)
      return Effect.void
    }
    const write = Exit.match(exit, {
      onFailure: (cause) => record(taskId, { status: "failed", error: TaskShapes.failure(cause) }),
      onSuccess: (result) => {
        if (Shape.resultTypeOf(result) === "input_required" && entry !== undefined) {
          entry.fiber = undefined
          entry.requestState = typeof result.requestState === "string" ? result.requestState : undefined
          entry.outstanding = isJsonObject(result.inputRequests) ? result.inputRequests : {}
          const queued = TaskShapes.pick(entry.queued, Object.keys(entry.outstanding))
          entry.queued = {}
          // Answers that arrived while this round ran go on at once, as a tasks/update now would.
          if (Object.keys(queued).length > 0) return answer(taskId, entry, queued)
          return record(taskId, { status: "input_required", inputRequests: entry.outstanding })
        }
        return record(taskId, { status: "completed", result: TaskShapes.inlined(result) })
      }
    })
    return write.pipe(
      Effect.tap((row) =>
        Effect.sync(() => {
          if (Option.isNone(row) || isTerminal(row.value.status)) live.delete(taskId)
        })
      ),
      Effect.catchAll((e) => Effect.logWarning(`task ${taskId}: ${e.message}`)),
      Effect.asVoid
    )
  }

  /** Follows a running round to its end, in the service's scope. */
  const follow = (taskId: string, fiber: Fiber.RuntimeFiber<JsonObject, HandleError>): Effect.Effect<void> =>
    Effect.asVoid(Effect.forkIn(Effect.flatMap(Fiber.await(fiber), (exit) => settle(taskId, exit)), scope))

  /**
   * Runs the next round with answers to some of the outstanding questions. The task reads
   * `input_required` with the rest until they are answered too, or `working`; the state is
   * written before the round starts, so the round's own outcome always comes after it.
   */
  const answer = (taskId: string, entry: Live, answers: JsonObject) => {
    const remaining = TaskShapes.omit(entry.outstanding, Object.keys(answers))
    entry.outstanding = remaining
    const retry: InputRetry = entry.requestState === undefined
      ? { inputResponses: answers }
      : { inputResponses: answers, requestState: entry.requestState }
    const next = Object.keys(remaining).length > 0
      ? record(taskId, { status: "input_required", inputRequests: remaining })
      : record(taskId, { status: "working" })
    return Effect.flatMap(next, (row) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkIn(entry.round(entry.caller, retry), scope)
        entry.fiber = fiber
        yield* follow(taskId, fiber)
        return row
      }))
  }
  return { answer, follow }
}
