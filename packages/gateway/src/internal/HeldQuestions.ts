/**
 * Questions nobody can be said to have caused (a shared stdio server asking while several callers'
 * calls are in flight): held under an id until someone answers it (`mcpx-fx elicit`, `/v1/elicit`)
 * or `questions.ttl` passes, when it is answered on the caller's behalf. Each one held is told on
 * the events stream, with what to do about it.
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import { type Question, QuestionRefused } from "@mcpx-fx/upstream/session/Questions"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"
import { type Bounds, type HeldQuestion, onBehalf, type PendingCallsService, type QuestionEvent } from "../PendingQuestions.js"

interface Held extends HeldQuestion {
  readonly question: Question
  readonly answer: Deferred.Deferred<JsonObject, QuestionRefused>
}

/** The held questions of one registry, publishing on its `events`; their expiries run in `scope`. */
export const make = (readBounds: Effect.Effect<Bounds>, events: PubSub.PubSub<QuestionEvent>, scope: Scope.Scope) =>
  Effect.sync(() => {
    const held = new Map<string, Held>()
    const at = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

    const expire = (question: Held, ttl: Duration.Duration) =>
      Effect.sleep(ttl).pipe(
        Effect.zipRight(Effect.suspend(() => {
          if (!held.delete(question.id)) return Effect.void
          return Effect.zipRight(
            Effect.flatMap(at, (when) => PubSub.publish(events, { type: "question.expired", server: question.server, at: when, id: question.id })),
            Deferred.complete(question.answer, onBehalf(question.question))
          )
        }))
      )

    const hold: PendingCallsService["hold"] = (server, question, callers) =>
      Effect.gen(function*() {
        const bounds = yield* readBounds
        // Past the bound a question is answered for its caller at once, as if nobody could be asked.
        if (held.size >= bounds.maxPending) return yield* onBehalf(question)
        const answer = yield* Deferred.make<JsonObject, QuestionRefused>()
        const entry: Held = {
          id: `q-${randomBytes(9).toString("base64url")}`,
          server,
          method: question.method,
          params: question.params,
          expiresAt: (yield* Clock.currentTimeMillis) + Duration.toMillis(bounds.ttl),
          question,
          answer
        }
        held.set(entry.id, entry)
        yield* PubSub.publish(events, {
          type: "question.unattributed",
          server,
          at: yield* at,
          id: entry.id,
          method: question.method,
          callers,
          hint: `${server} asked while calls of ${callers} callers were in flight on one process, so mcpx-fx cannot tell whose ` +
            `question it is; answer it with \`mcpx-fx elicit answer ${entry.id} '<json>'\`, or give the server ` +
            `"pool": {"scope": "session", "max": 4} so each caller has its own process`
        })
        const expiry = yield* Effect.forkIn(expire(entry, bounds.ttl), scope)
        return yield* Deferred.await(answer).pipe(
          Effect.ensuring(Effect.zipRight(Fiber.interrupt(expiry), Effect.sync(() => held.delete(entry.id))))
        )
      })

    const list: PendingCallsService["held"] = Effect.sync(() =>
      [...held.values()].map(({ expiresAt, id, method, params, server }) => ({ id, server, method, params, expiresAt }))
    )

    const answer: PendingCallsService["answerHeld"] = (id, given) =>
      Effect.suspend(() => {
        const question = held.get(id)
        if (question === undefined) return Effect.succeed(false)
        held.delete(id)
        return Effect.as(
          "result" in given
            ? Deferred.succeed(question.answer, given.result)
            : Deferred.fail(question.answer, new QuestionRefused({ code: ErrorCode.InvalidRequest, message: given.refusal })),
          true
        )
      })

    return { hold, list, answer }
  })
