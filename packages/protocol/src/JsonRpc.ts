/**
 * JSON-RPC 2.0 as MCP uses it: the envelopes, the frame decoder every transport shares, and
 * builders for responses.
 *
 * Decoding yields a typed view of the envelope and keeps the raw JSON object beside it. Schema
 * decoding drops keys it does not know, and a gateway must forward what it does not understand
 * untouched, so code that forwards uses `raw` and code that inspects uses `message`.
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as ErrorCode from "./ErrorCode.js"
import * as FrameScan from "./FrameScan.js"
import { hasKey, isJsonObject, type JsonObject, optionalKey } from "./Json.js"

/** The only JSON-RPC version MCP speaks. */
export const Version = "2.0"

/** A request id. MCP forbids `null` ids on requests. */
export const RequestId = Schema.Union(Schema.String, Schema.Number)
/** A request id. */
export type RequestId = typeof RequestId.Type

/** Request and notification params: always an object in MCP (never positional). */
export const Params = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** A request: expects exactly one response with the same id. */
export const Request = Schema.Struct({
  jsonrpc: Schema.Literal(Version),
  id: RequestId,
  method: Schema.String,
  params: optionalKey(Params)
})
/** A request. */
export interface Request extends Schema.Schema.Type<typeof Request> {}

/** A notification: no id, never answered. */
export const Notification = Schema.Struct({
  jsonrpc: Schema.Literal(Version),
  method: Schema.String,
  params: optionalKey(Params),
  // An id makes it a request; without this a malformed request would decode as a notification.
  id: optionalKey(Schema.Never)
})
/** A notification. */
export interface Notification extends Schema.Schema.Type<typeof Notification> {}

/** The error member of an error response. */
export const ErrorObject = Schema.Struct({
  code: Schema.Int,
  message: Schema.String,
  data: optionalKey(Schema.Unknown)
})
/** The error member of an error response. */
export interface ErrorObject extends Schema.Schema.Type<typeof ErrorObject> {}

/** A successful response. MCP results are always objects. */
export const SuccessResponse = Schema.Struct({
  jsonrpc: Schema.Literal(Version),
  id: RequestId,
  result: Params,
  error: optionalKey(Schema.Never)
})
/** A successful response. */
export interface SuccessResponse extends Schema.Schema.Type<typeof SuccessResponse> {}

/**
 * An error response. The id is absent (or, from older peers, null) when the request's id could not
 * be read; MCP 2025-11-25 and later write it as absent.
 */
export const ErrorResponse = Schema.Struct({
  jsonrpc: Schema.Literal(Version),
  id: optionalKey(Schema.NullOr(RequestId)),
  error: ErrorObject,
  result: optionalKey(Schema.Never)
})
/** An error response. */
export interface ErrorResponse extends Schema.Schema.Type<typeof ErrorResponse> {}

/** Either kind of response. */
export const Response = Schema.Union(SuccessResponse, ErrorResponse)
/** Either kind of response. */
export type Response = SuccessResponse | ErrorResponse

/** Any single JSON-RPC message. */
export const Message = Schema.Union(Request, Notification, SuccessResponse, ErrorResponse)
/** Any single JSON-RPC message. */
export type Message = Request | Notification | Response

/** A batch: a non-empty array of messages (2025-03-26 only, in MCP). */
export const Batch = Schema.NonEmptyArray(Message)
/** A batch. */
export type Batch = typeof Batch.Type

/** Whether a message is a request. */
export const isRequest = (m: Message): m is Request => hasKey(m, "method") && hasKey(m, "id")
/** Whether a message is a notification. */
export const isNotification = (m: Message): m is Notification => hasKey(m, "method") && !hasKey(m, "id")
/** Whether a message is a response of either kind. */
export const isResponse = (m: Message): m is Response => !hasKey(m, "method")
/** Whether a message is a successful response. */
export const isSuccess = (m: Message): m is SuccessResponse => hasKey(m, "result")
/** Whether a message is an error response. */
export const isErrorResponse = (m: Message): m is ErrorResponse => hasKey(m, "error")

/** A decoded message: the typed view and the JSON object it came from, unknown keys included. */
export interface Parsed<M extends Message = Message> {
  readonly message: M
  readonly raw: JsonObject
}

/** A decoded frame: one message, or a batch whose elements succeed or fail one by one. */
export type Frame =
  | { readonly _tag: "Single"; readonly parsed: Parsed }
  | { readonly _tag: "Batch"; readonly elements: ReadonlyArray<Either.Either<Parsed, FrameError>> }

/**
 * Why a frame or one batch element could not be decoded: `-32700` for text that is not JSON,
 * `-32600` for JSON that is not a JSON-RPC message. `id` is set when the offending message had a
 * readable id, so the error response can echo it.
 */
export class FrameError extends Data.TaggedError("FrameError")<{
  readonly code: typeof ErrorCode.ParseError | typeof ErrorCode.InvalidRequest
  readonly reason: string
  readonly id?: RequestId
}> {}

const isRequestId = (u: unknown): u is RequestId => typeof u === "string" || typeof u === "number"

const invalid = (reason: string, id: unknown): FrameError =>
  isRequestId(id)
    ? new FrameError({ code: ErrorCode.InvalidRequest, reason, id })
    : new FrameError({ code: ErrorCode.InvalidRequest, reason })

const describe = (u: unknown): string =>
  u === null ? "null" : Array.isArray(u) ? "an array" : typeof u === "object" ? "an object" : `${typeof u} ${JSON.stringify(u)}`

// The envelope checks are written out (rather than left to a Schema union) so the -32600 reason
// names the member that is wrong instead of listing every union branch that did not match.
const structuralProblem = (o: JsonObject): string | undefined => {
  if (o.jsonrpc !== Version) {
    return hasKey(o, "jsonrpc") ? `jsonrpc must be "2.0", got ${describe(o.jsonrpc)}` : `jsonrpc member missing`
  }
  if (hasKey(o, "method")) {
    if (typeof o.method !== "string") return `method must be a string, got ${describe(o.method)}`
    if (hasKey(o, "id") && !isRequestId(o.id)) return `id must be a string or a number, got ${describe(o.id)}`
    if (hasKey(o, "params") && !isJsonObject(o.params)) return `params must be an object, got ${describe(o.params)}`
    return undefined
  }
  const hasResult = hasKey(o, "result")
  const hasError = hasKey(o, "error")
  if (hasResult && hasError) return "a response must not carry both result and error"
  if (hasResult) {
    if (!isRequestId(o.id)) return `a success response needs a string or number id, got ${describe(o.id)}`
    if (!isJsonObject(o.result)) return `result must be an object, got ${describe(o.result)}`
    return undefined
  }
  if (hasError) {
    if (hasKey(o, "id") && o.id !== null && !isRequestId(o.id)) {
      return `id must be a string, a number or null, got ${describe(o.id)}`
    }
    const e = o.error
    if (!isJsonObject(e)) return `error must be an object, got ${describe(e)}`
    if (typeof e.code !== "number" || !Number.isInteger(e.code)) return `error.code must be an integer, got ${describe(e.code)}`
    if (typeof e.message !== "string") return `error.message must be a string, got ${describe(e.message)}`
    return undefined
  }
  return "not a request, notification or response: it has no method, result or error"
}

/**
 * The typed view of a message `structuralProblem` found nothing wrong with: the envelope's own
 * members only, as the Schemas above would decode them (those checks are exactly the Schemas'
 * constraints), built directly because this runs for every message in both directions. Params and
 * results are the parsed objects themselves, unknown keys included.
 */
const viewOf = (o: JsonObject): Message => {
  if (hasKey(o, "method")) {
    const method = o.method as string
    const params = hasKey(o, "params") ? { params: o.params as JsonObject } : {}
    return hasKey(o, "id")
      ? { jsonrpc: Version, id: o.id as RequestId, method, ...params }
      : { jsonrpc: Version, method, ...params }
  }
  if (hasKey(o, "result")) return { jsonrpc: Version, id: o.id as RequestId, result: o.result as JsonObject }
  const e = o.error as JsonObject
  const error: ErrorObject = hasKey(e, "data")
    ? { code: e.code as number, message: e.message as string, data: e.data }
    : { code: e.code as number, message: e.message as string }
  return hasKey(o, "id") ? { jsonrpc: Version, id: o.id as RequestId | null, error } : { jsonrpc: Version, error }
}

/** Decodes one already-parsed JSON value as a single message (an array is not a message). */
export const decodeMessage = (value: unknown): Either.Either<Parsed, FrameError> => {
  if (!isJsonObject(value)) return Either.left(invalid(`a JSON-RPC message must be an object, got ${describe(value)}`, undefined))
  const problem = structuralProblem(value)
  if (problem !== undefined) return Either.left(invalid(problem, value.id))
  return Either.right({ message: viewOf(value), raw: value })
}

/** Decodes an already-parsed JSON value (e.g. an HTTP body) as a frame: a message or a batch. */
export const decodeFrameValue = (value: unknown): Either.Either<Frame, FrameError> => {
  if (Array.isArray(value)) {
    if (value.length === 0) return Either.left(invalid("an empty array is not a valid batch", undefined))
    return Either.right({ _tag: "Batch", elements: value.map(decodeMessage) })
  }
  return Either.map(decodeMessage(value), (parsed) => ({ _tag: "Single", parsed }))
}

const parseJson = (text: string): Either.Either<unknown, FrameError> => {
  try {
    return Either.right(JSON.parse(text))
  } catch (e) {
    return Either.left(
      new FrameError({ code: ErrorCode.ParseError, reason: `not valid JSON: ${e instanceof Error ? e.message : String(e)}` })
    )
  }
}

/** Decodes JSON text (one stdio line, one HTTP body) as a frame. */
export const decodeFrame = (text: string): Either.Either<Frame, FrameError> => Either.flatMap(parseJson(text), decodeFrameValue)

/** The deepest a host's frame may nest (the envelope, params and arguments all count). */
export const MaxDepth = 128

/**
 * The deepest an upstream's message may nest: far past any real result, and far short of the
 * few thousand levels at which anything that walks it (JSON.stringify included) overflows the stack.
 */
export const MaxUpstreamDepth = 512

/**
 * Decodes a frame from an upstream, held to `maxDepth` (`MaxUpstreamDepth` unless given). A
 * response nested deeper is replaced by an error response for its own request, so the caller is
 * answered rather than left waiting on a message nothing could forward; any other message that
 * deep is refused as a frame error.
 */
export const decodeUpstreamFrame = (text: string, maxDepth: number = MaxUpstreamDepth): Either.Either<Frame, FrameError> => {
  // Nesting past the bound takes more than `maxDepth` characters: a shorter line needs no scan.
  if (text.length <= maxDepth || !FrameScan.scan(text, maxDepth).tooDeep) return decodeFrame(text)
  return Either.flatMap(parseJson(text), (value) => {
    const tooDeep = `nests deeper than ${maxDepth} levels`
    if (isJsonObject(value) && isRequestId(value.id) && (hasKey(value, "result") || hasKey(value, "error"))) {
      return decodeFrameValue(failure(value.id, ErrorCode.InternalError, `the upstream's response ${tooDeep}, so it cannot be passed on`))
    }
    return Either.left(invalid(`the message ${tooDeep}`, undefined))
  })
}

/** The bounds a host's frame is held to. */
export interface FrameLimits {
  /** How deeply the frame may nest; `MaxDepth` unless given. */
  readonly maxDepth?: number
  /** How many messages a batch may hold; unbounded unless given. */
  readonly maxBatch?: number
}

/**
 * The id to answer a single message refused for its depth under, when it can be read: without it a
 * stdio host's request would never complete. The bounded scan stopped at the depth, so a numeric
 * id's exactness is checked by a second, unbounded scan (it keeps no stack, so any depth is safe).
 */
const deepMessageId = (text: string, value: unknown): RequestId | undefined => {
  if (!isJsonObject(value) || !isRequestId(value.id)) return undefined
  if (typeof value.id === "string") return value.id
  return FrameScan.scan(text, text.length).inexactIds.length === 0 ? value.id : undefined
}

/**
 * Decodes a frame from a host, held to `limits`: a frame nested past `maxDepth` and a batch longer
 * than `maxBatch` are refused whole (-32600) before anything walks them, under the message's own
 * id when it is a single message whose top-level id can be read (so its request completes); a message whose
 * numeric id no JavaScript number holds exactly (`1e400`, `1e-400`, an integer past 2^53) is
 * refused (-32600, no id) rather than answered under an id it did not send.
 */
export const decodeHostFrame = (text: string, limits: FrameLimits = {}): Either.Either<Frame, FrameError> => {
  const maxDepth = limits.maxDepth ?? MaxDepth
  const scanned = FrameScan.scan(text, maxDepth)
  return Either.flatMap(parseJson(text), (value): Either.Either<Frame, FrameError> => {
    if (scanned.tooDeep) return Either.left(invalid(`the message nests deeper than ${maxDepth} levels`, deepMessageId(text, value)))
    if (Array.isArray(value) && limits.maxBatch !== undefined && value.length > limits.maxBatch) {
      return Either.left(invalid(`a batch may hold at most ${limits.maxBatch} messages, this one has ${value.length}`, undefined))
    }
    if (scanned.inexactIds.length === 0) return decodeFrameValue(value)
    const inexact = new Map(scanned.inexactIds.map((e) => [e.index, e.text]))
    const refusal = (text: string) =>
      invalid(`id ${text} cannot be echoed exactly; a numeric id must be an integer within ±(2^53 − 1) or a number JSON round-trips`, undefined)
    if (!Array.isArray(value)) {
      const text = inexact.get(0)
      return text === undefined ? decodeFrameValue(value) : Either.left(refusal(text))
    }
    const frame = decodeFrameValue(value)
    if (Either.isLeft(frame) || frame.right._tag === "Single") return frame
    return Either.right({
      _tag: "Batch",
      elements: frame.right.elements.map((element, index) => {
        const text = inexact.get(index)
        return text === undefined ? element : Either.left(refusal(text))
      })
    })
  })
}

/** Serialises a message, a raw object being forwarded, or a batch of either, as one JSON text. */
export const encodeFrame = (body: Message | JsonObject | ReadonlyArray<Message | JsonObject>): string => JSON.stringify(body)

/** Builds a request. */
export const request = (id: RequestId, method: string, params?: JsonObject): Request =>
  params === undefined ? { jsonrpc: Version, id, method } : { jsonrpc: Version, id, method, params }

/** Builds a notification. */
export const notification = (method: string, params?: JsonObject): Notification =>
  params === undefined ? { jsonrpc: Version, method } : { jsonrpc: Version, method, params }

/** Builds a successful response. */
export const success = (id: RequestId, result: JsonObject): SuccessResponse => ({ jsonrpc: Version, id, result })

/**
 * Builds an error response. With no readable id the id is omitted, as MCP's schema has it,
 * rather than sent as null, which MCP's own SDK schemas reject.
 */
export const failure = (
  id: RequestId | null | undefined,
  code: number,
  message: string,
  data?: unknown
): ErrorResponse => {
  const error: ErrorObject = data === undefined ? { code, message } : { code, message, data }
  return id === null || id === undefined ? { jsonrpc: Version, error } : { jsonrpc: Version, id, error }
}

/**
 * An error response that names no request, with `"id": null` as JSON-RPC 2.0 writes it when the
 * request's id could not be read (a parse error, an unreadable message). stdio uses this form:
 * its readers expect every reply to carry an id member. HTTP leaves the id out, as MCP's schema
 * has it, which the official SDKs' HTTP clients need.
 */
export const withNullId = (response: ErrorResponse): ErrorResponse =>
  response.id === undefined || response.id === null ? { jsonrpc: Version, id: null, error: response.error } : response

/** The error response for a frame that could not be decoded. */
export const frameErrorResponse = (e: FrameError): ErrorResponse =>
  failure(e.id, e.code, e.code === ErrorCode.ParseError ? `Parse error: ${e.reason}` : `Invalid Request: ${e.reason}`)

/** The id of a message, when it has one. */
export const idOf = (m: Message): RequestId | undefined => (isRequestId(m.id) ? m.id : undefined)
