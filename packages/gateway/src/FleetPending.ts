/**
 * Pending calls across a fleet: the in-memory registry of this process, with a retry whose handle
 * names another process sent to that process, which answers it from its own registry.
 *
 * A pending call cannot move: the upstream call behind it waits in the process that made it (its
 * stdio child, its open stream). So the retry goes to the call instead, through the Fleet, and the
 * call's next move (or why there is none) comes back encoded. When that process is gone, the call
 * went with it: the caller is told to call the tool again, at once rather than after a timeout.
 */
import { type JsonObject, JsonObject as JsonObjectSchema } from "@mcpx-fx/protocol/Json"
import { Fleet, type FleetService } from "@mcpx-fx/server/Fleet"
import { Settings } from "@mcpx-fx/config/Settings"
import { AuthorizationFailed, AuthorizationRequired } from "@mcpx-fx/upstream/auth/AuthModel"
import { UnsendableRequest } from "@mcpx-fx/upstream/transport/ModernHeaders"
import { DisjointVersionsError, UnacceptableVersionError, VersionsExhaustedError } from "@mcpx-fx/upstream/era/Negotiator"
import { PoolError } from "@mcpx-fx/upstream/pool/PoolEvents"
import { ProbeFailed } from "@mcpx-fx/upstream/era/ProbeModel"
import { TooManyInputRounds, UpstreamRpcError } from "@mcpx-fx/upstream/session/SessionErrors"
import { FrameTooLarge, HTTPStatusError, LegacyHTTPRefusedError, SessionExpired, TransportClosed } from "@mcpx-fx/upstream/transport/Transport"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { CallTimedOut, CapabilitiesLacking, UnknownName } from "./GatewayModel.js"
import { makeIn, PendingCalls } from "./PendingCalls.js"
import { type Bounds, type Move, parseHandle, PendingCallRefused, type PendingCallsService, type PendingError, type Target } from "./PendingQuestions.js"
import { make } from "./internal/PendingRegistry.js"

/** The message kinds: a retry that waits for the next move, and answers that do not. */
export const ResumeKind = "pending.resume"
export const AnswerKind = "pending.answer"

/** What a caller is told when the process holding its call has stopped. */
export const GoneDetail = "the mcpx-fx instance that held this call has stopped; call the tool again without requestState"

/**
 * How long a forwarded retry may wait without a `wait` of its own: the upstream's next move can
 * take as long as the call itself.
 */
export const ResumeTimeout = Duration.hours(1)

/** Time for the hop itself, over a retry's own `wait`. */
const HopMargin = Duration.seconds(10)

const Question = Schema.Struct({ key: Schema.String, method: Schema.String, params: JsonObjectSchema })
const MoveSchema = Schema.Union(
  Schema.TaggedStruct("Complete", { id: Schema.String, result: JsonObjectSchema }),
  Schema.TaggedStruct("Asking", {
    id: Schema.String,
    handle: Schema.String,
    questions: Schema.Array(Question),
    expiresAt: Schema.Number,
    round: Schema.Number
  }),
  Schema.TaggedStruct("Running", { id: Schema.String })
)

/** Every way a pending call can fail, as the wire carries it (each error is a Schema class). */
const ErrorSchema = Schema.Union(
  PendingCallRefused,
  CapabilitiesLacking,
  UnknownName,
  CallTimedOut,
  PoolError,
  UpstreamRpcError,
  TooManyInputRounds,
  UnsendableRequest,
  ProbeFailed,
  HTTPStatusError,
  LegacyHTTPRefusedError,
  SessionExpired,
  TransportClosed,
  FrameTooLarge,
  AuthorizationRequired,
  AuthorizationFailed,
  DisjointVersionsError,
  VersionsExhaustedError,
  UnacceptableVersionError
)

const Request = Schema.Struct({
  handle: Schema.String.pipe(Schema.maxLength(512)),
  answers: JsonObjectSchema,
  waitMs: Schema.optionalWith(Schema.Number.pipe(Schema.nonNegative(), Schema.finite()), { exact: true })
})
type Request = typeof Request.Type

const Reply = Schema.Union(
  Schema.Struct({ move: MoveSchema }),
  Schema.Struct({ done: Schema.Literal(true) }),
  Schema.Struct({ error: ErrorSchema })
)
type Reply = typeof Reply.Type

const decodeRequest = Schema.decodeUnknownEither(Request)
const decodeReply = Schema.decodeUnknownEither(Reply)
const encodeReply = Schema.encodeEither(Reply)

const refusal = (reason: PendingCallRefused["reason"], detail: string) => new PendingCallRefused({ reason, detail })

const encoded = (reply: Reply): JsonObject =>
  Either.match(encodeReply(reply), {
    onRight: (o) => o,
    // An error whose fields the wire cannot carry still tells the caller the call ended.
    onLeft: () => ({ error: { _tag: "PendingCallRefused", reason: "ended", detail: "the call failed on the instance holding it" } })
  })

/** Answers another process's retry from this process's registry. */
const answering = (local: PendingCallsService, kind: typeof ResumeKind | typeof AnswerKind) => (payload: JsonObject) =>
  Either.match(decodeRequest(payload), {
    onLeft: () => Effect.succeed(encoded({ error: refusal("unknown", "malformed forwarded retry") })),
    onRight: (request: Request) => {
      const target = { handle: request.handle }
      const run: Effect.Effect<Reply, PendingError> = kind === ResumeKind
        ? Effect.map(local.resume(target, request.answers, request.waitMs === undefined ? undefined : Duration.millis(request.waitMs)), (move) => ({ move }))
        : Effect.as(local.answer(target, request.answers), { done: true as const })
      return Effect.map(Effect.merge(Effect.mapError(run, (error): Reply => ({ error }))), encoded)
    }
  })

/**
 * `local`, its retries of calls another process holds sent to that process; and this process
 * answering the others' retries (for the scope's life).
 */
export const wrap = (local: PendingCallsService, fleet: FleetService): Effect.Effect<PendingCallsService, never, Scope.Scope> =>
  Effect.gen(function*() {
    yield* fleet.serve(ResumeKind, answering(local, ResumeKind))
    yield* fleet.serve(AnswerKind, answering(local, AnswerKind))

    /** The process another than this one that holds the call `target` names, if any. */
    const elsewhere = (target: Target): string | undefined => {
      if (!("handle" in target)) return undefined
      const parsed = parseHandle(target.handle)
      return parsed === undefined || parsed.instance === local.instance ? undefined : parsed.instance
    }

    const send = (instance: string, kind: string, request: Request): Effect.Effect<Reply, PendingError> => {
      const timeout = request.waitMs === undefined ? ResumeTimeout : Duration.sum(Duration.millis(request.waitMs), HopMargin)
      return fleet.send(instance, kind, request, timeout).pipe(
        Effect.mapError((e) =>
          e._tag === "InstanceGone"
            ? refusal("other-instance", GoneDetail)
            : refusal("ended", `the mcpx-fx instance holding this call could not be reached: ${e.detail}`)
        ),
        Effect.flatMap((payload) =>
          Either.match(decodeReply(payload), {
            onLeft: () => Effect.fail(refusal("ended", "the mcpx-fx instance holding this call answered something malformed")),
            onRight: (reply) => ("error" in reply ? Effect.fail(reply.error) : Effect.succeed(reply))
          })
        )
      )
    }

    const requestOf = (handle: string, answers: JsonObject, wait?: Duration.DurationInput): Request =>
      wait === undefined ? { handle, answers } : { handle, answers, waitMs: Duration.toMillis(Duration.decode(wait)) }

    const resume: PendingCallsService["resume"] = (target, answers, wait) => {
      const instance = elsewhere(target)
      if (instance === undefined || !("handle" in target)) return local.resume(target, answers, wait)
      return Effect.flatMap(send(instance, ResumeKind, requestOf(target.handle, answers, wait)), (reply): Effect.Effect<Move, PendingError> =>
        "move" in reply ? Effect.succeed(reply.move) : Effect.fail(refusal("ended", "the mcpx-fx instance holding this call answered no move")))
    }

    const answer: PendingCallsService["answer"] = (target, answers) => {
      const instance = elsewhere(target)
      if (instance === undefined || !("handle" in target)) {
        return local.answer(target, answers)
      }
      return Effect.asVoid(send(instance, AnswerKind, requestOf(target.handle, answers)))
    }

    return { ...local, resume, answer }
  })

/** The registry under the `questions.*` settings, its handles naming the Fleet's process id, across the fleet. */
export const layer: Layer.Layer<PendingCalls, never, Settings | Fleet> = Layer.scoped(
  PendingCalls,
  Effect.gen(function*() {
    const fleet = yield* Fleet
    return yield* wrap(yield* makeIn(fleet.instance), fleet)
  })
)

/** As `layer`, with fixed bounds (tests, embedding). */
export const layerWith = (bounds: Bounds): Layer.Layer<PendingCalls, never, Fleet> =>
  Layer.scoped(
    PendingCalls,
    Effect.gen(function*() {
      const fleet = yield* Fleet
      return yield* wrap(yield* make(Effect.succeed(bounds), fleet.instance), fleet)
    })
  )
