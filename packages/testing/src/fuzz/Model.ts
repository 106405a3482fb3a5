/**
 * What a host transport must answer to a frame, written from the JSON-RPC and MCP rules rather
 * than from the decoder, so the fuzz suite checks one against the other: -32700 for text that is
 * not JSON, -32600 for JSON that is not a message (or nests too deep, or is a batch too long or
 * empty), nothing for a notification, and for a request a response bearing its id.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"

/** One reply expected for a frame. */
export type Expected =
  /** No reply at all (a notification; over stdio also a stray response). */
  | { readonly _tag: "None" }
  /** A frame-level error: `code`, with `id` when the message's id was readable. */
  | { readonly _tag: "Refused"; readonly code: number; readonly id?: string | number }
  /** A response to the request `id`: a result, or an error whose code is in `codes` (any code when absent). */
  | { readonly _tag: "Answer"; readonly id: string | number; readonly result?: boolean; readonly codes?: ReadonlyArray<number> }
  /** A batch reply holding these (a batch whose elements all expect nothing gets no reply). */
  | { readonly _tag: "Batch"; readonly elements: ReadonlyArray<Expected> }

/** How the transport differs: HTTP refuses a stray response, stdio ignores it. */
export interface Rules {
  readonly maxDepth: number
  readonly maxBatch: number
  readonly strayResponse: "refused" | "ignored"
  /** A tool that answers any object of arguments with a result (none: a call may answer either way). */
  readonly echoTool?: string
}

type Known = (params: JsonObject | undefined, rules: Rules) => Pick<Extract<Expected, { _tag: "Answer" }>, "result" | "codes">

/** Methods every mcpx-fx host serves with a result, whatever is behind it. */
const Known: Readonly<Record<string, Known>> = {
  ping: () => ({ result: true }),
  "tools/list": () => ({ result: true }),
  "prompts/list": () => ({ result: true }),
  "resources/list": () => ({ result: true }),
  "tools/call": (params, rules) =>
    rules.echoTool !== undefined && params !== undefined && params.name === rules.echoTool && isObject(params.arguments) ? { result: true } : {}
}

const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)
// Whether a parsed id can be echoed as sent. A number that parsed from text no double holds
// (`1e-400` → 0) looks exact here; the generator that makes one states its own expectation.
const isId = (u: unknown): u is string | number =>
  typeof u === "string" || (typeof u === "number" && Number.isFinite(u) && (!Number.isInteger(u) || Number.isSafeInteger(u)))

/** How deeply a value nests (a scalar is 0), without recursion. */
export const depthOf = (value: unknown): number => {
  let deepest = 0
  const stack: Array<readonly [unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [v, d] = stack.pop()!
    if (v === null || typeof v !== "object") continue
    deepest = Math.max(deepest, d + 1)
    for (const child of Object.values(v)) stack.push([child, d + 1])
  }
  return deepest
}

const message = (v: unknown, rules: Rules): Expected => {
  if (!isObject(v)) return { _tag: "Refused", code: -32600 }
  const readableId = isId(v.id) ? { id: v.id } : {}
  if (v.jsonrpc !== "2.0") return { _tag: "Refused", code: -32600, ...readableId }
  if ("method" in v) {
    if (typeof v.method !== "string") return { _tag: "Refused", code: -32600, ...readableId }
    if ("id" in v && !isId(v.id)) return { _tag: "Refused", code: -32600 }
    if ("params" in v && !isObject(v.params)) return { _tag: "Refused", code: -32600, ...readableId }
    if (!("id" in v)) return { _tag: "None" }
    const id = v.id as string | number
    const known = Known[v.method]
    if (known !== undefined) return { _tag: "Answer", id, ...known(isObject(v.params) ? v.params : undefined, rules) }
    // Methods of MCP the fake Backend may or may not serve answer something; any other is -32601.
    return /^[a-z]+\/[A-Za-z/_]+$/.test(v.method) ? { _tag: "Answer", id } : { _tag: "Answer", id, codes: [-32601] }
  }
  const hasResult = "result" in v
  const hasError = "error" in v
  if (!hasResult && !hasError) return { _tag: "Refused", code: -32600, ...readableId }
  if (hasResult && hasError) return { _tag: "Refused", code: -32600, ...readableId }
  if (hasResult && (!isId(v.id) || !isObject(v.result))) return { _tag: "Refused", code: -32600, ...readableId }
  if (hasError) {
    if ("id" in v && v.id !== null && !isId(v.id)) return { _tag: "Refused", code: -32600 }
    const e = v.error
    if (!isObject(e) || typeof e.code !== "number" || !Number.isInteger(e.code) || typeof e.message !== "string") {
      return { _tag: "Refused", code: -32600, ...readableId }
    }
  }
  return rules.strayResponse === "refused" ? { _tag: "Refused", code: -32600 } : { _tag: "None" }
}

/** What a transport must answer to `text`, sent as one frame. */
export const expected = (text: string, rules: Rules): Expected => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { _tag: "Refused", code: -32700 }
  }
  // Refused whole, under the message's own id when its top-level id can be read (a batch has none).
  if (depthOf(value) > rules.maxDepth) {
    return isObject(value) && isId(value.id) ? { _tag: "Refused", code: -32600, id: value.id } : { _tag: "Refused", code: -32600 }
  }
  if (!Array.isArray(value)) return message(value, rules)
  if (value.length === 0 || value.length > rules.maxBatch) return { _tag: "Refused", code: -32600 }
  // Inside a batch a stray response is dropped on either transport: an array reply cannot refuse it.
  const elements = value.map((v) => message(v, { ...rules, strayResponse: "ignored" })).filter((e) => e._tag !== "None")
  return elements.length === 0 ? { _tag: "None" } : { _tag: "Batch", elements }
}

/** Why `reply` (a parsed JSON-RPC message or batch, or undefined for none) is not what was expected; undefined if it is. */
export const mismatch = (want: Expected, reply: unknown): string | undefined => {
  switch (want._tag) {
    case "None":
      return reply === undefined ? undefined : `expected no reply, got ${JSON.stringify(reply)}`
    case "Refused": {
      if (!isObject(reply) || !isObject(reply.error)) return `expected error ${want.code}, got ${JSON.stringify(reply)}`
      if (reply.error.code !== want.code) return `expected error ${want.code}, got ${JSON.stringify(reply)}`
      if (want.id === undefined ? "id" in reply && reply.id !== null : reply.id !== want.id) {
        return `expected id ${JSON.stringify(want.id)}, got ${JSON.stringify(reply)}`
      }
      return undefined
    }
    case "Answer": {
      if (!isObject(reply) || reply.id !== want.id) return `expected a response to ${JSON.stringify(want.id)}, got ${JSON.stringify(reply)}`
      if (reply.jsonrpc !== "2.0") return `not JSON-RPC 2.0: ${JSON.stringify(reply)}`
      const isResult = isObject(reply.result)
      const isError = isObject(reply.error) && Number.isInteger(reply.error.code) && typeof reply.error.message === "string"
      if (isResult === isError) return `neither a result nor an error: ${JSON.stringify(reply)}`
      if (want.result === true && !isResult) return `expected a result, got ${JSON.stringify(reply)}`
      if (want.codes !== undefined && !(isError && want.codes.includes((reply.error as JsonObject).code as number))) {
        return `expected error ${want.codes.join("/")}, got ${JSON.stringify(reply)}`
      }
      return undefined
    }
    case "Batch": {
      if (!Array.isArray(reply)) return `expected a batch reply, got ${JSON.stringify(reply)}`
      if (reply.length !== want.elements.length) return `expected ${want.elements.length} replies, got ${JSON.stringify(reply)}`
      const left = [...reply]
      for (const element of want.elements) {
        const at = left.findIndex((r) => mismatch(element, r) === undefined)
        if (at < 0) return `no reply in ${JSON.stringify(reply)} matches ${JSON.stringify(element)}`
        left.splice(at, 1)
      }
      return undefined
    }
  }
}

/** Whether the frame is refused as a whole (HTTP answers those with 400). */
export const refusedWhole = (want: Expected): boolean => want._tag === "Refused"
