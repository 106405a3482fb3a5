import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import type { JsonObject } from "../src/Json.js"
import * as Meta from "../src/Meta.js"
import { isPlainRequestMeta } from "../src/RequestMetaCheck.js"

const V = Meta.ProtocolVersionKey
const C = Meta.ClientCapabilitiesKey
const I = Meta.ClientInfoKey
const L = Meta.LogLevelKey
const P = Meta.ProgressTokenKey

const decode = Schema.decodeUnknownEither(Meta.RequestMeta)

// Values of every JSON kind, so each field is tried right and wrong.
const anyValue: FastCheck.Arbitrary<unknown> = FastCheck.oneof(
  FastCheck.constant(null),
  FastCheck.boolean(),
  FastCheck.integer(),
  FastCheck.constantFrom("", "x", "debug", "2026-07-28"),
  FastCheck.constant([]),
  FastCheck.constant([{}]),
  FastCheck.constant({}),
  FastCheck.constant({ a: 1 }),
  FastCheck.constant({ a: {} })
)

/** Mostly a value of `good`, sometimes any value: enough pass for the property to mean something. */
const mostly = (good: FastCheck.Arbitrary<unknown>) => FastCheck.oneof({ arbitrary: good, weight: 6 }, { arbitrary: anyValue, weight: 1 })

const anObject = FastCheck.constantFrom({}, { a: 1 }, { a: {} })

/** Each key absent (undefined here), or one of `values`. */
const maybe = <A>(values: FastCheck.Arbitrary<A>) => FastCheck.option(values, { nil: undefined, freq: 3 })

const objectOf = (entries: Record<string, unknown>): JsonObject => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(entries)) if (v !== undefined) out[k] = v
  return out
}

const pair = (a: string, b: string) => mostly(FastCheck.record({ [a]: maybe(mostly(anObject)), [b]: maybe(mostly(anObject)) }).map(objectOf))

const caps = mostly(
  FastCheck.record({
    experimental: maybe(mostly(FastCheck.constantFrom({}, { x: {} }, { x: 1 }))),
    roots: maybe(mostly(anObject)),
    sampling: maybe(pair("context", "tools")),
    elicitation: maybe(pair("form", "url")),
    extensions: maybe(mostly(FastCheck.constantFrom({}, { "io.modelcontextprotocol/tasks": {} }, { x: [] }))),
    other: maybe(anyValue)
  }).map(objectOf)
)

const icon = FastCheck.oneof(anyValue, FastCheck.record({ src: maybe(anyValue), theme: maybe(FastCheck.constantFrom("light", "dark", "x")) }).map(objectOf))

const aString = FastCheck.constantFrom("", "x", "1.0.0")

const info = mostly(
  FastCheck.record({
    name: mostly(aString),
    version: mostly(aString),
    title: maybe(mostly(aString)),
    icons: FastCheck.option(FastCheck.oneof(anyValue, FastCheck.array(icon, { maxLength: 2 })), { nil: undefined, freq: 4 }),
    description: maybe(mostly(aString)),
    websiteUrl: maybe(mostly(aString))
  }).map(objectOf)
)

const meta = FastCheck.record({
  [V]: maybe(mostly(FastCheck.constantFrom("2026-07-28", "x", ""))),
  [C]: maybe(caps),
  [I]: maybe(info),
  [L]: maybe(mostly(FastCheck.constantFrom("info", "emergency", "verbose"))),
  [P]: maybe(mostly(FastCheck.oneof(aString, FastCheck.integer()))),
  "com.example/other": maybe(anyValue)
}).map(objectOf)

describe("isPlainRequestMeta", () => {
  it("vouches only for what the Schema decodes to the same value, with a non-empty version", () => {
    let vouched = 0
    FastCheck.assert(
      FastCheck.property(meta, (m) => {
        if (!isPlainRequestMeta(m)) return
        vouched++
        const decoded = decode(m)
        assert.isTrue(Either.isRight(decoded), JSON.stringify(m))
        assert.deepStrictEqual(Either.getOrThrow(decoded), m)
        assert.isTrue(typeof m[V] === "string" && m[V].length > 0)
      }),
      { numRuns: 5000 }
    )
    // The property says nothing if the check vouched for almost nothing.
    assert.isAbove(vouched, 50)
  })

  it("vouches for the usual request's _meta", () => {
    assert.isTrue(isPlainRequestMeta({ [V]: "2026-07-28", [C]: {} }))
    assert.isTrue(isPlainRequestMeta({
      [V]: "2026-07-28",
      [C]: { elicitation: { form: {} }, sampling: {}, roots: {}, extensions: { "io.modelcontextprotocol/tasks": {} } },
      [I]: { name: "ExampleClient", version: "1.0.0", title: "Example" },
      [L]: "info",
      [P]: 7,
      traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    }))
  })

  it("leaves what it cannot vouch for to the Schema", () => {
    assert.isFalse(isPlainRequestMeta({ [V]: "", [C]: {} }))
    assert.isFalse(isPlainRequestMeta({ [V]: "2026-07-28" }))
    assert.isFalse(isPlainRequestMeta({ [V]: "2026-07-28", [C]: [] }))
    assert.isFalse(isPlainRequestMeta({ [V]: "2026-07-28", [C]: { roots: true } }))
    assert.isFalse(isPlainRequestMeta({ [V]: "2026-07-28", [C]: { extensions: { x: 1 } } }))
    assert.isFalse(isPlainRequestMeta({ [V]: "2026-07-28", [C]: {}, [I]: { name: "n", version: "1", icons: [] } }))
    assert.isFalse(isPlainRequestMeta({ [V]: "2026-07-28", [C]: {}, [L]: "verbose" }))
    assert.isFalse(isPlainRequestMeta({ [V]: "2026-07-28", [C]: {}, [P]: null }))
  })
})

// The definition isReservedKey replaced (a slice and a split per key), kept here as its oracle.
const reservedBySplit = (key: string): boolean => {
  const slash = key.indexOf("/")
  if (slash < 0) return false
  const second = key.slice(0, slash).split(".")[1]
  return second === "modelcontextprotocol" || second === "mcp"
}

describe("isReservedKey", () => {
  it("agrees with the split-based definition", () => {
    const label = FastCheck.constantFrom(
      "",
      "io",
      "dev",
      "mcp",
      "modelcontextprotocol",
      "modelcontextprotocolx",
      "modelcontextprotoco",
      "mcpx",
      "mc",
      "example"
    )
    const key = FastCheck.tuple(FastCheck.array(label, { maxLength: 4 }), FastCheck.constantFrom("", "/", "/x", "/a.mcp/b", ".mcp"))
      .map(([labels, tail]) => labels.join(".") + tail)
    FastCheck.assert(
      FastCheck.property(FastCheck.oneof(key, FastCheck.string()), (k) => {
        assert.strictEqual(Meta.isReservedKey(k), reservedBySplit(k), k)
      }),
      { numRuns: 5000 }
    )
    for (const k of ["io.modelcontextprotocol/x", "dev.mcp/y", "io.mcp.z/w", "com.example.mcp/x", "mcp/x", "a.mcp", "progressToken"]) {
      assert.strictEqual(Meta.isReservedKey(k), reservedBySplit(k), k)
    }
  })
})
