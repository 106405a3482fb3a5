import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { RequestState } from "../src/RequestState.js"
import { errorOf, meta, req, resultOf, withServer } from "./support.js"

const modern = (params: JsonObject): JsonObject => ({ ...params, _meta: meta() })
const call = (params: JsonObject, id: number) => req("tools/call", modern(params), id)
const answers = { q1: { action: "accept", content: { name: "ann" } } }

/** The state an `ask` call hands out. */
const askState = (handle: (m: JsonRpc.Message) => Effect.Effect<JsonRpc.Response | undefined>, args?: JsonObject) =>
  Effect.map(
    handle(call(args === undefined ? { name: "ask" } : { name: "ask", arguments: args }, 1)),
    (r) => String(resultOf(r).requestState)
  )

describe("MRTR requestState", () => {
  it.effect("2026-07-28/mrtr/requestState tampered is refused", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const state = yield* askState(t.handle)
        const tampered = `${state.slice(0, 8)}${state[8] === "x" ? "y" : "x"}${state.slice(9)}`
        const e = errorOf(yield* t.handle(call({ name: "ask", inputResponses: answers, requestState: tampered }, 2)))
        assert.strictEqual(e.code, -32602)
        assert.deepStrictEqual(e.data, { reason: "tampered" })
        assert.include(e.message, "signature")
        // Refused before anything reached the Backend.
        assert.strictEqual(t.received.length, 1)
      })
    ))

  it.effect("2026-07-28/mrtr/requestState expired is refused", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const state = yield* askState(t.handle)
        yield* TestClock.adjust("10 minutes")
        const e = errorOf(yield* t.handle(call({ name: "ask", inputResponses: answers, requestState: state }, 2)))
        assert.strictEqual(e.code, -32602)
        assert.deepStrictEqual(e.data, { reason: "expired" })
        assert.strictEqual(t.received.length, 1)
      })
    ))

  it.effect("2026-07-28/mrtr/requestState replayed on other arguments or another method is refused", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const state = yield* askState(t.handle, { topic: "a" })
        const args = errorOf(yield* t.handle(call({ name: "ask", arguments: { topic: "b" }, inputResponses: answers, requestState: state }, 2)))
        assert.strictEqual(args.code, -32602)
        assert.deepStrictEqual(args.data, { reason: "other-params" })
        const tool = errorOf(yield* t.handle(call({ name: "echo", arguments: { topic: "a" }, requestState: state }, 3)))
        assert.deepStrictEqual(tool.data, { reason: "other-params" })
        const prompt = errorOf(yield* t.handle(req("prompts/get", modern({ name: "ask", arguments: { topic: "a" }, requestState: state }), 4)))
        assert.strictEqual(prompt.code, -32602)
        assert.deepStrictEqual(prompt.data, { reason: "other-method" })
        assert.strictEqual(t.received.length, 1)
      })
    ))

  it.effect("2026-07-28/mrtr/requestState the retry may carry another _meta and still opens", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const state = yield* askState(t.handle)
        const params = { name: "ask", inputResponses: answers, requestState: state, _meta: meta({ "dev.mcpx/session": "other" }) }
        resultOf(yield* t.handle(req("tools/call", params, 2)))
        assert.deepStrictEqual(t.received[1]?.caller.retry, { inputResponses: answers, requestState: "opaque" })
        assert.strictEqual(t.received[1]?.caller.sessionId, "other")
      })
    ))

  // Every input_required mcpx-fx gives carries its state: answers without one answer no round of
  // its own, and a "retry" must not skip what a first call goes through (the tool filters).
  it.effect("2026-07-28/mrtr/answers without requestState make a first call: the Backend sees no retry", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(call({ name: "echo", inputResponses: answers }, 1)))
        assert.isUndefined(t.received[0]?.caller.retry)
        resultOf(yield* t.handle(call({ name: "echo", inputResponses: {} }, 2)))
        assert.isUndefined(t.received[1]?.caller.retry)
      })
    ))

  it.effect("2026-07-28/mrtr/requestState sealed under a provided key opens in the Server", () =>
    Effect.gen(function*() {
      const keyed = yield* RequestState
      const minted = yield* keyed.seal({
        method: "tools/call",
        params: { name: "ask" },
        inner: "upstream-own"
      })
      yield* withServer((t) =>
        Effect.gen(function*() {
          resultOf(yield* t.handle(call({ name: "ask", inputResponses: answers, requestState: minted }, 1)))
          assert.deepStrictEqual(t.received[0]?.caller.retry, { inputResponses: answers, requestState: "upstream-own" })
        }), { requestState: Layer.succeed(RequestState, keyed) })
    }).pipe(Effect.provide(RequestState.layerWithKey(new Uint8Array(32).fill(3)))))

  it.effect("2026-07-28/mrtr/a state whose upstream gave none hands the Backend no requestState", () =>
    Effect.gen(function*() {
      const keyed = yield* RequestState
      const minted = yield* keyed.seal({ method: "tools/call", params: { name: "echo" } })
      yield* withServer((t) =>
        Effect.gen(function*() {
          resultOf(yield* t.handle(call({ name: "echo", inputResponses: answers, requestState: minted }, 1)))
          assert.deepStrictEqual(t.received[0]?.caller.retry, { inputResponses: answers })
          resultOf(yield* t.handle(call({ name: "echo", requestState: minted }, 2)))
          assert.isUndefined(t.received[1]?.caller.retry)
        }), { requestState: Layer.succeed(RequestState, keyed) })
    }).pipe(Effect.provide(RequestState.layerWithKey(new Uint8Array(32).fill(4)))))
})
