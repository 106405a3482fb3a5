/**
 * The questions of a 2025-11-25 host's task (elicitation, sampling, roots its upstream asks while
 * the task runs). 2025-11-25 has the task read `input_required` while one waits, and the host
 * collect it by calling `tasks/result`, whose response stream carries the question (tied to the
 * task by `_meta["io.modelcontextprotocol/related-task"]`) before the result. So a question waits
 * here until a `tasks/result` of its task takes it; a stdio host, whose connection outlives the
 * request that made the task, is asked on it at once, as before.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import { isJsonObject } from "@mcpx-fx/protocol/Json"
import { RelatedTaskKey } from "@mcpx-fx/protocol/Tasks"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import type { Question, QuestionChannel, QuestionRefused } from "../Backend.js"

/** A question waiting for a `tasks/result` to carry it. */
interface Parked {
  readonly question: Question
  readonly answer: Deferred.Deferred<JsonObject, QuestionRefused>
}

/** One task's questions. */
export interface TaskQuestions {
  /** What the task's call asks through. */
  readonly channel: QuestionChannel
  /**
   * Asks the waiting questions, and those that come, through `through` (a `tasks/result`
   * request's own stream) until interrupted; a question it was asking then waits for the next.
   */
  readonly serve: (through: QuestionChannel) => Effect.Effect<never>
}

/** The question tied to its task, as 2025-11-25 has a task's requests say. */
const related = (question: Question, taskId: string): Question => {
  const meta = isJsonObject(question.params._meta) ? question.params._meta : {}
  return { ...question, params: { ...question.params, _meta: { ...meta, [RelatedTaskKey]: { taskId } } } }
}

/**
 * `direct`: the connection's channel, when the host's connection outlives its requests (stdio).
 * `waiting(true)` when a first question is asked, `waiting(false)` when the last is answered: the
 * task's status follows.
 */
export const make = (
  taskId: string,
  direct: QuestionChannel | undefined,
  waiting: (asking: boolean) => Effect.Effect<void>
): Effect.Effect<TaskQuestions> =>
  Effect.map(Queue.unbounded<Parked>(), (parked) => {
    let open = 0
    const parkedAsk: QuestionChannel = (question) =>
      Effect.flatMap(
        Deferred.make<JsonObject, QuestionRefused>(),
        (answer) => Effect.zipRight(Queue.offer(parked, { question, answer }), Deferred.await(answer))
      )
    const ask = direct ?? parkedAsk
    const channel: QuestionChannel = (question) =>
      Effect.suspend(() => {
        open += 1
        const first = open === 1 ? waiting(true) : Effect.void
        return Effect.zipRight(first, ask(related(question, taskId))).pipe(
          Effect.ensuring(Effect.suspend(() => {
            open -= 1
            return open === 0 ? waiting(false) : Effect.void
          }))
        )
      })
    // Taken and asked without a gap an interruption could fall into: a question is always either
    // waiting, being asked, or answered.
    const serve = (through: QuestionChannel): Effect.Effect<never> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(restore(Queue.take(parked)), (p) =>
          Effect.onExit(restore(through(p.question)), (exit) =>
            // The `tasks/result` went away mid-question: the next one asks it again.
            Exit.isInterrupted(exit) ? Queue.offer(parked, p) : Deferred.done(p.answer, exit)))
      ).pipe(Effect.ignore, Effect.forever)
    return { channel, serve }
  })
