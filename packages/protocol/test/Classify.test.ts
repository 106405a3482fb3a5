import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Classify from "../src/Classify.js"
import type * as HeaderCodec from "../src/HeaderCodec.js"
import * as HttpStatus from "../src/HttpStatus.js"
import * as JsonRpc from "../src/JsonRpc.js"

const V = "io.modelcontextprotocol/protocolVersion"
const C = "io.modelcontextprotocol/clientCapabilities"
const meta = (version: unknown = "2026-07-28") => ({ [V]: version, [C]: {}, "io.modelcontextprotocol/clientInfo": { name: "c", version: "1" } })

const frame = (body: unknown): JsonRpc.Frame => Either.getOrThrow(JsonRpc.decodeFrame(JSON.stringify(body)))
const req = (method: string, params?: Record<string, unknown>, id: JsonRpc.RequestId = 1) =>
  params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }
const modernHeaders = (method: string, extra: Record<string, string> = {}): HeaderCodec.Headers => ({
  "MCP-Protocol-Version": "2026-07-28",
  "Mcp-Method": method,
  ...extra
})
const classify = (body: unknown, headers: HeaderCodec.Headers = {}, options?: Classify.ClassifyOptions) => Classify.classify(frame(body), headers, options)

const rejected = (c: Classify.Classification): Classify.Rejected => {
  if (c._tag !== "Rejected") throw new Error(`expected a rejection, got ${JSON.stringify(c)}`)
  return c
}

describe("Classify: modern requests", () => {
  it("serves a complete modern request as modern, with its validated _meta", () => {
    const c = classify(req("tools/list", { _meta: meta() }), modernHeaders("tools/list"))
    assert.strictEqual(c._tag, "Modern")
    if (c._tag !== "Modern") return
    assert.strictEqual(c.revision, "2026-07-28")
    assert.deepStrictEqual(c.meta?.[C], {})
  })

  it("checks Mcp-Name for the methods that mirror it", () => {
    const ok = classify(req("tools/call", { name: "get_weather", _meta: meta() }), modernHeaders("tools/call", { "Mcp-Name": "get_weather" }))
    assert.strictEqual(ok._tag, "Modern")
    const bad = rejected(classify(req("tools/call", { name: "get_weather", _meta: meta() }), modernHeaders("tools/call", { "Mcp-Name": "other" })))
    assert.strictEqual(bad.error.code, -32020)
    const missing = rejected(classify(req("tools/call", { name: "get_weather", _meta: meta() }), modernHeaders("tools/call")))
    assert.strictEqual(missing.error.code, -32020)
  })

  it("answers a modern body without MCP-Protocol-Version with -32020", () => {
    const r = rejected(classify(req("tools/list", { _meta: meta() }), { "Mcp-Method": "tools/list" }))
    assert.strictEqual(r.error.code, -32020)
    assert.strictEqual(r.id, 1)
  })

  it("answers a malformed envelope with -32602, never as legacy", () => {
    const noCaps = rejected(classify(req("server/discover", { _meta: { [V]: "2026-07-28" } }, 104), modernHeaders("server/discover")))
    assert.strictEqual(noCaps.error.code, -32602)
    assert.strictEqual(noCaps.id, 104)
    assert.deepStrictEqual(noCaps.error.data, { missing: [C] })
    const badVersion = rejected(classify(req("tools/list", { _meta: { [V]: 2026, [C]: {} } }), modernHeaders("tools/list")))
    assert.strictEqual(badVersion.error.code, -32602)
    // Without the header it is still refused (header first), not served as legacy.
    assert.strictEqual(classify(req("tools/list", { _meta: { [V]: 2026, [C]: {} } }))._tag, "Rejected")
  })

  it("does not require clientInfo", () => {
    const c = classify(req("server/discover", { _meta: { [V]: "2026-07-28", [C]: {} } }), modernHeaders("server/discover"))
    assert.strictEqual(c._tag, "Modern")
  })

  it("answers a disagreeing Mcp-Method with -32020", () => {
    const r = rejected(classify(req("tools/list", { _meta: meta() }), modernHeaders("TOOLS/LIST")))
    assert.strictEqual(r.error.code, -32020)
    assert.deepStrictEqual(r.error.data, { header: "Mcp-Method", reason: "Mcp-Method header value 'TOOLS/LIST' does not match body value 'tools/list'" })
  })

  it("turns a rejection into an error response with HTTP 400", () => {
    const r = rejected(classify(req("server/discover", {}, 5), modernHeaders("server/discover")))
    const response = Classify.rejectionResponse(r)
    assert.strictEqual(response.id, 5)
    assert.strictEqual(response.error.code, -32602)
    assert.strictEqual(HttpStatus.modernStatus(response), 400)
  })

  it("answers a version it does not serve with -32022 listing what it does", () => {
    const r = rejected(classify(req("tools/list", { _meta: meta() }), modernHeaders("tools/list"), { modern: [] }))
    assert.deepStrictEqual(r.error.data, { supported: [], requested: "2026-07-28" })
  })
})

describe("Classify: the conformance order (digest §3.8)", () => {
  it("header 2026-07-28 and no _meta: -32602 and HTTP 400, not -32020", () => {
    const r = rejected(classify(req("server/discover", {}, 101), modernHeaders("server/discover")))
    assert.strictEqual(r.error.code, -32602)
    assert.strictEqual(r.id, 101)
    assert.deepStrictEqual(r.error.data, { missing: ["_meta"] })
  })

  it("header 2026-07-28 and _meta without protocolVersion: -32602", () => {
    const r = rejected(classify(req("server/discover", { _meta: { [C]: {} } }, 102), modernHeaders("server/discover")))
    assert.strictEqual(r.error.code, -32602)
    assert.deepStrictEqual(r.error.data, { missing: [V] })
  })

  it("header 2026-07-28 and _meta without clientCapabilities: -32602", () => {
    const r = rejected(classify(req("server/discover", { _meta: { [V]: "2026-07-28" } }), modernHeaders("server/discover")))
    assert.strictEqual(r.error.code, -32602)
  })

  it("header 2026-07-28 and body v999.0.0: -32020 (header/body before version support)", () => {
    const r = rejected(classify(req("server/discover", { _meta: meta("v999.0.0") }), modernHeaders("server/discover")))
    assert.strictEqual(r.error.code, -32020)
  })

  it("header v999.0.0 and body v999.0.0: -32022 echoing the requested version", () => {
    const r = rejected(
      classify(req("server/discover", { _meta: meta("v999.0.0") }, 7), modernHeaders("server/discover", { "MCP-Protocol-Version": "v999.0.0" }))
    )
    assert.strictEqual(r.error.code, -32022)
    assert.strictEqual(r.id, 7)
    assert.deepStrictEqual(r.error.data, { supported: ["2026-07-28"], requested: "v999.0.0" })
  })

  for (const method of ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "unknown/method"]) {
    it(`${method} with a modern envelope and headers is modern (the server answers -32601)`, () => {
      const c = classify(req(method, { _meta: meta() }), modernHeaders(method))
      assert.strictEqual(c._tag, "Modern")
    })
  }
})

describe("Classify: legacy requests", () => {
  it("initialize without a modern envelope is legacy, whatever the header says", () => {
    const params = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "c", version: "1" } }
    assert.deepStrictEqual(classify(req("initialize", params)), { _tag: "Legacy", revision: undefined })
    assert.deepStrictEqual(classify(req("initialize", params), { "MCP-Protocol-Version": "2026-07-28" }), { _tag: "Legacy", revision: undefined })
  })

  it("a sessionless body without _meta and with a legacy header is legacy at that revision", () => {
    assert.deepStrictEqual(classify(req("tools/list"), { "MCP-Protocol-Version": "2025-06-18" }), { _tag: "Legacy", revision: "2025-06-18" })
  })

  it("in a session the negotiated revision governs, even over a supported header", () => {
    assert.deepStrictEqual(classify(req("tools/list"), { "MCP-Protocol-Version": "2025-06-18", "Mcp-Session-Id": "s" }), {
      _tag: "Legacy",
      revision: undefined
    })
    assert.strictEqual(rejected(classify(req("tools/list"), { "MCP-Protocol-Version": "2099-13-01x", "Mcp-Session-Id": "s" })).error.code, -32022)
  })

  it("no header: 2025-03-26 without a session, the session's revision with one", () => {
    assert.deepStrictEqual(classify(req("tools/list")), { _tag: "Legacy", revision: "2025-03-26" })
    assert.deepStrictEqual(classify(req("tools/list"), { "mcp-session-id": "abc" }), { _tag: "Legacy", revision: undefined })
  })

  it("a _meta without a protocolVersion claim (progressToken only) is no modern claim", () => {
    assert.strictEqual(classify(req("tools/call", { name: "x", _meta: { progressToken: 1 } }))._tag, "Legacy")
  })

  it("a modern header on a body without _meta is -32602, for unknown future dates too", () => {
    assert.strictEqual(rejected(classify(req("tools/list"), { "MCP-Protocol-Version": "2026-07-28" })).error.code, -32602)
    assert.strictEqual(rejected(classify(req("tools/list"), { "MCP-Protocol-Version": "2027-01-01" })).error.code, -32602)
  })

  it("a header naming no revision it serves is -32022 with the legacy list", () => {
    const r = rejected(classify(req("tools/list", undefined, "x"), { "MCP-Protocol-Version": "garbage" }))
    assert.strictEqual(r.error.code, -32022)
    assert.strictEqual(r.id, "x")
    assert.deepStrictEqual(r.error.data, { supported: ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"], requested: "garbage" })
    const narrowed = rejected(classify(req("tools/list"), { "MCP-Protocol-Version": "2025-03-26" }, { legacy: ["2025-11-25"] }))
    assert.deepStrictEqual(narrowed.error.data, { supported: ["2025-11-25"], requested: "2025-03-26" })
  })
})

describe("Classify: notifications and responses", () => {
  const note = (method: string, params?: Record<string, unknown>) => (params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params })

  it("a notification with a modern header is modern and needs no _meta", () => {
    const c = classify(note("notifications/cancelled", { requestId: 1 }), { "MCP-Protocol-Version": "2026-07-28" })
    assert.deepStrictEqual(c, { _tag: "Modern", revision: "2026-07-28", meta: undefined })
  })

  it("a modern notification's headers must still agree", () => {
    const r = rejected(classify(note("notifications/cancelled", { requestId: 1 }), { "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "x" }))
    assert.strictEqual(r.error.code, -32020)
    assert.strictEqual(r.id, undefined)
  })

  it("a legacy notification is legacy", () => {
    assert.deepStrictEqual(classify(note("notifications/initialized"), { "Mcp-Session-Id": "s" }), { _tag: "Legacy", revision: undefined })
  })

  it("a response is legacy, and refused under a modern header", () => {
    const resp = { jsonrpc: "2.0", id: 9, result: { roots: [] } }
    assert.deepStrictEqual(classify(resp, { "MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "s" }), { _tag: "Legacy", revision: undefined })
    const r = rejected(classify(resp, { "MCP-Protocol-Version": "2026-07-28" }))
    assert.strictEqual(r.error.code, -32600)
  })
})

describe("Classify: batches", () => {
  it("a batch of legacy messages is legacy", () => {
    assert.deepStrictEqual(classify([req("tools/list", undefined, 1), req("ping", undefined, 2)]), { _tag: "Legacy", revision: "2025-03-26" })
  })

  it("a batch with a modern element, or under a modern header, is -32600", () => {
    assert.strictEqual(rejected(classify([req("tools/list", undefined, 1), req("tools/list", { _meta: meta() }, 2)])).error.code, -32600)
    const r = rejected(classify([req("tools/list", undefined, 1)], { "MCP-Protocol-Version": "2026-07-28" }))
    assert.strictEqual(r.error.code, -32600)
    assert.strictEqual(r.id, undefined)
  })

  it("leaves invalid batch elements to be answered one by one", () => {
    assert.strictEqual(classify([req("ping"), { jsonrpc: "2.0", id: 2 }])._tag, "Legacy")
  })
})

// Inputs drawn from the values that matter to the rules, plus arbitrary noise.
const arbVersion = FastCheck.oneof(
  FastCheck.constantFrom("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "v999.0.0", "2027-01-01"),
  FastCheck.string()
)
const arbMeta = FastCheck.oneof(
  FastCheck.constant(undefined),
  FastCheck.constant({}),
  FastCheck.record({ [V]: FastCheck.oneof(arbVersion, FastCheck.integer()) }),
  FastCheck.record({ [V]: arbVersion, [C]: FastCheck.constantFrom({}, { sampling: {} }, [], "x") }),
  FastCheck.record({ progressToken: FastCheck.integer() })
)
const arbMethod = FastCheck.oneof(
  FastCheck.constantFrom("initialize", "tools/call", "tools/list", "server/discover", "ping", "notifications/cancelled"),
  FastCheck.string()
)
const arbMessage: FastCheck.Arbitrary<JsonRpc.Message> = FastCheck.tuple(
  FastCheck.constantFrom("request", "notification", "response"),
  arbMethod,
  arbMeta,
  FastCheck.option(FastCheck.string(), { nil: undefined }),
  FastCheck.oneof(FastCheck.string(), FastCheck.integer())
).map(([kind, method, m, name, id]) => {
  const params: Record<string, unknown> = {}
  if (m !== undefined) params._meta = m
  if (name !== undefined) params.name = name
  if (kind === "response") return JsonRpc.success(id, {})
  return kind === "request" ? JsonRpc.request(id, method, params) : JsonRpc.notification(method, params)
})
const arbFrame: FastCheck.Arbitrary<JsonRpc.Frame> = FastCheck.oneof(
  arbMessage.map((m) => frame(m)),
  FastCheck.array(arbMessage, { minLength: 1, maxLength: 4 }).map((ms) => frame(ms))
)
const arbHeaders: FastCheck.Arbitrary<HeaderCodec.Headers> = FastCheck.record(
  {
    "MCP-Protocol-Version": arbVersion,
    "Mcp-Method": arbMethod,
    "Mcp-Name": FastCheck.string(),
    "Mcp-Session-Id": FastCheck.constant("s")
  },
  { requiredKeys: [] }
)

describe("Classify: totality", () => {
  it.prop("every POST classifies to exactly one outcome, deterministically", [arbFrame, arbHeaders], ([f, h]) => {
    const c = Classify.classify(f, h)
    assert.oneOf(c._tag, ["Modern", "Legacy", "Rejected"])
    assert.deepStrictEqual(Classify.classify(f, h), c)
    if (c._tag === "Rejected") {
      assert.oneOf(c.error.code, [-32600, -32602, -32020, -32022])
      if (f._tag === "Single" && c.id !== undefined) assert.strictEqual(c.id, JsonRpc.idOf(f.parsed.message))
    }
    if (c._tag === "Modern") assert.strictEqual(f._tag, "Single")
  })

  it.prop("a body with no modern claim and no version header is always legacy", [arbFrame], ([f]) => {
    const messages = f._tag === "Single" ? [f.parsed.message] : f.elements.flatMap((e) => (Either.isRight(e) ? [e.right.message] : []))
    const claims = messages.some((m) =>
      !JsonRpc.isResponse(m) && m.params?._meta !== undefined && typeof m.params._meta === "object" && m.params._meta !== null && V in m.params._meta
    )
    const c = Classify.classify(f, {})
    if (claims) assert.notStrictEqual(c._tag, "Legacy")
    else assert.strictEqual(c._tag, "Legacy")
  })

  // A method name a header can carry verbatim (HTTP strips surrounding whitespace from values).
  const headerable = (m: string) => /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(m)
  const plainMethod = arbMethod.filter((m) => m !== "tools/call" && headerable(m))
  it.prop("a complete modern request with consistent headers is modern", [plainMethod, FastCheck.integer()], ([method, id]) => {
    const c = classify(req(method, { _meta: meta() }, id), modernHeaders(method))
    assert.strictEqual(c._tag, "Modern")
  })
})
