/**
 * The mirrored request headers of modern Streamable HTTP, shared by the client side (what to send)
 * and the server side (whether what arrived agrees with the body).
 *
 * `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` mirror the body so intermediaries can route
 * without parsing it; `Mcp-Param-{V}` mirrors tool arguments whose schema carries
 * `x-mcp-header: V` (HeaderParams.ts). Values that a header cannot carry verbatim travel as
 * `=?base64?<base64 of UTF-8>?=` (HeaderValue.ts). Any disagreement is `-32020` (HTTP 400).
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as ErrorData from "./ErrorData.js"
import { type HeaderParam, headerParams, headerParamsOf, valueAt } from "./HeaderParams.js"
import { decodeValue, encodeScalar, encodeValue, isHeaderSafe, matchesBody, sendsPlain } from "./HeaderValue.js"
import { isJsonObject, type JsonObject } from "./Json.js"
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
const isBlank = (c: number): boolean => c === 32 || c === 9
// Header values almost never have blanks around them: those are given back without a regex run.
const trimmed = (s: string): string => s.length > 0 && (isBlank(s.charCodeAt(0)) || isBlank(s.charCodeAt(s.length - 1))) ? s.replace(/^[ \t]+|[ \t]+$/g, "") : s
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

/**
 * Every header check for an incoming modern message. Pass the called tool's `inputSchema` to check
 * its `Mcp-Param-*` headers; a tool whose annotations are invalid mirrors nothing (it should never
 * have been listed).
 */
export const checkIncoming = (
  headers: Headers,
  message: JsonRpc.Request | JsonRpc.Notification,
  options: { readonly inputSchema?: unknown } = {}
): Either.Either<void, HeaderMismatch> => Either.flatMap(checkStandard(headers, message), () => checkToolParams(headers, message, options.inputSchema))

/**
 * The second half of `checkIncoming`, for a message whose standard headers `checkStandard` has
 * passed already (Classify does, for every modern POST): its `Mcp-Param-*` headers against the
 * called tool's `inputSchema`, when it is a `tools/call`.
 */
export const checkToolParams = (
  headers: Headers,
  message: JsonRpc.Request | JsonRpc.Notification,
  inputSchema: unknown
): Either.Either<void, HeaderMismatch> => {
  if (message.method !== Method.ToolsCall || inputSchema === undefined) return ok
  const params = headerParamsOf(inputSchema)
  return Either.isLeft(params) ? ok : checkParams(headers, message.params?.arguments, params.right)
}

/** The `-32020` error response for a header check failure. */
export const mismatchResponse = (id: JsonRpc.RequestId | undefined, e: HeaderMismatch): JsonRpc.ErrorResponse =>
  ErrorData.headerMismatch(id, e.reason, e.header)
