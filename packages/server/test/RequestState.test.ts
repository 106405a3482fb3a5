import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { canonicalJson, paramsDigest, RequestState } from "../src/RequestState.js"

const key = new Uint8Array(32).fill(7)
const otherKey = new Uint8Array(32).fill(8)
const call = { method: "tools/call", params: { name: "alpha__ask_name", arguments: { city: "Oslo", n: 1 } } }

/** Flips one character of the token's first (payload) part. */
const alterPayload = (token: string): string => {
  const at = 5
  const c = token[at] === "A" ? "B" : "A"
  return token.slice(0, at) + c + token.slice(at + 1)
}

describe("RequestState", () => {
  it.effect("2026-07-28/mrtr/requestState opens back to the upstream's own state and routing", () =>
    Effect.gen(function*() {
      const state = yield* RequestState
      const token = yield* state.seal({ ...call, inner: "upstream-state", target: "alpha" })
      assert.notInclude(token, "upstream-state")
      const opened = yield* state.open(token, call)
      assert.strictEqual(opened.inner, "upstream-state")
      assert.strictEqual(opened.target, "alpha")
      assert.strictEqual(opened.expiresAt, 10 * 60_000)
      const bare = yield* state.open(yield* state.seal(call), call)
      assert.isUndefined(bare.inner)
      assert.isUndefined(bare.target)
    }).pipe(Effect.provide(RequestState.layerWithKey(key))))

  it.effect("2026-07-28/mrtr/requestState retry may change _meta and add inputResponses", () =>
    Effect.gen(function*() {
      const state = yield* RequestState
      const token = yield* state.seal({ ...call, params: { ...call.params, _meta: { "dev.mcpx/session": "a" } } })
      const retry = {
        method: call.method,
        params: {
          arguments: { n: 1, city: "Oslo" },
          name: "alpha__ask_name",
          inputResponses: { name: { action: "accept", content: { name: "Ann" } } },
          requestState: token,
          _meta: { "dev.mcpx/session": "b", progressToken: 3 }
        }
      }
      assert.strictEqual((yield* state.open(token, retry)).expiresAt, 10 * 60_000)
    }).pipe(Effect.provide(RequestState.layerWithKey(key))))

  it.effect("2026-07-28/mrtr/requestState tampered is refused", () =>
    Effect.gen(function*() {
      const state = yield* RequestState
      const token = yield* state.seal({ ...call, inner: "s" })
      const altered = yield* Effect.flip(state.open(alterPayload(token), call))
      assert.strictEqual(altered.reason, "tampered")
      const resigned = yield* Effect.flip(state.open(`${token.split(".")[0]}.${"A".repeat(43)}`, call))
      assert.strictEqual(resigned.reason, "tampered")
      const lastChar = token.slice(-1) === "A" ? "B" : "A"
      assert.strictEqual((yield* Effect.flip(state.open(token.slice(0, -1) + lastChar, call))).reason, "tampered")
      assert.strictEqual((yield* Effect.flip(state.open("not-a-state", call))).reason, "malformed")
      assert.strictEqual((yield* Effect.flip(state.open("", call))).reason, "malformed")
      assert.include(altered.message, "signature")
    }).pipe(Effect.provide(RequestState.layerWithKey(key))))

  it.effect("2026-07-28/mrtr/requestState from another key is refused", () =>
    Effect.gen(function*() {
      const foreign = yield* Effect.provide(
        Effect.flatMap(RequestState, (s) => s.seal(call)),
        RequestState.layerWithKey(otherKey)
      )
      const e = yield* Effect.flip((yield* RequestState).open(foreign, call))
      assert.strictEqual(e.reason, "tampered")
    }).pipe(Effect.provide(RequestState.layerWithKey(key))))

  it.effect("2026-07-28/mrtr/requestState expires after its TTL", () =>
    Effect.gen(function*() {
      const state = yield* RequestState
      const token = yield* state.seal(call)
      yield* TestClock.adjust("29 seconds")
      assert.strictEqual((yield* state.open(token, call)).expiresAt, 30_000)
      yield* TestClock.adjust("1 second")
      const e = yield* Effect.flip(state.open(token, call))
      assert.strictEqual(e.reason, "expired")
      assert.include(e.message, "expired")
    }).pipe(Effect.provide(RequestState.layerWithKey(key, { ttl: "30 seconds" }))))

  it.effect("2026-07-28/mrtr/requestState replayed on another request is refused", () =>
    Effect.gen(function*() {
      const state = yield* RequestState
      const token = yield* state.seal(call)
      const method = yield* Effect.flip(state.open(token, { ...call, method: "prompts/get" }))
      assert.strictEqual(method.reason, "other-method")
      assert.include(method.message, "tools/call")
      const args = yield* Effect.flip(state.open(token, { ...call, params: { ...call.params, arguments: { city: "Bergen", n: 1 } } }))
      assert.strictEqual(args.reason, "other-params")
      const tool = yield* Effect.flip(state.open(token, { ...call, params: { ...call.params, name: "beta__ask_name" } }))
      assert.strictEqual(tool.reason, "other-params")
    }).pipe(Effect.provide(RequestState.layerWithKey(key))))

  it.effect("2026-07-28/mrtr/requestState the default layer mints a key per layer", () =>
    Effect.gen(function*() {
      const mint = Effect.flatMap(RequestState, (s) => s.seal(call))
      const open = (token: string) => Effect.flatMap(RequestState, (s) => s.open(token, call))
      const first = yield* Effect.provide(mint, RequestState.layer)
      const same = yield* Effect.provide(Effect.flatMap(mint, open), RequestState.layer)
      assert.isUndefined(same.inner)
      const e = yield* Effect.flip(Effect.provide(open(first), RequestState.layer))
      assert.strictEqual(e.reason, "tampered")
    }))

  it("2026-07-28/mrtr/requestState digest ignores key order and the unbound params only", () => {
    assert.strictEqual(canonicalJson({ b: [1, { d: 2, c: null }], a: "x" }), `{"a":"x","b":[1,{"c":null,"d":2}]}`)
    const digest = paramsDigest({ name: "t", arguments: { a: 1, b: 2 } })
    assert.strictEqual(paramsDigest({ arguments: { b: 2, a: 1 }, name: "t", _meta: { x: 1 }, requestState: "s", inputResponses: {} }), digest)
    assert.notStrictEqual(paramsDigest({ name: "t", arguments: { a: 1, b: 3 } }), digest)
    assert.notStrictEqual(paramsDigest({ name: "t" }), paramsDigest({ name: "t", arguments: {} }))
  })
})
