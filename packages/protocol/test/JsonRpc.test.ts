import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as JsonRpc from "../src/JsonRpc.js"

const single = (text: string): JsonRpc.Parsed => {
  const frame = Either.getOrThrow(JsonRpc.decodeFrame(text))
  assert.strictEqual(frame._tag, "Single")
  if (frame._tag !== "Single") throw new Error("unreachable")
  return frame.parsed
}

const rejected = (text: string): JsonRpc.FrameError => {
  const r = JsonRpc.decodeFrame(text)
  if (Either.isRight(r)) throw new Error(`expected ${text} to be rejected`)
  return r.left
}

describe("JsonRpc.decodeFrame", () => {
  it("decodes a request and keeps unknown keys in raw", () => {
    const p = single(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"},"x-vendor":{"a":1}}`)
    assert.isTrue(JsonRpc.isRequest(p.message))
    assert.deepStrictEqual(p.message, { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "x" } })
    assert.deepStrictEqual(p.raw["x-vendor"], { a: 1 })
    assert.isFalse("x-vendor" in p.message)
  })

  it("decodes notifications, success and error responses", () => {
    const n = single(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
    assert.isTrue(JsonRpc.isNotification(n.message))
    assert.isFalse(JsonRpc.isRequest(n.message))

    const s = single(`{"jsonrpc":"2.0","id":"a","result":{"tools":[]}}`)
    assert.isTrue(JsonRpc.isResponse(s.message))
    assert.isTrue(JsonRpc.isSuccess(s.message))
    assert.strictEqual(JsonRpc.idOf(s.message), "a")

    const e = single(`{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"nope","data":[1]}}`)
    assert.isTrue(JsonRpc.isErrorResponse(e.message))
    assert.strictEqual(JsonRpc.idOf(e.message), undefined)

    const idless = single(`{"jsonrpc":"2.0","error":{"code":-32700,"message":"bad"}}`)
    assert.isTrue(JsonRpc.isErrorResponse(idless.message))
  })

  it("answers text that is not JSON with -32700", () => {
    const e = rejected(`{"jsonrpc":"2.0",`)
    assert.strictEqual(e.code, -32700)
    assert.match(e.reason, /not valid JSON/)
    assert.strictEqual(e.id, undefined)
  })

  const invalidCases: ReadonlyArray<readonly [string, RegExp]> = [
    [`"hello"`, /must be an object, got string/],
    [`null`, /must be an object, got null/],
    [`{"id":1,"method":"x"}`, /jsonrpc member missing/],
    [`{"jsonrpc":"1.0","id":1,"method":"x"}`, /jsonrpc must be "2.0"/],
    [`{"jsonrpc":"2.0","id":1,"method":5}`, /method must be a string/],
    [`{"jsonrpc":"2.0","id":true,"method":"x"}`, /id must be a string or a number/],
    [`{"jsonrpc":"2.0","id":null,"method":"x"}`, /id must be a string or a number/],
    [`{"jsonrpc":"2.0","id":1,"method":"x","params":[1,2]}`, /params must be an object, got an array/],
    [`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`, /both result and error/],
    [`{"jsonrpc":"2.0","id":1,"result":3}`, /result must be an object/],
    [`{"jsonrpc":"2.0","result":{}}`, /success response needs a string or number id/],
    [`{"jsonrpc":"2.0","id":1,"error":"boom"}`, /error must be an object/],
    [`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`, /error.code must be an integer/],
    [`{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, /error.message must be a string/],
    [`{"jsonrpc":"2.0","id":1}`, /no method, result or error/],
    [`[]`, /empty array/]
  ]
  for (const [text, why] of invalidCases) {
    it(`answers ${text} with -32600 and says why`, () => {
      const e = rejected(text)
      assert.strictEqual(e.code, -32600)
      assert.match(e.reason, why)
    })
  }

  it("keeps a readable id on an invalid request so the error can echo it", () => {
    const e = rejected(`{"jsonrpc":"2.0","id":"r-1","method":"x","params":"no"}`)
    assert.strictEqual(e.id, "r-1")
    assert.deepStrictEqual(JsonRpc.frameErrorResponse(e), {
      jsonrpc: "2.0",
      id: "r-1",
      error: { code: -32600, message: "Invalid Request: params must be an object, got string \"no\"" }
    })
  })

  it("decodes a batch element by element", () => {
    const r = Either.getOrThrow(
      JsonRpc.decodeFrame(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2},{"jsonrpc":"2.0","method":"n"}]`)
    )
    assert.strictEqual(r._tag, "Batch")
    if (r._tag !== "Batch") return
    assert.deepStrictEqual(r.elements.map(Either.isRight), [true, false, true])
    const bad = r.elements[1]
    assert.isTrue(bad !== undefined && Either.isLeft(bad) && bad.left.id === 2)
  })

  it.effect("is usable from Effect code: a FrameError fails the effect", () =>
    Effect.gen(function*() {
      const err = yield* Effect.flip(JsonRpc.decodeFrame("nope"))
      assert.strictEqual(err._tag, "FrameError")
      assert.strictEqual(err.code, -32700)
    }))
})

describe("JsonRpc.decodeUpstreamFrame", () => {
  const nested = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`
  const upstream = (text: string) => {
    const frame = Either.getOrThrow(JsonRpc.decodeUpstreamFrame(text))
    if (frame._tag !== "Single") throw new Error("expected a single message")
    return frame.parsed.message
  }

  it("passes a message within the bound as it is", () => {
    const m = upstream(`{"jsonrpc":"2.0","id":7,"result":{"a":${nested(JsonRpc.MaxUpstreamDepth - 4)}}}`)
    assert.isTrue("result" in m)
  })

  it("turns a response nested past the bound into an error for its own request, whatever its depth", () => {
    for (const levels of [JsonRpc.MaxUpstreamDepth, 5_000, 100_000]) {
      const m = upstream(`{"jsonrpc":"2.0","id":"r1","result":{"structuredContent":{"a":${nested(levels)}}}}`)
      assert.strictEqual(m.id, "r1")
      assert.isTrue("error" in m)
      if ("error" in m) {
        assert.strictEqual(m.error.code, -32603)
        assert.include(m.error.message, `deeper than ${JsonRpc.MaxUpstreamDepth} levels`)
      }
    }
  })

  it("refuses a request or notification nested past the bound as a frame error", () => {
    const r = JsonRpc.decodeUpstreamFrame(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":${nested(5_000)}}}`)
    assert.isTrue(Either.isLeft(r))
  })
})

describe("JsonRpc views", () => {
  it("keep params and result keys that Schema records cannot rebuild", () => {
    const p = single(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"__proto__":{"x":1},"a":2}}`)
    assert.isTrue(JsonRpc.isRequest(p.message))
    assert.deepStrictEqual(Object.keys(JsonRpc.isRequest(p.message) ? p.message.params ?? {} : {}), ["__proto__", "a"])
    const r = single(`{"jsonrpc":"2.0","id":1,"result":{"__proto__":1}}`)
    assert.isTrue(JsonRpc.isSuccess(r.message) && Object.keys(r.message.result).includes("__proto__"))
  })
})

describe("JsonRpc builders", () => {
  it("builds success and error responses", () => {
    assert.deepStrictEqual(JsonRpc.success(1, { ok: true }), { jsonrpc: "2.0", id: 1, result: { ok: true } })
    assert.deepStrictEqual(JsonRpc.failure(1, -32602, "bad", { field: "x" }), {
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32602, message: "bad", data: { field: "x" } }
    })
    assert.deepStrictEqual(JsonRpc.failure(undefined, -32700, "bad"), { jsonrpc: "2.0", error: { code: -32700, message: "bad" } })
    assert.deepStrictEqual(JsonRpc.failure(null, -32600, "bad"), { jsonrpc: "2.0", error: { code: -32600, message: "bad" } })
  })

  it("gives an error that names no request \"id\": null for stdio, and leaves a readable id alone", () => {
    const unread = JsonRpc.withNullId(JsonRpc.failure(undefined, -32700, "bad"))
    assert.strictEqual(JSON.stringify(unread), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`)
    assert.deepStrictEqual(JsonRpc.withNullId(JsonRpc.failure(7, -32600, "bad")), JsonRpc.failure(7, -32600, "bad"))
    // Still an error response by the envelope's own rules.
    assert.isTrue(Either.isRight(JsonRpc.decodeFrame(JSON.stringify(unread))))
  })

  it("builds requests and notifications without an empty params key", () => {
    assert.deepStrictEqual(JsonRpc.request("a", "ping"), { jsonrpc: "2.0", id: "a", method: "ping" })
    assert.deepStrictEqual(JsonRpc.notification("n", { x: 1 }), { jsonrpc: "2.0", method: "n", params: { x: 1 } })
  })
})

// Wire values are JSON: normalising through JSON once removes values JSON cannot carry (-0).
const asJson = <A>(a: A): A => JSON.parse(JSON.stringify(a))
const arbId = FastCheck.oneof(FastCheck.string(), FastCheck.integer())
const arbObject = FastCheck.dictionary(FastCheck.string(), FastCheck.jsonValue(), { maxKeys: 4 })
const arbParams = FastCheck.option(arbObject, { nil: undefined })
const arbMessage: FastCheck.Arbitrary<JsonRpc.Message> = FastCheck.oneof(
  FastCheck.tuple(arbId, FastCheck.string(), arbParams).map(([id, m, p]) => JsonRpc.request(id, m, p)),
  FastCheck.tuple(FastCheck.string(), arbParams).map(([m, p]) => JsonRpc.notification(m, p)),
  FastCheck.tuple(arbId, arbObject).map(([id, r]) => JsonRpc.success(id, r)),
  FastCheck.tuple(
    FastCheck.option(arbId, { nil: undefined }),
    FastCheck.integer(),
    FastCheck.string(),
    FastCheck.option(FastCheck.jsonValue(), { nil: undefined })
  )
    .map(([id, c, m, d]) => JsonRpc.failure(id, c, m, d))
).map(asJson)

describe("JsonRpc round trips", () => {
  it.prop("decode(encode(message)) is the message, as view and as raw", [arbMessage], ([m]) => {
    const p = single(JsonRpc.encodeFrame(m))
    assert.deepStrictEqual(p.message, m)
    assert.deepStrictEqual(p.raw, m)
  })

  it.prop("a batch round-trips element by element", [FastCheck.array(arbMessage, { minLength: 1, maxLength: 5 })], ([ms]) => {
    const frame = Either.getOrThrow(JsonRpc.decodeFrame(JsonRpc.encodeFrame(ms)))
    assert.strictEqual(frame._tag, "Batch")
    if (frame._tag !== "Batch") return
    assert.deepStrictEqual(frame.elements.map((e) => Either.getOrThrow(e).message), ms)
  })

  it.prop("any JSON value decodes to a frame or a -32600, never throws", [FastCheck.jsonValue()], ([v]) => {
    const r = JsonRpc.decodeFrame(JSON.stringify(v))
    if (Either.isLeft(r)) assert.strictEqual(r.left.code, -32600)
    else assert.oneOf(r.right._tag, ["Single", "Batch"])
  })
})
