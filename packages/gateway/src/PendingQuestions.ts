/**
 * What a pending call is made of, shared by the PendingCalls service and its in-memory registry:
 * the questions a caller sees, how a caller takes them, the moves of a call, the refusals, the
 * bounds, and the service's shape.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import { answerAlone, type Question, type QuestionHandler, QuestionRefused } from "@mcpx-fx/upstream/session/Questions"
import type { Parked } from "@mcpx-fx/upstream/session/SessionModel"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import type * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { CapabilitiesLacking, GatewayCallError } from "./GatewayModel.js"

// ---------------------------------------------------------------------------------------------
// What callers see

/** A question handed to the caller: the key its answer must carry, and the request. */
export interface PendingQuestion {
  readonly key: string
  readonly method: string
  readonly params: JsonObject
}

/** How a caller takes one upstream question. */
export type Take =
  /** Put to the caller, in the caller's words. */
  | { readonly _tag: "Ask"; readonly question: Question }
  /** The caller did not declare what the question needs (`required`, as client capabilities). */
  | { readonly _tag: "Lacking"; readonly required: JsonObject }
  /** Answered at once, without the caller. */
  | { readonly _tag: "Answer"; readonly result: JsonObject }

/** What the registry needs to know about the caller of one call. */
export interface Asker {
  readonly take: (question: Question) => Take
  /**
   * The caller's answer to `asked` (as the caller was shown it): what to send upstream, or why it
   * does not fit the question.
   */
  readonly fit: (asked: Question, answer: unknown) => Either.Either<JsonObject, string>
}

/** The upstream's next move in a pending call. */
export type Move =
  | { readonly _tag: "Complete"; readonly id: string; readonly result: JsonObject }
  | {
    readonly _tag: "Asking"
    /** The call's id (`/v1/ask`, `mcpx-fx elicit`). */
    readonly id: string
    /** Names the call and this round; the answers must bring it back. */
    readonly handle: string
    readonly questions: ReadonlyArray<PendingQuestion>
    /** Epoch milliseconds after which the call is ended if no answers came. */
    readonly expiresAt: number
    readonly round: number
  }
  /** No move within the caller's `wait`; the call goes on, registered under `id`. */
  | { readonly _tag: "Running"; readonly id: string }

/** One pending call, as `/v1/ask` and `mcpx-fx elicit list` show it. */
export interface PendingInfo {
  readonly id: string
  readonly label: string
  readonly state: "running" | "asking" | "done"
  readonly round: number
  readonly questions: ReadonlyArray<PendingQuestion>
  /** Epoch milliseconds after which an unanswered or uncollected call is ended; 0 while it runs. */
  readonly expiresAt: number
}

/** Why a retry or a new pending call was refused. */
export const RefusalReason = Schema.Literal(
  "unknown",
  "used",
  "expired",
  "abandoned",
  "busy",
  "other-instance",
  "invalid-answer",
  "rounds",
  "full",
  "ended"
)
export type RefusalReason = typeof RefusalReason.Type

/**
 * A retry that names no call this registry holds, answers that do not fit, or a bound reached.
 * `unknown`, `used` (a round answered already, or a call whose result was delivered), `expired`
 * (past `questions.ttl`), `abandoned`, `busy`, `other-instance` and `invalid-answer` are the
 * caller's mistakes (a call asked for by id that is gone is always `unknown`, its detail saying how it ended);
 * `rounds` and `full` are bounds the upstream or the load ran into; `ended`, a call ended under a
 * caller still waiting on it (abandoned by another request, expired, or mcpx-fx stopping).
 */
export class PendingCallRefused extends Schema.TaggedError<PendingCallRefused>("@mcpx-fx/gateway/PendingCallRefused")(
  "PendingCallRefused",
  { reason: RefusalReason, detail: Schema.String }
) {
  override get message(): string {
    return this.detail
  }
}

/** What a pending call can end with besides a result. */
export type PendingError = GatewayCallError | PendingCallRefused | CapabilitiesLacking

/** A question nobody could be asked, held until someone answers it by id or it expires. */
export interface HeldQuestion {
  readonly id: string
  readonly server: string
  readonly method: string
  readonly params: JsonObject
  readonly expiresAt: number
}

/** What the registry tells `/v1/events` about (shaped like the Pool's events). */
export type QuestionEvent =
  | {
    readonly type: "question.unattributed"
    readonly server: string
    readonly at: string
    readonly id: string
    readonly method: string
    readonly callers: number
    readonly hint: string
  }
  | { readonly type: "question.expired"; readonly server: string; readonly at: string; readonly id: string }

/** The bounds, as the settings stand. */
export interface Bounds {
  readonly ttl: Duration.Duration
  readonly maxRounds: number
  readonly maxPending: number
  /**
   * How many questions one call may have open at once (default `DefaultMaxQuestions`); past it
   * the call is cancelled. With `maxPending`, it bounds every question held.
   */
  readonly maxQuestions?: number
  /** How long to wait for more questions after one arrives, so questions asked at once go in one round. */
  readonly gather: Duration.Duration
}

/** `questions.maxQuestions`: the most questions one call may have open at once. */
export const DefaultMaxQuestions = 32

/** Which round an answer is for: the exact one a handle names, or whatever round is waiting. */
export type Target = { readonly handle: string } | { readonly id: string }

/** The prefix of every handle, so a retry's state can be told from an upstream's own. */
export const HandlePrefix = "mcpx-pending:"

/** Whether an (unwrapped) `requestState` is a pending-call handle rather than an upstream's state. */
export const isHandle = (state: string | undefined): state is string => state !== undefined && state.startsWith(HandlePrefix)

export const handleOf = (instance: string, id: string, round: number) => `${HandlePrefix}${instance}:${id}:${round}`

export const parseHandle = (handle: string) => {
  if (!isHandle(handle)) return undefined
  const [instance, id, round] = handle.slice(HandlePrefix.length).split(":")
  const n = Number(round)
  return instance === undefined || id === undefined || !Number.isInteger(n) ? undefined : { instance, id, round: n }
}

/** What mcpx-fx answers for a caller who cannot: an elicitation is cancelled, roots are none, anything else refused. */
export const onBehalf = (question: Question): Effect.Effect<JsonObject, QuestionRefused> =>
  question.method === Method.ElicitationCreate || question.method === Method.Ping || question.method === Method.RootsList
    ? answerAlone(question)
    : Effect.fail(new QuestionRefused({ code: ErrorCode.MethodNotFound, message: `the caller cannot answer ${question.method}` }))

export const kindOf = (method: string): string =>
  method === Method.ElicitationCreate ? "elicitation" : method === Method.SamplingCreateMessage ? "sampling" : method === Method.RootsList ? "roots" : "input"

// ---------------------------------------------------------------------------------------------
// The service's shape

/** The registry of pending calls and held questions. */
export interface PendingCallsService {
  /** This instance's id, carried by every handle it mints. */
  readonly instance: string
  /**
   * Runs a call that may ask; `run` gets the handler to give the upstream call, and what tells the
   * Pool when the call is parked on its caller's answer (to hand to the upstream call as
   * `CallContext.parked`; a registry that gives none leaves its parked calls holding their
   * processes until `questions.ttl`). Ends at the call's first move. Without `wait`, interrupting it (the
   * caller left) ends the call; with one, the call is left `Running` when no move came in time.
   */
  readonly begin: (
    label: string,
    asker: Asker,
    run: (questions: QuestionHandler, parked?: Parked) => Effect.Effect<JsonObject, GatewayCallError>,
    wait?: Duration.DurationInput
  ) => Effect.Effect<Move, PendingError>
  /** Answers a round and waits for the upstream's next move (`wait` as for `begin`). */
  readonly resume: (target: Target, answers: JsonObject, wait?: Duration.DurationInput) => Effect.Effect<Move, PendingError>
  /** Answers some of a call's questions and leaves it to go on for whoever follows it (`mcpx-fx elicit`). */
  readonly answer: (target: Target, answers: JsonObject) => Effect.Effect<void, PendingError>
  /** Waits up to `wait` for a call's next move without answering anything (`/v1/ask` long poll). */
  readonly poll: (id: string, wait: Duration.DurationInput) => Effect.Effect<Move, PendingError>
  /** Ends a pending call: its questions answered on the caller's behalf, the upstream call cancelled. */
  readonly abandon: (id: string) => Effect.Effect<boolean>
  /** The calls registered here: running for a caller who will come back, asking, or done and uncollected. */
  readonly list: Effect.Effect<ReadonlyArray<PendingInfo>>
  /**
   * Holds a question nobody could be asked until someone answers it by id (`/v1/elicit`) or it
   * expires, when it is answered on the caller's behalf.
   */
  readonly hold: (server: string, question: Question, callers: number) => Effect.Effect<JsonObject, QuestionRefused>
  readonly held: Effect.Effect<ReadonlyArray<HeldQuestion>>
  /** Answers a held question (`result`), or refuses it; false when no such question is held. */
  readonly answerHeld: (id: string, answer: { readonly result: JsonObject } | { readonly refusal: string }) => Effect.Effect<boolean>
  /** Question events, in place once this returns. */
  readonly events: Effect.Effect<Queue.Dequeue<QuestionEvent>, never, Scope.Scope>
}
