/**
 * The frames the fuzz suite sends: well-formed requests and notifications, envelopes wrong in one
 * member, text that is not JSON, scalars, nesting past the bound, ids no number holds, batches of
 * all of these (empty and over-long too), and valid frames with one character changed. Each is
 * its text and, where the Model cannot tell from the parsed value, the answer it must get.
 */
import * as FastCheck from "effect/FastCheck"
import type { Expected } from "./Model.js"

/** One frame to send. */
export interface Frame {
  readonly kind: string
  readonly text: string
  /** Set where parsing hides what decides the answer (an id's exact text). */
  readonly expect?: Expected
}

const fc = FastCheck

/** Methods a host sends, and some nobody serves; never initialize or listen, which change the connection. */
const method = fc.oneof(
  fc.constantFrom(
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "completion/complete",
    "logging/setLevel",
    "no/such/method",
    "rpc.discover"
  ),
  fc.string({ maxLength: 12 }).map((s) => `x-${s}`)
)

const json = fc.jsonValue({ maxDepth: 4 })
const object = fc.dictionary(fc.string({ maxLength: 6 }), json, { maxKeys: 4 })

/** What the frames are made for: the host's bounds and the tool a valid call names. */
export interface Target {
  readonly maxBatch: number
  readonly maxDepth: number
  /** The host's echo-like tool, called with random arguments too. */
  readonly echoTool: string
}

/** Tool names: the echo tool, one nobody has, and random ones (never a harness's blocking tools). */
const toolName = (echo: string) => fc.oneof(fc.constant(echo), fc.constant("nope"), fc.string({ maxLength: 8 }).map((s) => `t-${s}`))

const paramsFor = (echo: string) =>
  fc.oneof(
    object,
    fc.record({ name: toolName(echo), arguments: fc.oneof(object, json) }),
    fc.record({ name: fc.constant(echo), arguments: object })
  )

/** Request ids: strings and safe integers, made distinct by the sequence number the runner gives. */
const id = (seq: number) => fc.oneof(fc.string({ maxLength: 6 }).map((s) => `${s}#${seq}`), fc.constant(seq))

const request = (seq: number, echo: string) =>
  fc.record({ jsonrpc: fc.constant("2.0"), id: id(seq), method, params: paramsFor(echo) }, { requiredKeys: ["jsonrpc", "id", "method"] })

const notification = fc.record(
  { jsonrpc: fc.constant("2.0"), method: fc.oneof(method, fc.constant("notifications/initialized")), params: object },
  { requiredKeys: ["jsonrpc", "method"] }
)

/** A request with one envelope member wrong. */
const broken = (seq: number, echo: string) =>
  fc.tuple(request(seq, echo), fc.constantFrom("jsonrpc", "method", "id", "params", "drop-jsonrpc", "both"), json).map(([r, what, junk]) => {
    switch (what) {
      case "jsonrpc":
        return { ...r, jsonrpc: junk === "2.0" ? "1.0" : junk }
      case "method":
        return { ...r, method: typeof junk === "string" ? 7 : junk }
      case "id":
        return { ...r, id: typeof junk === "string" || typeof junk === "number" ? true : junk }
      case "params":
        return { ...r, params: typeof junk === "object" && junk !== null && !Array.isArray(junk) ? [junk] : junk }
      case "drop-jsonrpc": {
        const { jsonrpc: _, ...rest } = r
        return rest
      }
      default:
        return { jsonrpc: "2.0", id: r.id, result: {}, error: { code: 1, message: "both" } }
    }
  })

/** A response nobody asked for, well formed or not. */
const response = (seq: number) =>
  fc.oneof(
    fc.record({ jsonrpc: fc.constant("2.0"), id: id(seq), result: object }),
    fc.record({ jsonrpc: fc.constant("2.0"), id: id(seq), error: fc.record({ code: fc.integer(), message: fc.string() }) }),
    fc.record({ jsonrpc: fc.constant("2.0"), id: id(seq), result: json })
  )

const message = (seq: number, echo: string) => fc.oneof(request(seq, echo), request(seq, echo), notification, broken(seq, echo), response(seq))

const nested = (levels: number, seq: number, echo: string) =>
  `{"jsonrpc":"2.0","id":${seq},"method":"tools/call","params":{"name":${JSON.stringify(echo)},"arguments":{"a":${"[".repeat(levels)}${"]".repeat(levels)}}}}`

/** Ids a double cannot hold: refused whole, without an id. */
const inexact = fc.constantFrom("1e400", "-1e400", "1e-400", "9007199254740993", "123456789012345678901234567890", "0.1000000000000000055511151231257827")

/** One character of `text` replaced, inserted or deleted. */
const mutated = (text: string) =>
  fc.tuple(fc.nat({ max: Math.max(0, text.length - 1) }), fc.constantFrom("replace", "insert", "delete"), fc.constantFrom(..."{}[]\":,0a\\ \u0000é")).map(
    ([at, how, c]) =>
      how === "delete"
        ? text.slice(0, at) + text.slice(at + 1)
        : how === "insert"
        ? text.slice(0, at) + c + text.slice(at)
        : text.slice(0, at) + c + text.slice(at + 1)
  )

const withKind = (kind: string) => (text: string): Frame => ({ kind, text })

/** Every kind of frame, for a host that takes batches up to `maxBatch` and nesting to `maxDepth`. */
export const frame = (seq: number, limits: Target): FastCheck.Arbitrary<Frame> => {
  const echo = limits.echoTool
  return fc.oneof(
    { weight: 4, arbitrary: request(seq, echo).map((m) => withKind("request")(JSON.stringify(m))) },
    { weight: 1, arbitrary: notification.map((m) => withKind("notification")(JSON.stringify(m))) },
    { weight: 2, arbitrary: broken(seq, echo).map((m) => withKind("broken envelope")(JSON.stringify(m))) },
    { weight: 1, arbitrary: response(seq).map((m) => withKind("stray response")(JSON.stringify(m))) },
    // Never blank: a blank stdio line is not a frame at all.
    { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== "").map(withKind("text")) },
    { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.string(), fc.boolean(), fc.constant(null)).map((v) => withKind("scalar")(JSON.stringify(v))) },
    {
      weight: 2,
      arbitrary: fc.array(message(seq, echo), { minLength: 1, maxLength: 6 }).map((ms) =>
        withKind("batch")(JSON.stringify(ms.map((m, i) => ("id" in m && typeof m.id === "string"
          ? { ...m, id: `${m.id}/${i}` }
          : "id" in m && typeof m.id === "number"
          ? { ...m, id: m.id * 100 + i }
          : m)
        )))
      )
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom("[]", JSON.stringify(Array.from({ length: limits.maxBatch + 1 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "ping" })))).map(
        withKind("batch bound")
      )
    },
    { weight: 1, arbitrary: fc.integer({ min: limits.maxDepth, max: limits.maxDepth * 40 }).map((levels) => withKind("deep")(nested(levels, seq, echo))) },
    {
      weight: 1,
      arbitrary: inexact.map((text): Frame => ({
        kind: "inexact id",
        text: `{"jsonrpc":"2.0","id":${text},"method":"ping"}`,
        expect: { _tag: "Refused", code: -32600 }
      }))
    },
    { weight: 3, arbitrary: request(seq, echo).map((m) => JSON.stringify({ ...m, id: `m${seq}` })).chain(mutated).map(withKind("mutated")) }
  )
}

/** `count` frames from `seed`, in chunks, so a 100k run never holds them all. */
export function* frames(seed: number, count: number, limits: Target): Generator<Frame> {
  const chunk = 500
  for (let start = 0; start < count; start += chunk) {
    const n = Math.min(chunk, count - start)
    const samples = fc.sample(fc.tuple(...Array.from({ length: n }, (_, i) => frame(start + i + 1, limits))), { seed: seed + start, numRuns: 1 })[0]
    if (samples !== undefined) yield* samples
  }
}
