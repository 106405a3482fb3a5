/**
 * Questions a legacy request's Backend asks the host over Streamable HTTP (elicitation, sampling,
 * roots). The server→client request goes out on the asking POST's SSE stream; the host answers in a
 * later POST, which may be any POST of the same session, so answers are routed here by id.
 *
 * Question ids are random, and an answer counts only from the session that was asked (or, for a
 * sessionless request, only from a sessionless POST), so one client cannot answer another's.
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Method from "@mcpx-fx/protocol/Method"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { type Question, type QuestionChannel, QuestionRefused } from "../Backend.js"
import { mintId } from "./HttpSessions.js"

interface Waiting {
  readonly owner: string | undefined
  readonly answer: Deferred.Deferred<JsonObject, QuestionRefused>
}

/** Open questions across the endpoint. */
export interface Questions {
  /**
   * A channel for one request: each question is handed to `send` (which puts it on the request's
   * stream, or says false when that stream is gone) and waits for its answer. `owner` is the
   * asking session (undefined: sessionless).
   */
  readonly channel: (owner: string | undefined, send: (message: JsonRpc.Message) => Effect.Effect<boolean>) => QuestionChannel
  /** Routes a host's response to the question it answers; false when nothing waits for it. */
  readonly answer: (owner: string | undefined, response: JsonRpc.Response) => Effect.Effect<boolean>
}

export const makeQuestions = (): Questions => {
  const waiting = new Map<string, Waiting>()

  const channel = (owner: string | undefined, send: (message: JsonRpc.Message) => Effect.Effect<boolean>): QuestionChannel => (question: Question) =>
    Effect.gen(function*() {
      const id = `mcpx-fx-q-${mintId()}`
      const answer = yield* Deferred.make<JsonObject, QuestionRefused>()
      waiting.set(id, { owner, answer })
      // A question nobody can see would wait forever; refusing it lets the Backend answer for
      // the host (a legacy session's request outlives a POST whose client went away).
      if (!(yield* send(JsonRpc.request(id, question.method, question.params)))) {
        waiting.delete(id)
        return yield* new QuestionRefused({ code: ErrorCode.InternalError, message: "the host's stream for this request is closed" })
      }
      return yield* Deferred.await(answer).pipe(
        // A call cancelled while its question is open tells the host to stop asking.
        Effect.onInterrupt(() => send(JsonRpc.notification(Method.NotificationsCancelled, { requestId: id, reason: "the call was cancelled" }))),
        Effect.ensuring(Effect.sync(() => waiting.delete(id)))
      )
    })

  const answer = (owner: string | undefined, response: JsonRpc.Response): Effect.Effect<boolean> =>
    Effect.suspend(() => {
      const id = JsonRpc.idOf(response)
      const w = id === undefined ? undefined : waiting.get(String(id))
      if (w === undefined || w.owner !== owner) return Effect.succeed(false)
      if (JsonRpc.isSuccess(response)) return Effect.as(Deferred.succeed(w.answer, response.result), true)
      if (JsonRpc.isErrorResponse(response)) {
        return Effect.as(Deferred.fail(w.answer, new QuestionRefused({ code: response.error.code, message: response.error.message })), true)
      }
      return Effect.succeed(false)
    })

  return { channel, answer }
}
