import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as HeaderCodec from "../src/HeaderCodec.js"
import * as HeaderParams from "../src/HeaderParams.js"
import * as HeaderValue from "../src/HeaderValue.js"
import type * as JsonRpc from "../src/JsonRpc.js"

const decoded = (raw: string): string => Either.getOrThrow(HeaderValue.decodeValue(raw))
const decodeFails = (raw: string): string => {
  const r = HeaderValue.decodeValue(raw)
  if (Either.isRight(r)) throw new Error(`expected ${JSON.stringify(raw)} to be rejected, got ${JSON.stringify(r.right)}`)
  return r.left.reason
}

describe("HeaderCodec value encoding (digest §3.5)", () => {
  // The spec's table: original value → header value.
  const examples: ReadonlyArray<readonly [string, string]> = [
    ["us-west1", "us-west1"],
    ["Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="],
    [" padded ", "=?base64?IHBhZGRlZCA=?="],
    ["line1\nline2", "=?base64?bGluZTEKbGluZTI=?="],
    ["=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="]
  ]
  for (const [value, header] of examples) {
    it(`encodes ${JSON.stringify(value)} as ${header} and back`, () => {
      assert.strictEqual(HeaderValue.encodeValue(value), header)
      assert.strictEqual(decoded(header), value)
    })
  }

  it("sends plain what a header carries unchanged, including inner spaces and the empty string", () => {
    assert.strictEqual(HeaderValue.encodeValue("a b c"), "a b c")
    assert.strictEqual(HeaderValue.encodeValue(""), "")
    assert.strictEqual(HeaderValue.encodeValue("=?base64?abc"), "=?base64?abc")
  })

  it("encodes tabs, control characters and leading or trailing whitespace", () => {
    for (const v of ["a\tb", "\u0001", "x ", "\ty", "caf\u00e9"]) {
      assert.isTrue(HeaderValue.encodeValue(v).startsWith("=?base64?"), v)
      assert.strictEqual(decoded(HeaderValue.encodeValue(v)), v)
    }
  })

  it("rejects a sentinel with missing padding", () => {
    assert.match(decodeFails("=?base64?SGVsbG8?="), /strict base64/)
  })

  it("rejects a sentinel with characters outside the base64 alphabet", () => {
    decodeFails("=?base64?SGVs!!!bG8=?=")
    decodeFails("=?base64?SGVs bG8=?=")
    decodeFails("=?base64?SGVsbG8_?=")
  })

  it("rejects non-canonical trailing bits and payloads that are not UTF-8", () => {
    decodeFails("=?base64?SGVsbG9=?=")
    assert.match(decodeFails("=?base64?/w==?="), /not UTF-8/)
  })

  it("reads a value without the exact lowercase prefix and suffix as a literal", () => {
    assert.strictEqual(decoded("SGVsbG8="), "SGVsbG8=")
    assert.strictEqual(decoded("=?base64?SGVsbG8="), "=?base64?SGVsbG8=")
    assert.strictEqual(decoded("SGVsbG8=?="), "SGVsbG8=?=")
    assert.strictEqual(decoded("=?BASE64?SGVsbG8=?="), "=?BASE64?SGVsbG8=?=")
    assert.strictEqual(decoded("=?base64?="), "=?base64?=")
  })

  it("decodes an empty sentinel payload to the empty string", () => {
    assert.strictEqual(decoded("=?base64??="), "")
  })

  it("trims surrounding whitespace (not part of a field value) and rejects bytes a header cannot carry", () => {
    assert.strictEqual(decoded("  get_weather \t"), "get_weather")
    assert.strictEqual(decoded("  =?base64?SGVsbG8=?=  "), "Hello")
    assert.match(decodeFails("a\nb"), /invalid|may not carry/)
    decodeFails("caf\u00e9")
  })

  it("converts argument values: strings as-is, integers in decimal, booleans lowercase", () => {
    assert.strictEqual(Either.getOrThrow(HeaderValue.encodeScalar("us-west1")), "us-west1")
    assert.strictEqual(Either.getOrThrow(HeaderValue.encodeScalar(42)), "42")
    assert.strictEqual(Either.getOrThrow(HeaderValue.encodeScalar(-7)), "-7")
    assert.strictEqual(Either.getOrThrow(HeaderValue.encodeScalar(42.0)), "42")
    assert.strictEqual(Either.getOrThrow(HeaderValue.encodeScalar(true)), "true")
    assert.strictEqual(Either.getOrThrow(HeaderValue.encodeScalar(false)), "false")
    assert.isTrue(Either.isLeft(HeaderValue.encodeScalar(1.5)))
    assert.isTrue(Either.isLeft(HeaderValue.encodeScalar(2 ** 53)))
    assert.isTrue(Either.isLeft(HeaderValue.encodeScalar({ a: 1 })))
    assert.isTrue(Either.isLeft(HeaderValue.encodeScalar(null)))
  })

  it("compares integers numerically and everything else exactly", () => {
    assert.isTrue(HeaderValue.matchesBody("42", 42))
    assert.isTrue(HeaderValue.matchesBody("42.0", 42))
    assert.isTrue(HeaderValue.matchesBody("4.2e1", 42))
    assert.isFalse(HeaderValue.matchesBody("43", 42))
    assert.isFalse(HeaderValue.matchesBody("0x2a", 42))
    assert.isFalse(HeaderValue.matchesBody("", 0))
    assert.isTrue(HeaderValue.matchesBody("true", true))
    assert.isFalse(HeaderValue.matchesBody("True", true))
    assert.isFalse(HeaderValue.matchesBody("42", "42.0"))
    assert.isFalse(HeaderValue.matchesBody("{}", {}))
  })

  it.prop("decode(encode(s)) = s for any Unicode string", [FastCheck.string({ unit: "binary" })], ([s]) => {
    const header = HeaderValue.encodeValue(s)
    assert.isTrue(HeaderValue.isHeaderSafe(header))
    assert.strictEqual(decoded(header), s)
  })

  it.prop("sentinel-looking ASCII survives the round trip", [FastCheck.string({ unit: "grapheme-ascii" })], ([s]) => {
    const v = `=?base64?${s}?=`
    assert.strictEqual(decoded(HeaderValue.encodeValue(v)), v)
  })

  it.prop(
    "an encoded argument matches the body value it came from",
    [FastCheck.oneof(FastCheck.string({ unit: "binary" }), FastCheck.maxSafeInteger(), FastCheck.boolean())],
    ([v]) => {
      const header = Either.getOrThrow(HeaderValue.encodeScalar(v))
      assert.isTrue(HeaderValue.matchesBody(decoded(header), v))
    }
  )

  it.prop("decoding never throws, whatever arrives", [FastCheck.string({ unit: "binary" })], ([raw]) => {
    const r = HeaderValue.decodeValue(raw)
    assert.isTrue(Either.isLeft(r) || typeof r.right === "string")
  })
})

describe("HeaderCodec headers by name", () => {
  it("finds headers case-insensitively and joins repeated values", () => {
    const h = { "mcp-method": "tools/list", "MCP-NAME": "x", "x-multi": ["a", "b"] }
    assert.strictEqual(HeaderCodec.getHeader(h, "Mcp-Method"), "tools/list")
    assert.strictEqual(HeaderCodec.getHeader(h, "mcp-name"), "x")
    assert.strictEqual(HeaderCodec.getHeader(h, "X-Multi"), "a, b")
    assert.strictEqual(HeaderCodec.getHeader(h, "Mcp-Session-Id"), undefined)
  })

  it("knows which field Mcp-Name mirrors", () => {
    assert.strictEqual(HeaderCodec.nameSource("tools/call"), "name")
    assert.strictEqual(HeaderCodec.nameSource("prompts/get"), "name")
    assert.strictEqual(HeaderCodec.nameSource("resources/read"), "uri")
    assert.strictEqual(HeaderCodec.nameSource("tasks/get"), "taskId")
    assert.strictEqual(HeaderCodec.nameSource("tasks/update"), "taskId")
    assert.strictEqual(HeaderCodec.nameSource("tasks/cancel"), "taskId")
    assert.strictEqual(HeaderCodec.nameSource("tools/list"), undefined)
  })
})

describe("HeaderCodec x-mcp-header validation (digest §3.4)", () => {
  const schema = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: "object", properties, ...extra })
  const reasonOf = (inputSchema: unknown): string => {
    const r = HeaderParams.headerParams(inputSchema)
    if (Either.isRight(r)) throw new Error(`expected ${JSON.stringify(inputSchema)} to be invalid`)
    return r.left.reason
  }

  it("collects annotated string, integer and boolean properties, nested through properties", () => {
    const r = Either.getOrThrow(HeaderParams.headerParams(schema({
      region: { type: "string", "x-mcp-header": "Region" },
      priority: { type: "integer", "x-mcp-header": "Priority" },
      verbose: { type: "boolean", "x-mcp-header": "Verbose" },
      opts: { type: "object", properties: { tenant: { type: "string", "x-mcp-header": "Tenant" } } },
      query: { type: "string" }
    })))
    assert.deepStrictEqual(r, [
      { header: "Region", path: ["region"], type: "string" },
      { header: "Priority", path: ["priority"], type: "integer" },
      { header: "Verbose", path: ["verbose"], type: "boolean" },
      { header: "Tenant", path: ["opts", "tenant"], type: "string" }
    ])
  })

  it("accepts a tool without annotations, and a property merely named x-mcp-header", () => {
    assert.deepStrictEqual(Either.getOrThrow(HeaderParams.headerParams(schema({ q: { type: "string" } }))), [])
    assert.deepStrictEqual(Either.getOrThrow(HeaderParams.headerParams(schema({ "x-mcp-header": { type: "object" } }))), [])
    assert.deepStrictEqual(Either.getOrThrow(HeaderParams.headerParams(schema({ e: { type: "string", enum: [{ "x-mcp-header": "no" }] } }))), [])
  })

  it("accepts a nullable primitive", () => {
    assert.strictEqual(Either.getOrThrow(HeaderParams.headerParams(schema({ r: { type: ["string", "null"], "x-mcp-header": "R" } })))[0]?.type, "string")
  })

  const invalid: ReadonlyArray<readonly [string, unknown, RegExp]> = [
    ["an empty value", schema({ v: { type: "string", "x-mcp-header": "" } }), /non-empty/],
    ["a non-string value", schema({ v: { type: "string", "x-mcp-header": 5 } }), /non-empty string/],
    ["a space", schema({ v: { type: "string", "x-mcp-header": "My Header" } }), /token/],
    ["a colon", schema({ v: { type: "string", "x-mcp-header": "A:B" } }), /token/],
    ["non-ASCII", schema({ v: { type: "string", "x-mcp-header": "Régión" } }), /token/],
    ["a control character", schema({ v: { type: "string", "x-mcp-header": "A\r\nB" } }), /token/],
    ["an object property", schema({ v: { type: "object", "x-mcp-header": "Data" } }), /only integer, string and boolean/],
    ["an array property", schema({ v: { type: "array", items: { type: "string" }, "x-mcp-header": "Items" } }), /only integer/],
    ["a null property", schema({ v: { type: "null", "x-mcp-header": "Nil" } }), /only integer/],
    ["a number property", schema({ v: { type: "number", "x-mcp-header": "F" } }), /only integer/],
    ["an untyped property", schema({ v: { "x-mcp-header": "U" } }), /only integer/],
    ["a duplicate", schema({ a: { type: "string", "x-mcp-header": "Region" }, b: { type: "string", "x-mcp-header": "Region" } }), /unique/],
    ["a case-insensitive duplicate", schema({ a: { type: "string", "x-mcp-header": "MyField" }, b: { type: "string", "x-mcp-header": "myfield" } }), /unique/],
    [
      "a property under items",
      schema({ l: { type: "array", items: { type: "object", properties: { x: { type: "string", "x-mcp-header": "X" } } } } }),
      /not reachable/
    ],
    ["a branch of oneOf", schema({}, { oneOf: [{ properties: { x: { type: "string", "x-mcp-header": "X" } } }] }), /not reachable/],
    ["a branch of anyOf inside a property", schema({ p: { anyOf: [{ type: "string", "x-mcp-header": "X" }] } }), /not reachable/],
    ["allOf", schema({}, { allOf: [{ properties: { x: { type: "string", "x-mcp-header": "X" } } }] }), /not reachable/],
    ["not", schema({ p: { not: { type: "string", "x-mcp-header": "X" } } }), /not reachable/],
    ["if/then/else", schema({}, { if: {}, then: { properties: { x: { type: "string", "x-mcp-header": "X" } } } }), /not reachable/],
    ["$defs (reached only by $ref)", schema({ p: { $ref: "#/$defs/s" } }, { $defs: { s: { type: "string", "x-mcp-header": "S" } } }), /not reachable/],
    ["additionalProperties", schema({}, { additionalProperties: { type: "string", "x-mcp-header": "A" } }), /not reachable/],
    ["patternProperties", schema({}, { patternProperties: { "^x": { type: "string", "x-mcp-header": "A" } } }), /not reachable/],
    ["the root itself", { type: "object", "x-mcp-header": "Root" }, /not reachable/]
  ]
  for (const [what, s, why] of invalid) {
    it(`rejects ${what}`, () => {
      assert.match(reasonOf(s), why)
    })
  }

  it("excludes invalid tools from a listing and says which and why", () => {
    const tools = [
      { name: "ok", inputSchema: schema({ r: { type: "string", "x-mcp-header": "Region" } }) },
      { name: "bad", inputSchema: schema({ r: { type: "number", "x-mcp-header": "Rate" } }) },
      { name: "plain", inputSchema: schema({}) }
    ]
    const { excluded, kept } = HeaderParams.partitionTools(tools)
    assert.deepStrictEqual(kept.map((t) => t.name), ["ok", "plain"])
    assert.deepStrictEqual(excluded.map((e) => e.name), ["bad"])
    assert.include(excluded[0]?.reason ?? "", "/properties/r")
  })
})

describe("HeaderCodec outgoing headers", () => {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {}
  }
  const inputSchema = {
    type: "object",
    properties: {
      region: { type: "string", "x-mcp-header": "Region" },
      priority: { type: "integer", "x-mcp-header": "Priority" },
      verbose: { type: "boolean", "x-mcp-header": "Verbose" },
      greeting: { type: "string", "x-mcp-header": "Greeting" },
      method: { type: "string", "x-mcp-header": "Method" },
      query: { type: "string" }
    }
  }

  it("mirrors version, method, name and annotated arguments (the spec's execute_sql example and more)", () => {
    const h = Either.getOrThrow(HeaderCodec.outgoingHeaders({
      method: "tools/call",
      params: {
        name: "execute_sql",
        arguments: { region: "us-west1", priority: 42, verbose: false, greeting: "Hello, 世界", method: "GET", query: "SELECT 1" },
        _meta: meta
      }
    }, { inputSchema }))
    assert.deepStrictEqual(h, {
      "MCP-Protocol-Version": "2026-07-28",
      "Mcp-Method": "tools/call",
      "Mcp-Name": "execute_sql",
      "Mcp-Param-Region": "us-west1",
      "Mcp-Param-Priority": "42",
      "Mcp-Param-Verbose": "false",
      "Mcp-Param-Greeting": "=?base64?SGVsbG8sIOS4lueVjA==?=",
      "Mcp-Param-Method": "GET"
    })
  })

  it("omits headers for absent and null arguments", () => {
    const h = Either.getOrThrow(HeaderCodec.outgoingHeaders({
      method: "tools/call",
      params: { name: "t", arguments: { region: null }, _meta: meta }
    }, { inputSchema }))
    assert.deepStrictEqual(Object.keys(h).filter((k) => k.startsWith("Mcp-Param-")), [])
  })

  it("mirrors Mcp-Name from uri and taskId, sentinel-encoded when needed", () => {
    const read = Either.getOrThrow(HeaderCodec.outgoingHeaders({ method: "resources/read", params: { uri: "file:///ü", _meta: meta } }))
    assert.strictEqual(read["Mcp-Name"], "=?base64?ZmlsZTovLy/DvA==?=")
    const task = Either.getOrThrow(HeaderCodec.outgoingHeaders({ method: "tasks/get", params: { taskId: "t-1", _meta: meta } }))
    assert.strictEqual(task["Mcp-Name"], "t-1")
    const list = Either.getOrThrow(HeaderCodec.outgoingHeaders({ method: "tools/list", params: { _meta: meta } }))
    assert.deepStrictEqual(list, { "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list" })
  })

  it("refuses a request without a version, an unencodable argument, or a tool with invalid annotations", () => {
    assert.isTrue(Either.isLeft(HeaderCodec.outgoingHeaders({ method: "tools/list", params: {} })))
    assert.isTrue(
      Either.isLeft(HeaderCodec.outgoingHeaders({ method: "tools/call", params: { name: "t", arguments: { priority: 1.5 }, _meta: meta } }, { inputSchema }))
    )
    assert.isTrue(Either.isLeft(HeaderCodec.outgoingHeaders(
      { method: "tools/call", params: { name: "t", arguments: {}, _meta: meta } },
      { inputSchema: { type: "object", properties: { x: { type: "number", "x-mcp-header": "X" } } } }
    )))
  })
})

describe("HeaderCodec incoming checks", () => {
  const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} }
  const call = (params: Record<string, unknown>): JsonRpc.Request => ({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { _meta: meta, ...params } })
  const std = { "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_weather" }
  const mismatchOf = (r: Either.Either<void, HeaderCodec.HeaderMismatch>): HeaderCodec.HeaderMismatch => {
    if (Either.isRight(r)) throw new Error("expected a mismatch")
    return r.left
  }

  it("accepts agreeing headers, any name casing, surrounding whitespace on Mcp-Name, and a sentinel-encoded name", () => {
    assert.isTrue(Either.isRight(HeaderCodec.checkStandard(std, call({ name: "get_weather" }))))
    assert.isTrue(Either.isRight(HeaderCodec.checkStandard(
      { "mcp-protocol-version": "2026-07-28", "MCP-METHOD": "tools/call", "mcp-name": "  get_weather  " },
      call({ name: "get_weather" })
    )))
    assert.isTrue(Either.isRight(HeaderCodec.checkStandard({ ...std, "Mcp-Name": "=?base64?SGVsbG8sIOS4lueVjA==?=" }, call({ name: "Hello, 世界" }))))
  })

  it("reports each missing or disagreeing standard header", () => {
    const { "MCP-Protocol-Version": _v, ...noVersion } = std
    assert.strictEqual(mismatchOf(HeaderCodec.checkStandard(noVersion, call({ name: "get_weather" }))).header, "MCP-Protocol-Version")
    const { "Mcp-Method": _m, ...noMethod } = std
    assert.strictEqual(mismatchOf(HeaderCodec.checkStandard(noMethod, call({ name: "get_weather" }))).header, "Mcp-Method")
    const { "Mcp-Name": _n, ...noName } = std
    assert.strictEqual(mismatchOf(HeaderCodec.checkStandard(noName, call({ name: "get_weather" }))).header, "Mcp-Name")
    const wrong = mismatchOf(HeaderCodec.checkStandard({ ...std, "Mcp-Name": "wrong_tool_name" }, call({ name: "get_weather" })))
    assert.strictEqual(wrong.reason, "Mcp-Name header value 'wrong_tool_name' does not match body value 'get_weather'")
    assert.strictEqual(mismatchOf(HeaderCodec.checkStandard({ ...std, "Mcp-Method": "TOOLS/CALL" }, call({ name: "get_weather" }))).header, "Mcp-Method")
    assert.strictEqual(
      mismatchOf(HeaderCodec.checkStandard({ ...std, "MCP-Protocol-Version": "2025-11-25" }, call({ name: "get_weather" }))).header,
      "MCP-Protocol-Version"
    )
    assert.match(
      mismatchOf(HeaderCodec.checkStandard({ ...std, "Mcp-Name": "=?base64?Z2V0X3dlYXRoZXI?=" }, call({ name: "get_weather" }))).reason,
      /strict base64/
    )
    assert.match(
      mismatchOf(HeaderCodec.checkStandard({ ...std, "Mcp-Method": "tools/call\u00ff" }, call({ name: "get_weather" }))).reason,
      /invalid characters/
    )
  })

  it("demands nothing of a notification but checks what it sends", () => {
    const n: JsonRpc.Notification = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }
    assert.isTrue(Either.isRight(HeaderCodec.checkStandard({}, n)))
    assert.strictEqual(mismatchOf(HeaderCodec.checkStandard({ "Mcp-Method": "notifications/progress" }, n)).header, "Mcp-Method")
  })

  const inputSchema = {
    type: "object",
    properties: {
      region: { type: "string", "x-mcp-header": "Region" },
      priority: { type: "integer", "x-mcp-header": "Priority" },
      opts: { type: "object", properties: { dry: { type: "boolean", "x-mcp-header": "Dry" } } }
    }
  }

  it("accepts matching Mcp-Param headers, numerically for integers", () => {
    const msg = call({ name: "get_weather", arguments: { region: "Hello", priority: 42, opts: { dry: true } } })
    const h = { ...std, "Mcp-Param-Region": "=?base64?SGVsbG8=?=", "mcp-param-priority": "42.0", "MCP-PARAM-DRY": "true", "Mcp-Param-Unknown": "ignored" }
    assert.isTrue(Either.isRight(HeaderCodec.checkIncoming(h, msg, { inputSchema })))
  })

  it("rejects a missing, extra, undecodable or different Mcp-Param header", () => {
    const msg = call({ name: "get_weather", arguments: { region: "us-west1" } })
    assert.match(mismatchOf(HeaderCodec.checkIncoming(std, msg, { inputSchema })).reason, /missing/)
    assert.match(
      mismatchOf(HeaderCodec.checkIncoming({ ...std, "Mcp-Param-Region": "us-west1", "Mcp-Param-Priority": "1" }, msg, { inputSchema })).reason,
      /present but/
    )
    assert.match(mismatchOf(HeaderCodec.checkIncoming({ ...std, "Mcp-Param-Region": "=?base64?SGVsbG8?=" }, msg, { inputSchema })).reason, /strict base64/)
    assert.match(mismatchOf(HeaderCodec.checkIncoming({ ...std, "Mcp-Param-Region": "us-east1" }, msg, { inputSchema })).reason, /does not match/)
    const nulled = call({ name: "get_weather", arguments: { region: null } })
    assert.isTrue(Either.isRight(HeaderCodec.checkIncoming(std, nulled, { inputSchema })))
  })

  it("treats values without the exact sentinel form as literals when comparing", () => {
    const v = "=?base64?SGVsbG8="
    const msg = call({ name: "get_weather", arguments: { region: v } })
    assert.isTrue(Either.isRight(HeaderCodec.checkIncoming({ ...std, "Mcp-Param-Region": v }, msg, { inputSchema })))
  })

  it("turns a mismatch into a -32020 response naming the header", () => {
    const e = new HeaderCodec.HeaderMismatch({ header: "Mcp-Name", reason: "r" })
    assert.deepStrictEqual(HeaderCodec.mismatchResponse(3, e), {
      jsonrpc: "2.0",
      id: 3,
      error: { code: -32020, message: "Header mismatch: r", data: { header: "Mcp-Name", reason: "r" } }
    })
  })

  it.prop(
    "outgoing headers always pass the incoming check",
    [FastCheck.string({ unit: "binary" }), FastCheck.string({ unit: "binary" }), FastCheck.option(FastCheck.maxSafeInteger(), { nil: undefined })],
    ([name, region, priority]) => {
      const args = priority === undefined ? { region } : { region, priority }
      const msg = call({ name, arguments: args })
      const h = Either.getOrThrow(HeaderCodec.outgoingHeaders(msg, { inputSchema }))
      assert.isTrue(Either.isRight(HeaderCodec.checkIncoming(h, msg, { inputSchema })))
    }
  )
})
