/**
 * Pending calls across two instances of one fleet, in one test process: each its own registry
 * and NATS connection. The call is made on A by an upstream that asks; the retry reaches B, which
 * sends it to A, where the call waits.
 */
import { assert, describe, it } from "@effect/vitest"
import * as FleetPending from "@mcpx-fx/gateway/FleetPending"
import { PendingCalls } from "@mcpx-fx/gateway/PendingCalls"
import type { Move, PendingError } from "@mcpx-fx/gateway/PendingQuestions"
import * as QuestionFit from "@mcpx-fx/gateway/QuestionFit"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import { Fleet } from "@mcpx-fx/server/Fleet"
import type { Question, QuestionHandler } from "@mcpx-fx/upstream/session/Questions"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { fleetName, instance } from "./support/Nats.js"

const bounds = { ttl: Duration.minutes(10), maxRounds: 3, maxPending: 8, maxQuestions: 32, gather: Duration.millis(5) }

/** One gateway instance's registry, on its own connection, open for `scope`. */
const registry = (name: string, scope: Scope.Scope) =>
  Effect.gen(function*() {
    const fleet = yield* instance(name, scope)
    const context = yield* Layer.buildWithScope(Layer.provide(FleetPending.layerWith(bounds), Layer.succeed(Fleet, fleet)), scope)
    return Context.get(context, PendingCalls)
  })

const form = (field: string): Question => ({
  method: "elicitation/create",
  params: { message: `your ${field}?`, requestedSchema: { type: "object", properties: { [field]: { type: "string" } }, required: [field] } }
})
const text = (value: unknown): JsonObject => ({ content: [{ type: "text", text: JSON.stringify(value) }] })
const everything = QuestionFit.asker({ elicitation: {}, sampling: {}, roots: {} })

/** An upstream call that asks two questions in turn, then answers what it was told. */
const twoRounds = (ask: QuestionHandler) =>
  Effect.orDie(Effect.gen(function*() {
    const name = yield* ask(form("name"))
    const city = yield* ask(form("city"))
    return text([name, city])
  }))

const asking = (move: Move) => {
  assert.strictEqual(move._tag, "Asking", JSON.stringify(move))
  return move as Extract<Move, { readonly _tag: "Asking" }>
}
const refused = (e: PendingError) => {
  assert.strictEqual(e._tag, "PendingCallRefused", JSON.stringify(e))
  return e as Extract<PendingError, { readonly _tag: "PendingCallRefused" }>
}

describe("FleetPending", () => {
  it.scopedLive("a retry that reaches another instance is answered by the call on the instance holding it", () =>
    Effect.gen(function*() {
      const name = fleetName()
      const scope = yield* Effect.scope
      const a = yield* registry(name, scope)
      const b = yield* registry(name, scope)
      const first = asking(yield* a.begin("srv__ask", everything, twoRounds))
      assert.isTrue(first.handle.startsWith(`mcpx-pending:${a.instance}:`))
      assert.notStrictEqual(a.instance, b.instance)
      // Round 1 answered through B, round 2 through B again: each time A's call moves.
      const second = asking(yield* b.resume({ handle: first.handle }, { [first.questions[0]!.key]: { action: "accept", content: { name: "Ada" } } }))
      assert.strictEqual(second.round, 2)
      assert.isTrue(second.handle.startsWith(`mcpx-pending:${a.instance}:`))
      // A round already answered is refused there, and the refusal comes back as it was.
      const used = refused(yield* Effect.flip(b.resume({ handle: first.handle }, {})))
      assert.strictEqual(used.reason, "used")
      const done = yield* b.resume({ handle: second.handle }, { [second.questions[0]!.key]: { action: "accept", content: { city: "Paris" } } })
      assert.strictEqual(done._tag, "Complete")
      assert.deepStrictEqual(
        done._tag === "Complete" ? done.result : undefined,
        text([
          { action: "accept", content: { name: "Ada" } },
          { action: "accept", content: { city: "Paris" } }
        ])
      )
      assert.deepStrictEqual(yield* a.list, [])
    }))

  it.scopedLive("answers sent through another instance without waiting go to the call too", () =>
    Effect.gen(function*() {
      const name = fleetName()
      const scope = yield* Effect.scope
      const a = yield* registry(name, scope)
      const b = yield* registry(name, scope)
      const first = asking(yield* a.begin("srv__ask", everything, twoRounds))
      yield* b.answer({ handle: first.handle }, { [first.questions[0]!.key]: { action: "accept", content: { name: "Ada" } } })
      // The call went on at A, to its second question.
      const next = asking(yield* a.poll(first.id, "5 seconds"))
      assert.strictEqual(next.round, 2)
      // An answer that does not fit its question is refused at A and said so at B.
      const bad = refused(yield* Effect.flip(b.answer({ handle: next.handle }, { [next.questions[0]!.key]: { action: "accept", content: { city: 7 } } })))
      assert.strictEqual(bad.reason, "invalid-answer")
    }))

  it.scopedLive("when the instance holding the call has stopped, the retry is refused at once, saying to call again", () =>
    Effect.gen(function*() {
      const name = fleetName()
      const scope = yield* Effect.scope
      const aScope = yield* Scope.make()
      const a = yield* registry(name, aScope)
      const b = yield* registry(name, scope)
      const first = asking(yield* a.begin("srv__ask", everything, twoRounds))
      yield* Scope.close(aScope, Exit.void)
      const e = refused(yield* Effect.flip(b.resume({ handle: first.handle }, { [first.questions[0]!.key]: { action: "decline" } })))
      assert.strictEqual(e.reason, "other-instance")
      assert.strictEqual(e.detail, FleetPending.GoneDetail)
      // B's own calls are untouched by it.
      const own = asking(yield* b.begin("srv__ask", everything, twoRounds))
      assert.isTrue(own.handle.startsWith(`mcpx-pending:${b.instance}:`))
    }))
})
