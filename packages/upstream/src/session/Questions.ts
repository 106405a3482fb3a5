/**
 * Answering what upstream servers ask: `ping`, `roots/list`, `elicitation/create`,
 * `sampling/createMessage`. The handler travels with each call, so a question is answered by
 * whoever caused it; when nobody can answer, the server still gets an answer, never silence.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"

/** A question from an upstream: the method and params of a server→client request. */
export interface Question {
  readonly method: string
  readonly params: JsonObject
}

/** The question could not be answered; it becomes a JSON-RPC error to the upstream. */
export class QuestionRefused extends Data.TaggedError("QuestionRefused")<{
  readonly code: number
  readonly message: string
}> {}

/** Answers questions for one call: a result object, or a refusal. */
export type QuestionHandler = (question: Question) => Effect.Effect<JsonObject, QuestionRefused>

/**
 * The roots mcpx-fx gives when the question is not a caller's to answer (none are configured).
 * Roots describe the client, not a call: a `roots/list` is answered with these whenever it cannot
 * be put to a caller that declared roots, never failed onto the caller.
 */
export const noRoots: JsonObject = { roots: [] }

/**
 * What mcpx-fx answers when no caller can: `ping` is answered, roots are empty, an elicitation is
 * cancelled on the user's behalf (so the tool can go on and say so) and anything else — sampling
 * included, which needs a model we do not have — is method-not-found.
 */
export const answerAlone: QuestionHandler = (q) => {
  switch (q.method) {
    case Method.Ping:
      return Effect.succeed({})
    case Method.RootsList:
      return Effect.succeed(noRoots)
    case Method.ElicitationCreate:
      return Effect.succeed({ action: "cancel" })
    default:
      return Effect.fail(
        new QuestionRefused({ code: ErrorCode.MethodNotFound, message: `mcpx-fx cannot answer ${q.method} here` })
      )
  }
}

/** A handler that answers `ping` itself and hands everything else to `next`. */
export const withPing = (next: QuestionHandler): QuestionHandler => (q) => q.method === Method.Ping ? Effect.succeed({}) : next(q)

/**
 * Answers a modern `inputRequests` map through `handler`, all at once, keyed alike: a question
 * the handler refuses is answered as nobody could be asked, and one that is not a request at all
 * (or that nobody can answer) is a cancelled elicitation, so the upstream can go on.
 */
export const resolveInputs = (requests: JsonObject, handler: QuestionHandler): Effect.Effect<JsonObject> =>
  Effect.forEach(
    Object.entries(requests),
    ([key, value]) => {
      const q = isJsonObject(value) && typeof value.method === "string"
        ? { method: value.method, params: isJsonObject(value.params) ? value.params : {} }
        : undefined
      if (q === undefined) return Effect.succeed([key, { action: "cancel" }] as const)
      return handler(q).pipe(
        Effect.catchTag("QuestionRefused", () => answerAlone(q)),
        Effect.orElseSucceed((): JsonObject => ({ action: "cancel" })),
        Effect.map((r) => [key, r] as const)
      )
    },
    { concurrency: "unbounded" }
  ).pipe(Effect.map((entries): JsonObject => Object.fromEntries(entries)))
