/**
 * How a session answers its server's questions (server→client requests): a question tied to a call
 * goes to that call's handler, in a fiber of the call's, and is answered for nobody if the call
 * ends first; an untied one (stdio names no call) goes to the caller it can be attributed to
 * (internal/Attribution.ts), or to `unattributed`; every answer but a ping's keeps the session's
 * pace (internal/QuestionPace.ts).
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import { relatedTaskOf } from "@mcpx-fx/protocol/Tasks"
import * as Duration from "effect/Duration"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { answerAlone, type Question, type QuestionHandler } from "../Questions.js"
import type { CallContext, SessionOptions } from "../SessionModel.js"
import type { Connection } from "../../transport/Transport.js"
import { makeAttribution } from "./Attribution.js"
import * as QuestionPace from "./QuestionPace.js"

/** How long the refusal of a question left open by a call that ended may take to send. */
const LeftoverAnswerWithin = Duration.seconds(5)

const asQuestion = (m: JsonRpc.Request): Question => ({ method: m.method, params: m.params ?? {} })

/** How long a question naming a task waits for the call that follows the task to be sent. */
const FollowerWait = Duration.seconds(2)

/** The answering of one session's questions. */
export const makeAnswers = (deps: {
  readonly name: string
  readonly conn: Connection
  readonly sessionScope: Scope.Scope
  /** The calls in flight, for attributing an untied question. */
  readonly inFlight: ReadonlyArray<CallContext>
  readonly options: SessionOptions
  /** While tracing: a question attributed to a call, answered in a span of its own under the call's. */
  readonly traced?: <A, E, R>(ctx: CallContext, method: string, answering: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}) => {
  const { conn, inFlight, name, options, sessionScope } = deps
  const inSpan = <A, E, R>(ctx: CallContext, method: string, answering: Effect.Effect<A, E, R>) =>
    deps.traced === undefined ? answering : deps.traced(ctx, method, answering)

  const pace = QuestionPace.make(name)
  const respond = (m: JsonRpc.Request, response: JsonRpc.Response) =>
    conn.respond(response, { era: "legacy" }).pipe(
      Effect.catchAll((e) => Effect.logWarning(`${name}: could not answer ${m.method}: ${e.message}`))
    )
  const responseOf = (m: JsonRpc.Request, handler: QuestionHandler) =>
    handler(asQuestion(m)).pipe(
      Effect.map((result) => JsonRpc.success(m.id, result)),
      Effect.catchTag("QuestionRefused", (e) => Effect.succeed(JsonRpc.failure(m.id, e.code, e.message)))
    )
  const answerWith = (m: JsonRpc.Request, handler: QuestionHandler) =>
    responseOf(m, handler).pipe(
      // A ping is answered at once, whatever the pace (a liveness check must not wait on it).
      Effect.tap(() => (m.method === Method.Ping ? Effect.void : pace.take)),
      Effect.flatMap((response) => respond(m, response))
    )
  /**
   * A question tied to a call, answered in a fiber of the call's: a question may wait on a person
   * for minutes, and the messages behind it (a second question, progress, the response) must flow
   * meanwhile. When the call ends first (answered, cancelled, expired), the question is still
   * answered, for nobody (an elicitation `cancel`), rather than left waiting upstream: once the
   * answer has started out it goes whole, and otherwise the refusal goes instead (within a bound,
   * so a server that stopped reading cannot hold the call's end).
   */
  const answerTied = (m: JsonRpc.Request, handler: QuestionHandler) => {
    let answering = false
    const alone = Effect.flatMap(responseOf(m, answerAlone), (response) => respond(m, response)).pipe(
      Effect.timeout(LeftoverAnswerWithin),
      Effect.ignore
    )
    return Effect.asVoid(Effect.fork(
      responseOf(m, handler).pipe(
        Effect.tap(() => pace.take),
        Effect.flatMap((response) =>
          Effect.uninterruptible(Effect.suspend(() => {
            answering = true
            return respond(m, response)
          }))
        ),
        Effect.onInterrupt(() => (answering ? Effect.void : alone))
      )
    ))
  }
  const answer = (m: JsonRpc.Request, handler: QuestionHandler | undefined) =>
    m.method === Method.Ping
      ? answerWith(m, answerAlone)
      : handler === undefined
      ? Effect.asVoid(Effect.fork(answerWith(m, answerAlone)))
      : answerTied(m, handler)

  const attribution = makeAttribution(inFlight, options.askedTogether)

  /**
   * Questions that name a task nobody waits on yet: a server may ask as soon as it made the task,
   * before the `tasks/result` that follows it is sent. Each waits (FollowerWait at most) for it.
   */
  const awaiting = new Map<string, Deferred.Deferred<CallContext>>()

  /** A call that waits on a task is in flight now (Session.request): a question waiting for it has it. */
  const followed = (ctx: CallContext): Effect.Effect<void> => {
    const waiting = ctx.task === undefined ? undefined : awaiting.get(ctx.task)
    if (ctx.task === undefined || waiting === undefined) return Effect.void
    awaiting.delete(ctx.task)
    return Effect.asVoid(Deferred.succeed(waiting, ctx))
  }

  const answerUntied = (m: JsonRpc.Request) =>
    Effect.suspend(() => {
      // A 2025-11-25 task's question names its task: it belongs to the call that waits on that task.
      const task = relatedTaskOf(m.params?._meta)
      if (task === undefined) return untied(m)
      const answerFor = (ctx: CallContext) => inSpan(ctx, m.method, answerWith(m, ctx.questions ?? answerAlone))
      const following = inFlight.find((c) => c.task === task)
      if (following !== undefined) return Effect.asVoid(Effect.forkIn(answerFor(following), sessionScope))
      // Registered here, in the same step as the look-up above: the follower enters `inFlight`
      // before it calls `followed`, so whichever comes first, the other finds it. (Registered
      // in the forked fiber, a follower starting meanwhile found nobody waiting, and the
      // question waited out FollowerWait and went untied, apart from the questions asked with it.)
      const waiting = awaiting.get(task) ?? Deferred.unsafeMake<CallContext>(FiberId.none)
      awaiting.set(task, waiting)
      return Effect.asVoid(Effect.forkIn(
        Effect.flatMap(Effect.timeoutOption(Deferred.await(waiting), FollowerWait), (found) => {
          if (awaiting.get(task) === waiting) awaiting.delete(task)
          return Option.match(found, { onNone: () => untied(m), onSome: answerFor })
        }),
        sessionScope
      ))
    })

  const untied = (m: JsonRpc.Request) =>
    m.method === Method.Ping ? answerWith(m, answerAlone) : Effect.flatMap(
      attribution.attribute,
      ({ callers, ctx, now }) => {
        if (callers <= 1) {
          const answering = ctx === undefined
            ? answerWith(m, answerAlone)
            : ctx.questions === undefined
            ? inSpan(ctx, m.method, answerWith(m, answerAlone))
            : attribution.waiting(ctx, now, inSpan(ctx, m.method, answerWith(m, ctx.questions)))
          return Effect.asVoid(Effect.forkIn(answering, sessionScope))
        }
        // Roots are the client's, not any call's: nobody needs to be asked for them.
        if (m.method === Method.RootsList) return Effect.asVoid(Effect.forkIn(answerWith(m, answerAlone), sessionScope))
        const broker = options.unattributed
        const held: QuestionHandler = broker === undefined ? answerAlone : (q) => broker(name, q, callers)
        return Effect.zipRight(
          Effect.logWarning(
            `${name}: a ${m.method} arrived while calls of ${callers} callers were in flight; it names no call, so it ` +
              `was not routed to any of them (give this server "pool": {"scope": "session", "max": 4} so each caller has its own process)`
          ),
          Effect.asVoid(Effect.forkIn(answerWith(m, held), sessionScope))
        )
      }
    )

  return { answer, answerUntied, followed }
}
