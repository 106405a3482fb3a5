/**
 * Calls that may ask their caller, for callers that are not MCP hosts: what `/v1/ask` and
 * `/v1/elicit` do, shared with the CLI when it runs the gateway in-process (so `mcpx-fx call` and
 * `mcpx-fx elicit` behave the same whichever route answers).
 *
 * Such a call runs in PendingCalls with the caller's declared capabilities (form elicitation by
 * default). A legacy upstream's questions and a modern upstream's `input_required` reach the caller
 * the same way: as open questions, each with an id, answered by key on the call or by id alone.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { Api } from "./Api.js"
import { apiCaller, type CallerHeaders } from "./ApiCaller.js"
import * as ArgumentCheck from "./ArgumentCheck.js"
import { BadArguments, UpstreamFailed, upstreamFailed } from "./ApiErrors.js"
import * as AskApi from "./AskApi.js"
import { Gateway } from "@mcpx-fx/gateway/Gateway"
import type { Caller, UnknownName } from "@mcpx-fx/gateway/GatewayModel"
import { qualifiedToolName } from "@mcpx-fx/gateway/Names"
import { PendingCalls } from "@mcpx-fx/gateway/PendingCalls"
import type { Move, PendingError } from "@mcpx-fx/gateway/PendingQuestions"
import * as QuestionFit from "@mcpx-fx/gateway/QuestionFit"
import * as Redact from "@mcpx-fx/gateway/Redact"

type GatewayService = Gateway["Type"]
type PendingService = PendingCalls["Type"]
type Status = typeof AskApi.AskStatus.Type

/** Everything an ask operation can fail with, as `/v1` reports it. */
export type AskError =
  | UnknownName
  | BadArguments
  | UpstreamFailed
  | AskApi.AskNotFound
  | AskApi.AskConflict
  | AskApi.AskInvalid
  | AskApi.AskUnavailable

/** What a caller that says nothing can be asked: form elicitations. */
export const DefaultCapabilities: JsonObject = { elicitation: { form: {} } }

/** A question's id for `/v1/elicit`: its call and its key. */
export const questionId = (call: string, key: string): string => `${call}.${key}`

const splitQuestionId = (id: string): { readonly call: string; readonly key: string } | undefined => {
  const dot = id.lastIndexOf(".")
  return dot <= 0 ? undefined : { call: id.slice(0, dot), key: id.slice(dot + 1) }
}

const toAskError = (tool: string) => (e: PendingError): AskError => {
  switch (e._tag) {
    case "CapabilitiesLacking":
      return new AskApi.AskInvalid({ reason: "capabilities", detail: e.message, requiredCapabilities: e.requiredCapabilities })
    case "PendingCallRefused":
      switch (e.reason) {
        case "unknown":
          return new AskApi.AskNotFound({ id: tool, detail: e.detail })
        case "invalid-answer":
          return new AskApi.AskInvalid({ reason: "invalid-answer", detail: e.detail })
        case "full":
          return new AskApi.AskUnavailable({ detail: e.detail })
        case "rounds":
          return new UpstreamFailed({ kind: "TooManyRounds", detail: e.detail })
        default:
          return new AskApi.AskConflict({ reason: e.reason, detail: e.detail })
      }
    case "UnknownName":
      return e
    default:
      return e._tag === "UpstreamRpcError" && e.code === ErrorCode.InvalidParams
        ? new BadArguments({ tool, detail: e.rpcMessage })
        : upstreamFailed(e)
  }
}

const statusOf = (tool: string, move: Move): Status => {
  switch (move._tag) {
    case "Complete":
      return { id: move.id, tool, status: "complete", questions: [], result: move.result, isError: move.result.isError === true }
    case "Running":
      return { id: move.id, tool, status: "running", questions: [] }
    case "Asking":
      return {
        id: move.id,
        tool,
        status: "input_required",
        questions: move.questions.map((q) => ({ id: questionId(move.id, q.key), key: q.key, method: q.method, params: q.params })),
        round: move.round,
        expiresAt: move.expiresAt
      }
  }
}

const waitOf = (waitMs: number | undefined) => Duration.millis(waitMs ?? AskApi.DefaultWaitMs)

/** `POST /v1/ask`: begins a call and waits up to `waitMs` for its first move. */
export const begin = (
  gateway: GatewayService,
  pending: PendingService,
  request: typeof AskApi.AskRequest.Type,
  headers: typeof CallerHeaders.Type = {}
): Effect.Effect<Status, AskError> =>
  Effect.gen(function*() {
    const tool = qualifiedToolName(request.tool)
    const capabilities = request.capabilities ?? DefaultCapabilities
    // A modern upstream's input_required is resolved through the same questions as a legacy one's.
    const caller: Caller = {
      clientCapabilities: capabilities,
      inputRequired: "resolve",
      ...apiCaller(request.session, headers),
      ...(request.session === undefined ? {} : { callerId: request.session })
    }
    const checked = yield* ArgumentCheck.check(gateway, caller, tool, request.arguments ?? {}).pipe(
      Effect.mapError((e) => (e._tag === "BadArguments" || e._tag === "UnknownName" ? e : upstreamFailed(e)))
    )
    const move = yield* pending.begin(
      tool,
      QuestionFit.asker(capabilities),
      // Run once, at once: the check's resolution is this call's.
      (questions, parked) => gateway.callTool({ ...caller, questions, ...(parked === undefined ? {} : { parked }) }, checked.resolution, checked.args),
      waitOf(request.waitMs)
    ).pipe(Effect.mapError(toAskError(tool)))
    return statusOf(tool, move)
  })

const labelOf = (pending: PendingService, id: string) => Effect.map(pending.list, (calls) => calls.find((c) => c.id === id)?.label ?? "")

/** `GET /v1/ask/{id}`: waits up to `waitMs` for the call's next move (its questions at once if it has some). */
export const poll = (pending: PendingService, id: string, waitMs?: number): Effect.Effect<Status, AskError> =>
  Effect.gen(function*() {
    const tool = yield* labelOf(pending, id)
    const move = yield* pending.poll(id, waitOf(waitMs)).pipe(Effect.mapError(toAskError(id)))
    return { ...statusOf(tool, move), id }
  })

/** `POST /v1/ask/{id}/answers`: answers by key, then waits up to `waitMs` for the next move. */
export const answer = (
  pending: PendingService,
  id: string,
  body: typeof AskApi.AskAnswers.Type
): Effect.Effect<Status, AskError> =>
  Effect.gen(function*() {
    const tool = yield* labelOf(pending, id)
    const move = yield* pending.resume({ id }, body.answers, waitOf(body.waitMs)).pipe(Effect.mapError(toAskError(id)))
    return { ...statusOf(tool, move), id }
  })

/** `POST /v1/ask/{id}/abandon`. */
export const abandon = (pending: PendingService, id: string) =>
  Effect.flatMap(pending.abandon(id), (found) =>
    found
      ? Effect.succeed({ id, abandoned: true as const })
      : Effect.fail(new AskApi.AskNotFound({ id, detail: `no pending call ${id} (it ended, was collected, or expired)` })))

/**
 * Whose questions a request may see and answer. A question belongs to the caller whose call asked
 * it, and that caller is known by the call's id: unguessable, and handed only to whoever began the
 * call (`/v1/ask`'s answer, a host's `input_required`). The owner of the state directory (the unix
 * socket, `Redact.RawForOwner`) may see every question, held ones too; nobody else sees a held
 * question, asked while several callers' calls were in flight and so no one caller's.
 */
export interface Viewer {
  readonly owner: boolean
  /** The call whose questions are asked for; without one, every question (the owner only). */
  readonly call: string | undefined
}

/** The viewer of the current `/v1` request: the owner on the unix socket, else only the call it names. */
export const viewerOf = (call: string | undefined): Effect.Effect<Viewer> => Effect.map(FiberRef.get(Redact.RawForOwner), (owner) => ({ owner, call }))

/** `GET /v1/elicit`: the open questions `viewer` may see, of asking calls and held unattributed ones. */
export const openQuestions = (pending: PendingService, viewer: Viewer): Effect.Effect<typeof AskApi.OpenQuestions.Type> =>
  Effect.gen(function*() {
    const every = viewer.owner && viewer.call === undefined
    const calls = (yield* pending.list).filter((c) => every || c.id === viewer.call)
    const held = every ? yield* pending.held : []
    return {
      questions: [
        ...calls.flatMap((c) =>
          c.questions.map((q) => ({ id: questionId(c.id, q.key), from: c.label, call: c.id, method: q.method, params: q.params, expiresAt: c.expiresAt }))
        ),
        ...held.map((h) => ({ id: h.id, from: h.server, method: h.method, params: h.params, expiresAt: h.expiresAt }))
      ]
    }
  })

/** The answer a `/v1/elicit` body gives a question of `method`. */
const resultFor = (method: string, body: typeof AskApi.ElicitAnswer.Type): JsonObject | undefined =>
  body.result !== undefined
    ? body.result
    : method === Method.ElicitationCreate && body.action !== undefined
    ? { action: body.action, ...(body.action === "accept" && body.content !== undefined ? { content: body.content } : {}) }
    : undefined

/**
 * `POST /v1/elicit/{id}`: answers one question by its id; the call it belongs to goes on. Only a
 * question `owner` may see is found: a held one by the owner alone, a call's by whoever holds the
 * call's id, which the question's id begins with.
 */
export const elicit = (
  pending: PendingService,
  id: string,
  body: typeof AskApi.ElicitAnswer.Type,
  owner: boolean
): Effect.Effect<typeof AskApi.ElicitAnswered.Type, AskError> =>
  Effect.gen(function*() {
    const viewer: Viewer = owner ? { owner, call: undefined } : { owner, call: splitQuestionId(id)?.call }
    const open = (yield* openQuestions(pending, viewer)).questions.find((q) => q.id === id)
    if (open === undefined) return yield* new AskApi.AskNotFound({ id, detail: `no open question ${id} (answered already, or expired)` })
    const result = resultFor(open.method, body)
    if (result === undefined) {
      return yield* new AskApi.AskInvalid({
        reason: "invalid-answer",
        detail: open.method === Method.ElicitationCreate
          ? "an elicitation is answered with an action (accept, decline or cancel)"
          : `a ${open.method} question is answered with a result`
      })
    }
    const split = splitQuestionId(id)
    if (open.call === undefined || split === undefined) {
      const fitted = QuestionFit.fit({ method: open.method, params: open.params }, result)
      if (fitted._tag === "Left") return yield* new AskApi.AskInvalid({ reason: "invalid-answer", detail: fitted.left })
      yield* pending.answerHeld(id, { result: fitted.right })
      return { id, answered: true as const }
    }
    // The call moves on by itself; whoever follows it (`mcpx-fx call --resume`) sees the next move.
    yield* pending.answer({ id: split.call }, { [split.key]: result }).pipe(Effect.mapError(toAskError(split.call)))
    return { id, answered: true as const, call: split.call }
  })

/** `/v1/ask` and `/v1/elicit`. */
export const AskLive = HttpApiBuilder.group(Api, "ask", (handlers) =>
  handlers
    .handle("begin", ({ headers, payload }) =>
      Effect.flatMap(Effect.all([Gateway, PendingCalls]), ([gateway, pending]) => begin(gateway, pending, payload, headers)))
    .handle("poll", ({ path, urlParams }) =>
      Effect.flatMap(PendingCalls, (pending) => poll(pending, path.id, urlParams.waitMs)))
    .handle("answer", ({ path, payload }) => Effect.flatMap(PendingCalls, (pending) => answer(pending, path.id, payload)))
    .handle("abandon", ({ path }) => Effect.flatMap(PendingCalls, (pending) => abandon(pending, path.id)))
    .handle("questions", ({ urlParams }) =>
      Effect.flatMap(Effect.all([PendingCalls, viewerOf(urlParams.call)]), ([pending, viewer]) =>
        openQuestions(pending, viewer)))
    .handle("elicit", ({ path, payload }) =>
      Effect.flatMap(Effect.all([PendingCalls, viewerOf(undefined)]), ([pending, viewer]) =>
        elicit(pending, path.id, payload, viewer.owner))))
