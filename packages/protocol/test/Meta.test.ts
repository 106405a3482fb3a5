import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Meta from "../src/Meta.js"

const V = "io.modelcontextprotocol/protocolVersion"
const C = "io.modelcontextprotocol/clientCapabilities"
const I = "io.modelcontextprotocol/clientInfo"
const L = "io.modelcontextprotocol/logLevel"

const good = { [V]: "2026-07-28", [C]: {}, [I]: { name: "ExampleClient", version: "1.0.0" } }

const invalidOf = (params: unknown): Meta.InvalidRequestMeta => {
  const r = Meta.validateRequestMeta(params)
  if (Either.isRight(r) || r.left._tag !== "InvalidRequestMeta") throw new Error("expected InvalidRequestMeta")
  return r.left
}

describe("Meta keys", () => {
  it("spells the reserved keys as the spec does", () => {
    assert.strictEqual(Meta.ProtocolVersionKey, V)
    assert.strictEqual(Meta.ClientCapabilitiesKey, C)
    assert.strictEqual(Meta.ClientInfoKey, I)
    assert.strictEqual(Meta.LogLevelKey, L)
    assert.strictEqual(Meta.ProgressTokenKey, "progressToken")
    assert.strictEqual(Meta.SubscriptionIdKey, "io.modelcontextprotocol/subscriptionId")
    assert.strictEqual(Meta.ServerInfoKey, "io.modelcontextprotocol/serverInfo")
  })

  it("recognises reserved prefixes by their second label", () => {
    assert.isTrue(Meta.isReservedKey("io.modelcontextprotocol/x"))
    assert.isTrue(Meta.isReservedKey("dev.mcp/x"))
    assert.isTrue(Meta.isReservedKey("com.mcp.tools/x"))
    assert.isFalse(Meta.isReservedKey("com.example.mcp/x"))
    assert.isFalse(Meta.isReservedKey("progressToken"))
    assert.isFalse(Meta.isReservedKey("ai.opencode/sessionID"))
  })
})

describe("Meta.copyUnreserved and Meta.requestMeta", () => {
  it("copies the caller's unreserved keys in order, a __proto__ key as a key, and counts them", () => {
    const meta = JSON.parse(`{"${V}":"2025-01-01","progressToken":7,"__proto__":{"polluted":true},"ai.opencode/sessionID":"s1","${L}":"debug"}`) as Record<
      string,
      unknown
    >
    const into: Record<string, unknown> = { first: 1 }
    assert.strictEqual(Meta.copyUnreserved(meta, into), 3)
    assert.deepStrictEqual(Object.keys(into), ["first", "progressToken", "__proto__", "ai.opencode/sessionID"])
    assert.strictEqual(Object.getPrototypeOf(into), Object.prototype)
    assert.strictEqual(JSON.stringify(into), `{"first":1,"progressToken":7,"__proto__":{"polluted":true},"ai.opencode/sessionID":"s1"}`)
  })

  it("puts the envelope's fields after what is there, leaving out the optional ones not given", () => {
    const into: Record<string, unknown> = { progressToken: 7 }
    Meta.putRequestMeta(into, { protocolVersion: "2026-07-28", clientCapabilities: {}, clientInfo: undefined, logLevel: "info" })
    assert.deepStrictEqual(Object.keys(into), ["progressToken", V, C, L])
    assert.deepStrictEqual(Meta.requestMeta({ protocolVersion: "2026-07-28", clientCapabilities: { sampling: {} } }), {
      [V]: "2026-07-28",
      [C]: { sampling: {} }
    })
  })
})

describe("Meta.validateRequestMeta", () => {
  it("accepts a complete envelope and keeps unknown keys", () => {
    const r = Either.getOrThrow(Meta.validateRequestMeta({ _meta: { ...good, "ai.opencode/sessionID": "s1", progressToken: 3 } }))
    assert.strictEqual(r[V], "2026-07-28")
    assert.strictEqual(r["ai.opencode/sessionID"], "s1")
    assert.strictEqual(r.progressToken, 3)
  })

  it("serves a request without clientInfo (it is a SHOULD)", () => {
    assert.isTrue(Either.isRight(Meta.validateRequestMeta({ _meta: { [V]: "2026-07-28", [C]: {} } })))
  })

  it("tolerates modern capabilities with keys it does not define (roots.listChanged)", () => {
    assert.isTrue(
      Either.isRight(Meta.validateRequestMeta({ _meta: { [V]: "2026-07-28", [C]: { sampling: {}, elicitation: {}, roots: { listChanged: true } } } }))
    )
  })

  it("names a missing _meta", () => {
    const e = invalidOf({})
    assert.deepStrictEqual(e.problems.map((p) => [p.field, p.problem]), [["_meta", "missing"]])
    assert.deepStrictEqual(Meta.metaErrorObject(e).data, { missing: ["_meta"] })
    assert.strictEqual(Meta.metaErrorObject(e).code, -32602)
  })

  it("names a missing protocol version", () => {
    const e = invalidOf({ _meta: { [C]: {} } })
    assert.deepStrictEqual(Meta.metaErrorObject(e).data, { missing: [V] })
    assert.include(Meta.metaErrorObject(e).message, V)
  })

  it("names missing client capabilities", () => {
    const e = invalidOf({ _meta: { [V]: "2026-07-28", [I]: good[I] } })
    assert.deepStrictEqual(Meta.metaErrorObject(e).data, { missing: [C] })
  })

  it("reports every problem at once, missing and invalid", () => {
    const e = invalidOf({ _meta: { [V]: 2026, [I]: { name: "x" }, [L]: "loud" } })
    const data = Meta.metaErrorObject(e).data as { missing: Array<string>; invalid: Array<{ field: string }> }
    assert.deepStrictEqual(data.missing, [C])
    assert.deepStrictEqual(data.invalid.map((i) => i.field), [V, I, L])
  })

  it("rejects malformed capabilities and progress tokens", () => {
    assert.deepStrictEqual(invalidOf({ _meta: { [V]: "2026-07-28", [C]: [] } }).problems.map((p) => p.field), [C])
    assert.deepStrictEqual(invalidOf({ _meta: { [V]: "2026-07-28", [C]: { elicitation: true } } }).problems.map((p) => p.field), [C])
    assert.deepStrictEqual(
      invalidOf({ _meta: { [V]: "2026-07-28", [C]: {}, progressToken: { t: 1 } } }).problems.map((p) => p.field),
      ["progressToken"]
    )
    assert.deepStrictEqual(invalidOf({ _meta: "x" }).problems.map((p) => [p.field, p.problem]), [["_meta", "invalid"]])
  })

  it("answers an unsupported version with -32022 {supported, requested}", () => {
    const r = Meta.validateRequestMeta({ _meta: { [V]: "v999.0.0", [C]: {} } })
    if (Either.isRight(r) || r.left._tag !== "UnsupportedProtocolVersion") throw new Error("expected -32022")
    assert.deepStrictEqual(Meta.metaErrorObject(r.left), {
      code: -32022,
      message: "Unsupported protocol version: v999.0.0",
      data: { supported: ["2026-07-28"], requested: "v999.0.0" }
    })
  })

  it("builds the error response, echoing the request id", () => {
    const r = Meta.validateRequestMeta({})
    if (Either.isRight(r)) throw new Error("expected a failure")
    assert.deepStrictEqual(Meta.metaErrorResponse(9, r.left), {
      jsonrpc: "2.0",
      id: 9,
      error: { code: -32602, message: "Invalid params: params._meta is missing", data: { missing: ["_meta"] } }
    })
  })

  it("checks the version against the list it is given", () => {
    assert.isTrue(Either.isLeft(Meta.validateRequestMeta({ _meta: good }, ["2027-01-01"])))
    assert.isTrue(Either.isRight(Meta.checkVersion("2027-01-01", ["2026-07-28", "2027-01-01"])))
  })

  it("treats any protocolVersion key as a modern claim, even a malformed one", () => {
    assert.isTrue(Meta.hasVersionClaim({ _meta: { [V]: 5 } }))
    assert.isFalse(Meta.hasVersionClaim({ _meta: { progressToken: 1 } }))
    assert.isFalse(Meta.hasVersionClaim(undefined))
  })

  it("builds a request envelope that validates", () => {
    const meta = Meta.requestMeta({ protocolVersion: "2026-07-28", clientCapabilities: { roots: {} }, clientInfo: { name: "mcpx-fx", version: "0" } })
    assert.deepStrictEqual(meta, { [V]: "2026-07-28", [C]: { roots: {} }, [I]: { name: "mcpx-fx", version: "0" } })
    assert.isTrue(Either.isRight(Meta.validateRequestMeta({ _meta: meta })))
  })
})
