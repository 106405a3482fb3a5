/**
 * The `/v1/ask` and `/v1/elicit` routes: calls that may ask their caller questions, for callers that
 * are not MCP hosts (the CLI, scripts). A call begins with `POST /v1/ask` and is followed by id
 * (`GET /v1/ask/{id}` long-polls, `POST /v1/ask/{id}/answers` answers, `POST /v1/ask/{id}/abandon`
 * ends it); `GET /v1/elicit` lists open questions — those of such calls, and those a shared
 * stdio upstream asked that could not be attributed to any caller — and `POST /v1/elicit/{id}`
 * answers one by its id. A question belongs to the caller whose call asked it: over TCP only the
 * questions of a call named by its (unguessable) id are shown or answered; every question, held
 * ones included, only to the owner on the unix socket (Ask.ts).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"
import { CallerHeaders } from "./ApiCaller.js"
import { BadArguments, UpstreamFailed } from "./ApiErrors.js"
import { UnknownName } from "@mcpx-fx/gateway/GatewayModel"

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** The longest a request may wait for a call's next move. */
export const MaxWaitMs = 300_000
/** How long a request waits for a move when it does not say. */
export const DefaultWaitMs = 30_000

const WaitMs = Schema.Int.pipe(Schema.between(0, MaxWaitMs))

/** `POST /v1/ask`. */
export const AskRequest = Schema.Struct({
  tool: Schema.String,
  arguments: Schema.optionalWith(Schema.Unknown, { exact: true }),
  session: Schema.optionalWith(Schema.String, { exact: true }),
  /**
   * What the caller can be asked, as MCP client capabilities (default `{"elicitation":{}}`: form
   * questions). Anything else the upstream asks is answered for it.
   */
  capabilities: Schema.optionalWith(JsonObject, { exact: true }),
  /** How long to wait for the first move (ms, at most 300000; default 30000). */
  waitMs: Schema.optionalWith(WaitMs, { exact: true })
})

/** One open question: `id` answers it through `/v1/elicit/{id}`; `key` through `/v1/ask/{call}/answers`. */
export const AskQuestion = Schema.Struct({
  id: Schema.String,
  key: Schema.String,
  method: Schema.String,
  params: JsonObject
})

/**
 * Where an asking call stands: still `running`, waiting for answers (`input_required`, with its
 * questions and when it is given up), or `complete` with the tool's result.
 */
export const AskStatus = Schema.Struct({
  id: Schema.String,
  tool: Schema.String,
  status: Schema.Literal("running", "input_required", "complete"),
  questions: Schema.Array(AskQuestion),
  round: Schema.optionalWith(Schema.Number, { exact: true }),
  expiresAt: Schema.optionalWith(Schema.Number, { exact: true }),
  result: Schema.optionalWith(JsonObject, { exact: true }),
  isError: Schema.optionalWith(Schema.Boolean, { exact: true })
})

/** `POST /v1/ask/{id}/answers`: answers by question key (an MCP ElicitResult, CreateMessageResult, ListRootsResult). */
export const AskAnswers = Schema.Struct({
  answers: JsonObject,
  waitMs: Schema.optionalWith(WaitMs, { exact: true })
})

const AskPath = Schema.Struct({ id: Schema.String })

/** `GET /v1/ask/{id}?waitMs=`. */
export const AskPoll = Schema.Struct({ waitMs: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, MaxWaitMs)), { exact: true }) })

/** One question `GET /v1/elicit` lists. */
export const OpenQuestion = Schema.Struct({
  id: Schema.String,
  /** Who asked: the tool of an asking call, or the server of a question held unattributed. */
  from: Schema.String,
  /** The asking call it belongs to (`mcpx-fx call --resume <call>` collects its result); none for a held question. */
  call: Schema.optionalWith(Schema.String, { exact: true }),
  method: Schema.String,
  params: JsonObject,
  expiresAt: Schema.Number
})

/** `GET /v1/elicit`. */
export const OpenQuestions = Schema.Struct({ questions: Schema.Array(OpenQuestion) })

/**
 * `GET /v1/elicit?call=`: the questions of the call named (by the id its caller was given), or
 * with no `call` every open question — the latter only for the owner on the unix socket.
 */
export const ElicitQuery = Schema.Struct({ call: Schema.optionalWith(Schema.String, { exact: true }) })

/**
 * `POST /v1/elicit/{id}`: an elicitation's `action` (with `content` for an accepted form), or for
 * any other kind of question the `result` to answer it with.
 */
export const ElicitAnswer = Schema.Struct({
  action: Schema.optionalWith(Schema.Literal("accept", "decline", "cancel"), { exact: true }),
  content: Schema.optionalWith(JsonObject, { exact: true }),
  result: Schema.optionalWith(JsonObject, { exact: true })
})

/** `POST /v1/elicit/{id}`: the question was answered; the call it belongs to goes on. */
export const ElicitAnswered = Schema.Struct({ id: Schema.String, answered: Schema.Literal(true), call: Schema.optionalWith(Schema.String, { exact: true }) })

/** The call or question is not (or no longer) there. */
export class AskNotFound extends Schema.TaggedError<AskNotFound>("@mcpx-fx/daemon/AskApi/AskNotFound")(
  "AskNotFound",
  { id: Schema.String, detail: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {
  override get message(): string {
    return this.detail
  }
}

/** Another request waits on the call, or the answers were for a round already answered. */
export class AskConflict extends Schema.TaggedError<AskConflict>("@mcpx-fx/daemon/AskApi/AskConflict")(
  "AskConflict",
  { reason: Schema.String, detail: Schema.String },
  HttpApiSchema.annotations({ status: 409 })
) {
  override get message(): string {
    return this.detail
  }
}

/**
 * Answers that do not fit their questions (`invalid-answer`), or a call whose only questions need
 * capabilities the caller did not declare (`capabilities`, with `requiredCapabilities`).
 */
export class AskInvalid extends Schema.TaggedError<AskInvalid>("@mcpx-fx/daemon/AskApi/AskInvalid")(
  "AskInvalid",
  {
    reason: Schema.Literal("invalid-answer", "capabilities"),
    detail: Schema.String,
    requiredCapabilities: Schema.optionalWith(JsonObject, { exact: true })
  },
  HttpApiSchema.annotations({ status: 400 })
) {
  override get message(): string {
    return this.detail
  }
}

/** Too many calls are waiting for their callers (`questions.maxPending`); try again later. */
export class AskUnavailable extends Schema.TaggedError<AskUnavailable>("@mcpx-fx/daemon/AskApi/AskUnavailable")(
  "AskUnavailable",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 503 })
) {
  override get message(): string {
    return this.detail
  }
}

/** Calls that may ask, and their questions. Every route that moves a call can fail with that call's own failure. */
export class AskGroup extends HttpApiGroup.make("ask")
  .add(
    HttpApiEndpoint.post("begin", "/ask").setPayload(AskRequest).setHeaders(CallerHeaders).addSuccess(AskStatus)
      .addError(UnknownName, { status: 404 }).addError(BadArguments).addError(UpstreamFailed)
      .addError(AskNotFound).addError(AskConflict).addError(AskInvalid).addError(AskUnavailable)
  )
  .add(
    HttpApiEndpoint.get("poll", "/ask/:id").setPath(AskPath).setUrlParams(AskPoll).addSuccess(AskStatus)
      .addError(UnknownName, { status: 404 }).addError(BadArguments).addError(UpstreamFailed)
      .addError(AskNotFound).addError(AskConflict).addError(AskInvalid).addError(AskUnavailable)
  )
  .add(
    HttpApiEndpoint.post("answer", "/ask/:id/answers").setPath(AskPath).setPayload(AskAnswers).addSuccess(AskStatus)
      .addError(UnknownName, { status: 404 }).addError(BadArguments).addError(UpstreamFailed)
      .addError(AskNotFound).addError(AskConflict).addError(AskInvalid).addError(AskUnavailable)
  )
  .add(
    HttpApiEndpoint.post("abandon", "/ask/:id/abandon").setPath(AskPath)
      .addSuccess(Schema.Struct({ id: Schema.String, abandoned: Schema.Literal(true) }))
      .addError(AskNotFound)
  )
  .add(HttpApiEndpoint.get("questions", "/elicit").setUrlParams(ElicitQuery).addSuccess(OpenQuestions))
  .add(
    HttpApiEndpoint.post("elicit", "/elicit/:id").setPath(AskPath).setPayload(ElicitAnswer).addSuccess(ElicitAnswered)
      .addError(UnknownName, { status: 404 }).addError(BadArguments).addError(UpstreamFailed)
      .addError(AskNotFound).addError(AskConflict).addError(AskInvalid).addError(AskUnavailable)
  )
{}
