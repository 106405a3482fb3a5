/**
 * The mirrored request headers of modern Streamable HTTP, shared by the client side (what to send)
 * and the server side (whether what arrived agrees with the body).
 *
 * `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` mirror the body so intermediaries can route
 * without parsing it; `Mcp-Param-{V}` mirrors tool arguments whose schema carries
 * `x-mcp-header: V`. Values that a header cannot carry verbatim travel as
 * `=?base64?<base64 of UTF-8>?=`. Any disagreement is `-32020` (HTTP 400).
 */
import { Buffer } from "node:buffer"
import { TextDecoder } from "node:util"
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as ErrorData from "./ErrorData.js"
import { hasKey, isJsonObject, type JsonObject } from "./Json.js"
import * as JsonRpc from "./JsonRpc.js"
import { metaOf, ProtocolVersionKey } from "./Meta.js"
import * as Method from "./Method.js"

/** Mirrors `_meta["io.modelcontextprotocol/protocolVersion"]`; required on every modern request. */
export const ProtocolVersionHeader = "MCP-Protocol-Version"
/** Mirrors `method`; required on every modern request. */
export const MethodHeader = "Mcp-Method"
/** Mirrors `params.name`, `params.uri` or `params.taskId`, depending on the method. */
export const NameHeader = "Mcp-Name"
/** The legacy session header (ignored on modern requests). */
export const SessionIdHeader = "Mcp-Session-Id"
/** Prefix of the headers that mirror annotated tool arguments. */
export const ParamHeaderPrefix = "Mcp-Param-"
/** The JSON Schema annotation that asks for an argument to be mirrored. */
export const Annotation = "x-mcp-header"

/** Incoming or outgoing headers, any name casing; repeated headers as arrays. */
export type Headers = { readonly [name: string]: string | ReadonlyArray<string> | undefined }

/** A header by case-insensitive name (repeated values joined as HTTP does). */
export const getHeader = (headers: Headers, name: string): string | undefined => {
  const wanted = name.toLowerCase()
  // Servers hand headers over lower-cased (node, the platform): look there before scanning.
  const direct = headers[wanted]
  if (direct !== undefined) return typeof direct === "string" ? direct : direct.join(", ")
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === wanted && v !== undefined) return typeof v === "string" ? v : v.join(", ")
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------
// Value encoding

const Prefix = "=?base64?"
const Suffix = "?="

/** Whether a value is in sentinel form: lowercase prefix and suffix, not overlapping. */
const isSentinel = (s: string): boolean => s.length >= Prefix.length + Suffix.length && s.startsWith(Prefix) && s.endsWith(Suffix)

/** Whether every character is one a header value may carry: visible ASCII, space, tab. */
export const isHeaderSafe = (s: string): boolean => /^[\t\x20-\x7e]*$/.test(s)

// Tab is header-safe but sent encoded anyway: it is whitespace an intermediary may fold or trim,
// and the conformance suite's client checks expect it encoded.
const sendsPlain = (s: string): boolean => /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/.test(s) && !isSentinel(s)

/**
 * Encodes a string for `Mcp-Name` or `Mcp-Param-*`: verbatim when a header carries it unchanged,
 * otherwise (non-ASCII, control characters, leading or trailing whitespace, or text that looks like
 * the sentinel itself) as `=?base64?…?=`.
 */
export const encodeValue = (value: string): string =>
  sendsPlain(value) ? value : `${Prefix}${Buffer.from(value, "utf8").toString("base64")}${Suffix}`

/** A header value that cannot be read: bytes a header may not carry, or a broken sentinel. */
export class InvalidHeaderValue extends Data.TaggedError("InvalidHeaderValue")<{ readonly reason: string }> {}

const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * Decodes a received `Mcp-Name` or `Mcp-Param-*` value. Surrounding whitespace is not part of a
 * header value (RFC 9110 §5.5), so it is trimmed. The sentinel is decoded strictly: padding
 * required, base64 alphabet only, UTF-8 payload; anything that is not exactly the lowercase
 * `=?base64?…?=` form (no suffix, `=?BASE64?`) is a literal value.
 */
export const decodeValue = (raw: string): Either.Either<string, InvalidHeaderValue> => {
  if (!isHeaderSafe(raw)) return Either.left(new InvalidHeaderValue({ reason: "contains characters a header value may not carry" }))
  const value = raw.replace(/^[ \t]+|[ \t]+$/g, "")
  if (!isSentinel(value)) return Either.right(value)
  const payload = value.slice(Prefix.length, value.length - Suffix.length)
  const bytes = Buffer.from(payload, "base64")
  // Node's decoder skips foreign characters and tolerates missing padding; re-encoding and
  // comparing is the strict check.
  if (bytes.toString("base64") !== payload) {
    return Either.left(new InvalidHeaderValue({ reason: `'${payload}' is not strict base64 (padding required, alphabet only)` }))
  }
  try {
    return Either.right(utf8.decode(bytes))
  } catch {
    return Either.left(new InvalidHeaderValue({ reason: "base64 payload is not UTF-8" }))
  }
}

/** A value an `x-mcp-header` argument may hold. */
export type HeaderScalar = string | number | boolean

/**
 * The header text of an argument value: strings as they are, integers in decimal, booleans as
 * `true`/`false`. Anything else (fractions, integers beyond ±(2^53−1), objects) has no header form.
 */
export const scalarToString = (value: unknown): Either.Either<string, InvalidHeaderValue> => {
  if (typeof value === "string") return Either.right(value)
  if (typeof value === "boolean") return Either.right(value ? "true" : "false")
  if (typeof value === "number" && Number.isSafeInteger(value)) return Either.right(String(value))
  return Either.left(new InvalidHeaderValue({ reason: `${JSON.stringify(value) ?? String(value)} is not a string, a safe integer or a boolean` }))
}

/** Converts and encodes an argument value for its `Mcp-Param-*` header. */
export const encodeScalar = (value: unknown): Either.Either<string, InvalidHeaderValue> => Either.map(scalarToString(value), encodeValue)

const NumberText = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/

/**
 * Whether a decoded header value stands for a body value. Numbers compare numerically
 * (`42.0` equals `42`); strings and booleans exactly (header values are case-sensitive).
 */
export const matchesBody = (decoded: string, body: unknown): boolean => {
  if (typeof body === "string") return decoded === body
  if (typeof body === "boolean") return decoded === (body ? "true" : "false")
  if (typeof body === "number") return NumberText.test(decoded) && Number(decoded) === body
  return false
}

// ---------------------------------------------------------------------------------------------
// Mcp-Name

/** Which params field `Mcp-Name` mirrors for a method, if any. */
export const nameSource = (method: string): "name" | "uri" | "taskId" | undefined => {
  switch (method) {
    case Method.ToolsCall:
    case Method.PromptsGet:
      return "name"
    case Method.ResourcesRead:
      return "uri"
    case Method.TasksGet:
    case Method.TasksUpdate:
    case Method.TasksCancel:
      return "taskId"
    default:
      return undefined
  }
}

/** The body value `Mcp-Name` mirrors, when the method has one and the params hold a string there. */
export const mirroredName = (method: string, params: unknown): string | undefined => {
  const source = nameSource(method)
  if (source === undefined || !isJsonObject(params)) return undefined
  const v = params[source]
  return typeof v === "string" ? v : undefined
}

// ---------------------------------------------------------------------------------------------
// x-mcp-header annotations

/** An argument a tool asks to have mirrored into `Mcp-Param-{header}`. */
export interface HeaderParam {
  /** The annotation's value: the header is `Mcp-Param-` + this. */
  readonly header: string
  /** The chain of property names from the arguments object to the value. */
  readonly path: ReadonlyArray<string>
  readonly type: "string" | "integer" | "boolean"
}

/** A tool's `x-mcp-header` annotations break a rule of the spec; the tool must not be listed. */
export class InvalidHeaderAnnotation extends Data.TaggedError("InvalidHeaderAnnotation")<{ readonly reason: string }> {}

const Token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

// Keywords whose values are schemas, by shape. Only `properties` keeps an annotation reachable.
const SchemaMapKeywords = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]
const SchemaKeywords = [
  "items",
  "additionalItems",
  "additionalProperties",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else"
]
const SchemaListKeywords = ["allOf", "anyOf", "oneOf", "prefixItems", "items"]

interface Found {
  readonly value: unknown
  readonly schema: JsonObject
  /** Property chain when reachable through `properties` alone, else undefined. */
  readonly path: ReadonlyArray<string> | undefined
  readonly at: string
}

const pointer = (segments: ReadonlyArray<string>): string =>
  segments.length === 0 ? "/" : segments.map((s) => "/" + s.replace(/~/g, "~0").replace(/\//g, "~1")).join("")

// Walks only schema positions, so a property that happens to be named "x-mcp-header" (a key of a
// `properties` map) or an `enum`/`const`/`default` value holding that key is never mistaken for
// an annotation.
const collect = (node: unknown, at: ReadonlyArray<string>, path: ReadonlyArray<string> | undefined, out: Array<Found>): void => {
  if (!isJsonObject(node)) return
  if (hasKey(node, Annotation)) out.push({ value: node[Annotation], schema: node, path, at: pointer(at) })
  for (const [k, v] of Object.entries(node)) {
    if (SchemaMapKeywords.includes(k) && isJsonObject(v)) {
      for (const [name, sub] of Object.entries(v)) {
        collect(sub, [...at, k, name], k === "properties" && path !== undefined ? [...path, name] : undefined, out)
      }
    } else if (SchemaListKeywords.includes(k) && Array.isArray(v)) {
      v.forEach((sub, i) => collect(sub, [...at, k, String(i)], undefined, out))
    } else if (SchemaKeywords.includes(k)) {
      collect(v, [...at, k], undefined, out)
    }
  }
}

const mirroredType = (schema: JsonObject): HeaderParam["type"] | undefined => {
  const allowed = (t: unknown): t is HeaderParam["type"] => t === "string" || t === "integer" || t === "boolean"
  const t = schema.type
  if (allowed(t)) return t
  // A nullable primitive (["string", "null"]) still has one header form; null means "omit".
  if (Array.isArray(t)) {
    const nonNull = t.filter((x) => x !== "null")
    if (nonNull.length === 1 && allowed(nonNull[0])) return nonNull[0]
  }
  return undefined
}

/**
 * The arguments a tool mirrors into headers, or why its annotations are invalid: an empty or
 * non-token value, a value used twice (case-insensitively), an annotation on a property that is
 * not `integer`, `string` or `boolean` (`number` is not allowed), or one that is not reachable from
 * the root through a chain of `properties` alone (not via `items`, `oneOf`/`anyOf`/`allOf`/`not`,
 * `if`/`then`/`else`, `$defs`/`$ref` or any other keyword, and not on the root itself).
 */
export const headerParams = (inputSchema: unknown): Either.Either<ReadonlyArray<HeaderParam>, InvalidHeaderAnnotation> => {
  const found: Array<Found> = []
  collect(inputSchema, [], [], found)
  const params: Array<HeaderParam> = []
  const seen = new Map<string, string>()
  for (const f of found) {
    const fail = (reason: string) => Either.left(new InvalidHeaderAnnotation({ reason: `${Annotation} at ${f.at}: ${reason}` }))
    if (f.path === undefined || f.path.length === 0) {
      return fail("the annotated schema is not reachable from the root through a chain of properties")
    }
    if (typeof f.value !== "string" || f.value.length === 0) return fail("the value must be a non-empty string")
    if (!Token.test(f.value)) return fail(`"${f.value}" is not an HTTP field-name token (RFC 9110 tchar only)`)
    const type = mirroredType(f.schema)
    if (type === undefined) {
      return fail(`"${f.value}" is on a property of type ${JSON.stringify(f.schema.type) ?? "(none)"}; only integer, string and boolean may be mirrored`)
    }
    const key = f.value.toLowerCase()
    const previous = seen.get(key)
    if (previous !== undefined) return fail(`"${f.value}" repeats "${previous}" (values must be unique, case-insensitively)`)
    seen.set(key, f.value)
    params.push({ header: f.value, path: f.path, type })
  }
  return Either.right(params)
}

/** A tool left out of a listing, and why. */
export interface ExcludedTool<T> {
  readonly tool: T
  readonly name: string
  readonly reason: string
}

/**
 * Splits a tool listing into the tools an HTTP client may offer and those it must exclude because
 * their `x-mcp-header` annotations are invalid (the spec asks for the name and reason to be logged).
 */
export const partitionTools = <T>(tools: ReadonlyArray<T>): {
  readonly kept: ReadonlyArray<T>
  readonly excluded: ReadonlyArray<ExcludedTool<T>>
} => {
  const kept: Array<T> = []
  const excluded: Array<ExcludedTool<T>> = []
  for (const tool of tools) {
    const schema = isJsonObject(tool) ? tool.inputSchema : undefined
    const r = headerParams(schema)
    if (Either.isRight(r)) kept.push(tool)
    else excluded.push({ tool, name: isJsonObject(tool) && typeof tool.name === "string" ? tool.name : "(unnamed)", reason: r.left.reason })
  }
  return { kept, excluded }
}

/** The value at a property path of the call arguments (undefined when any step is absent). */
export const valueAt = (args: unknown, path: ReadonlyArray<string>): unknown => {
  let cur: unknown = args
  for (const step of path) {
    if (!isJsonObject(cur) || !hasKey(cur, step)) return undefined
    cur = cur[step]
  }
  return cur
}

// ---------------------------------------------------------------------------------------------
// Outgoing

/** A modern request cannot be given its mirrored headers. */
export class HeaderEncodeError extends Data.TaggedError("HeaderEncodeError")<{ readonly reason: string }> {}

/**
 * The mirrored headers for an outgoing modern request or notification: `MCP-Protocol-Version`
 * from `_meta`, `Mcp-Method`, `Mcp-Name` where the method has one, and for `tools/call` one
 * `Mcp-Param-*` per annotated argument that has a non-null value (pass the tool's `inputSchema`).
 */
export const outgoingHeaders = (
  message: { readonly method: string; readonly params?: JsonObject | undefined },
  options: { readonly inputSchema?: unknown } = {}
): Either.Either<Record<string, string>, HeaderEncodeError> => {
  const version = metaOf(message.params)?.[ProtocolVersionKey]
  if (typeof version !== "string") {
    return Either.left(new HeaderEncodeError({ reason: `${message.method} carries no protocol version in _meta` }))
  }
  if (!sendsPlain(version)) return Either.left(new HeaderEncodeError({ reason: `protocol version ${JSON.stringify(version)} cannot be a header value` }))
  const headers: Record<string, string> = { [ProtocolVersionHeader]: version, [MethodHeader]: message.method }
  const name = mirroredName(message.method, message.params)
  if (name !== undefined) headers[NameHeader] = encodeValue(name)
  if (message.method === Method.ToolsCall && options.inputSchema !== undefined) {
    const params = headerParams(options.inputSchema)
    if (Either.isLeft(params)) return Either.left(new HeaderEncodeError({ reason: params.left.reason }))
    const args = message.params?.arguments
    for (const p of params.right) {
      const value = valueAt(args, p.path)
      if (value === undefined || value === null) continue
      const encoded = encodeScalar(value)
      if (Either.isLeft(encoded)) {
        return Either.left(new HeaderEncodeError({ reason: `argument ${p.path.join(".")} for ${ParamHeaderPrefix}${p.header}: ${encoded.left.reason}` }))
      }
      headers[ParamHeaderPrefix + p.header] = encoded.right
    }
  }
  return Either.right(headers)
}

// ---------------------------------------------------------------------------------------------
// Incoming

/** A mirrored header is missing, malformed or disagrees with the body (`-32020`). */
export class HeaderMismatch extends Data.TaggedError("HeaderMismatch")<{ readonly header: string; readonly reason: string }> {}

const mismatch = (header: string, reason: string) => Either.left(new HeaderMismatch({ header, reason }))
const trimmed = (s: string): string => s.replace(/^[ \t]+|[ \t]+$/g, "")
const ok: Either.Either<void, HeaderMismatch> = Either.right(undefined)

/**
 * Checks `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` against the body. On a request all
 * three are required (Mcp-Name where the method has one and the body holds it); a notification
 * need not send them, but what it sends must agree. A version the body does not state is left to
 * `_meta` validation (`-32602`).
 */
export const checkStandard = (
  headers: Headers,
  message: JsonRpc.Request | JsonRpc.Notification
): Either.Either<void, HeaderMismatch> => {
  const isRequest = JsonRpc.isRequest(message)
  const version = getHeader(headers, ProtocolVersionHeader)
  if (version === undefined) {
    if (isRequest) return mismatch(ProtocolVersionHeader, "MCP-Protocol-Version header is missing")
  } else {
    if (!isHeaderSafe(version)) return mismatch(ProtocolVersionHeader, "MCP-Protocol-Version header contains invalid characters")
    const body = metaOf(message.params)?.[ProtocolVersionKey]
    if (typeof body === "string" && trimmed(version) !== body) {
      return mismatch(ProtocolVersionHeader, `MCP-Protocol-Version header value '${trimmed(version)}' does not match body value '${body}'`)
    }
  }
  const method = getHeader(headers, MethodHeader)
  if (method === undefined) {
    if (isRequest) return mismatch(MethodHeader, "Mcp-Method header is missing")
  } else {
    if (!isHeaderSafe(method)) return mismatch(MethodHeader, "Mcp-Method header contains invalid characters")
    if (trimmed(method) !== message.method) {
      return mismatch(MethodHeader, `Mcp-Method header value '${trimmed(method)}' does not match body value '${message.method}'`)
    }
  }
  const source = nameSource(message.method)
  if (source === undefined) return ok
  const bodyName = mirroredName(message.method, message.params)
  const name = getHeader(headers, NameHeader)
  if (name === undefined) {
    return isRequest && bodyName !== undefined ? mismatch(NameHeader, `Mcp-Name header is missing (body has params.${source})`) : ok
  }
  const decoded = decodeValue(name)
  if (Either.isLeft(decoded)) return mismatch(NameHeader, `Mcp-Name header: ${decoded.left.reason}`)
  if (bodyName === undefined) return mismatch(NameHeader, `Mcp-Name header is present but the body has no params.${source}`)
  if (decoded.right !== bodyName) {
    return mismatch(NameHeader, `Mcp-Name header value '${decoded.right}' does not match body value '${bodyName}'`)
  }
  return ok
}

/**
 * Checks the `Mcp-Param-*` headers of a `tools/call` against its arguments: a header must be present
 * exactly when the body has a non-null value at the annotated path, must decode, and must match.
 * Headers for parameters the tool does not annotate are ignored (and forwarded by intermediaries).
 */
export const checkParams = (
  headers: Headers,
  args: unknown,
  params: ReadonlyArray<HeaderParam>
): Either.Either<void, HeaderMismatch> => {
  for (const p of params) {
    const name = ParamHeaderPrefix + p.header
    const body = valueAt(args, p.path)
    const raw = getHeader(headers, name)
    if (body === undefined || body === null) {
      if (raw !== undefined) return mismatch(name, `${name} header is present but arguments.${p.path.join(".")} has no value`)
      continue
    }
    if (raw === undefined) return mismatch(name, `${name} header is missing (arguments.${p.path.join(".")} has a value)`)
    const decoded = decodeValue(raw)
    if (Either.isLeft(decoded)) return mismatch(name, `${name} header: ${decoded.left.reason}`)
    if (!matchesBody(decoded.right, body)) {
      return mismatch(name, `${name} header value '${decoded.right}' does not match body value ${JSON.stringify(body)}`)
    }
  }
  return ok
}

// A tool's schema is the same object call after call (the listing keeps it), so its annotations
// are read once.
const knownParams = new WeakMap<object, Either.Either<ReadonlyArray<HeaderParam>, InvalidHeaderAnnotation>>()
const headerParamsOf = (inputSchema: unknown): Either.Either<ReadonlyArray<HeaderParam>, InvalidHeaderAnnotation> => {
  if (typeof inputSchema !== "object" || inputSchema === null) return headerParams(inputSchema)
  const known = knownParams.get(inputSchema)
  if (known !== undefined) return known
  const found = headerParams(inputSchema)
  knownParams.set(inputSchema, found)
  return found
}

/**
 * Every header check for an incoming modern message. Pass the called tool's `inputSchema` to check
 * its `Mcp-Param-*` headers; a tool whose annotations are invalid mirrors nothing (it should never
 * have been listed).
 */
export const checkIncoming = (
  headers: Headers,
  message: JsonRpc.Request | JsonRpc.Notification,
  options: { readonly inputSchema?: unknown } = {}
): Either.Either<void, HeaderMismatch> =>
  Either.flatMap(checkStandard(headers, message), () => {
    if (message.method !== Method.ToolsCall || options.inputSchema === undefined) return ok
    const params = headerParamsOf(options.inputSchema)
    return Either.isLeft(params) ? ok : checkParams(headers, message.params?.arguments, params.right)
  })

/** The `-32020` error response for a header check failure. */
export const mismatchResponse = (id: JsonRpc.RequestId | undefined, e: HeaderMismatch): JsonRpc.ErrorResponse =>
  ErrorData.headerMismatch(id, e.reason, e.header)
