/**
 * `_meta`: the reserved keys, the per-request envelope of the modern era, and its validation.
 *
 * A modern request carries its protocol version, client capabilities and (optionally) client
 * identity and log level in `params._meta`; nothing is inferred from earlier requests. A request
 * missing a required field is `-32602` (HTTP 400); a version the server does not serve is `-32022`
 * with `{supported, requested}`.
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { ModernClientCapabilities } from "./Capabilities.js"
import * as ErrorCode from "./ErrorCode.js"
import { Implementation } from "./Implementation.js"
import { describeParseError, isJsonObject, type JsonObject, open, optionalKey } from "./Json.js"
import * as JsonRpc from "./JsonRpc.js"
import { isPlainRequestMeta } from "./RequestMetaCheck.js"
import { ModernRevisions } from "./Revision.js"

/** The request's protocol version (required on modern requests). */
export const ProtocolVersionKey = "io.modelcontextprotocol/protocolVersion"
/** The request's client capabilities (required on modern requests; `{}` declares none). */
export const ClientCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities"
/** The client's identity (optional, SHOULD be sent). */
export const ClientInfoKey = "io.modelcontextprotocol/clientInfo"
/** The log level this request opts into; absent means no log notifications for it. */
export const LogLevelKey = "io.modelcontextprotocol/logLevel"
/** Opts a request into progress notifications (every revision). */
export const ProgressTokenKey = "progressToken"
/** Tags notifications of a subscriptions/listen stream with the listen request's id. */
export const SubscriptionIdKey = "io.modelcontextprotocol/subscriptionId"
/** The server's identity, in every modern result's `_meta`. */
export const ServerInfoKey = "io.modelcontextprotocol/serverInfo"
/** Ties a message to a task (2025-11-25 core tasks). */
export const RelatedTaskKey = "io.modelcontextprotocol/related-task"

/** Log severities (RFC 5424 names). */
export const LoggingLevel = Schema.Literal("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
/** A log severity. */
export type LoggingLevel = typeof LoggingLevel.Type

/** An opaque progress token. */
export const ProgressToken = Schema.Union(Schema.String, Schema.Number)
/** An opaque progress token. */
export type ProgressToken = typeof ProgressToken.Type

/** A modern request's `_meta`, other keys kept. */
export const RequestMeta = open({
  [ProtocolVersionKey]: Schema.String,
  [ClientCapabilitiesKey]: ModernClientCapabilities,
  [ClientInfoKey]: optionalKey(Implementation),
  [LogLevelKey]: optionalKey(LoggingLevel),
  [ProgressTokenKey]: optionalKey(ProgressToken)
})
/** A modern request's `_meta`. */
export type RequestMeta = typeof RequestMeta.Type

/** A legacy request's `_meta`: only the progress token is defined. */
export const LegacyRequestMeta = open({ [ProgressTokenKey]: optionalKey(ProgressToken) })
/** A legacy request's `_meta`. */
export type LegacyRequestMeta = typeof LegacyRequestMeta.Type

/** A notification's `_meta`. */
export const NotificationMeta = open({ [SubscriptionIdKey]: optionalKey(JsonRpc.RequestId) })
/** A notification's `_meta`. */
export type NotificationMeta = typeof NotificationMeta.Type

/** A result's `_meta`. */
export const ResultMeta = open({ [ServerInfoKey]: optionalKey(Implementation) })
/** A result's `_meta`. */
export type ResultMeta = typeof ResultMeta.Type

/**
 * Whether a `_meta` key is reserved for MCP: its prefix's second dot-label is `modelcontextprotocol`
 * or `mcp` (`io.modelcontextprotocol/…`, `dev.mcp/…`; not `com.example.mcp/…`).
 */
export const isReservedKey = (key: string): boolean => {
  const slash = key.indexOf("/")
  if (slash < 0) return false
  // The second label is read in place: this runs for every `_meta` key of every call, and a
  // slice and a split per key were garbage on each.
  const first = key.indexOf(".")
  if (first < 0 || first > slash) return false
  const end = key.indexOf(".", first + 1)
  const stop = end < 0 || end > slash ? slash : end
  const length = stop - first - 1
  return (length === 20 && key.startsWith("modelcontextprotocol", first + 1)) || (length === 3 && key.startsWith("mcp", first + 1))
}

/** The `_meta` object of some params, if there is one. */
export const metaOf = (params: unknown): JsonObject | undefined => isJsonObject(params) && isJsonObject(params._meta) ? params._meta : undefined

/**
 * Whether params claim the modern era: their `_meta` has a protocolVersion key, whatever its value.
 * A malformed claim is still a claim; it is answered `-32602`, never quietly served as legacy.
 */
export const hasVersionClaim = (params: unknown): boolean => {
  const meta = metaOf(params)
  return meta !== undefined && Object.prototype.hasOwnProperty.call(meta, ProtocolVersionKey)
}

/** One thing wrong with a modern request's `_meta`. */
export interface MetaProblem {
  readonly field: string
  readonly problem: "missing" | "invalid"
  readonly detail: string
}

/** A modern request's `_meta` lacks a required field or holds a malformed one (`-32602`). */
export class InvalidRequestMeta extends Data.TaggedError("InvalidRequestMeta")<{
  readonly problems: ReadonlyArray<MetaProblem>
}> {}

/** The request names a protocol version the server does not serve (`-32022`). */
export class UnsupportedProtocolVersion extends Data.TaggedError("UnsupportedProtocolVersion")<{
  readonly supported: ReadonlyArray<string>
  readonly requested: string
}> {}

const problem = (field: string, kind: MetaProblem["problem"], detail: string): MetaProblem => ({ field, problem: kind, detail })

const checkOptional = <A, I>(meta: JsonObject, key: string, schema: Schema.Schema<A, I>, out: Array<MetaProblem>) => {
  if (!Object.prototype.hasOwnProperty.call(meta, key)) return
  const r = Schema.decodeUnknownEither(schema)(meta[key])
  if (Either.isLeft(r)) out.push(problem(key, "invalid", describeParseError(r.left)))
}

/**
 * Checks the shape of a modern request's `_meta`, reporting every problem at once so a client can
 * fix its request in one go. The version is not checked against a supported list here: the
 * header-versus-body checks come first (see Classify).
 */
export const parseRequestMeta = (params: unknown): Either.Either<RequestMeta, InvalidRequestMeta> => {
  const meta = isJsonObject(params) ? params._meta : undefined
  if (meta === undefined) {
    return Either.left(new InvalidRequestMeta({ problems: [problem("_meta", "missing", "params._meta is required on a 2026-07-28 request")] }))
  }
  if (!isJsonObject(meta)) {
    return Either.left(new InvalidRequestMeta({ problems: [problem("_meta", "invalid", "params._meta must be an object")] }))
  }
  // The usual `_meta` is passed by a plain check (RequestMetaCheck.ts) that never accepts what the
  // Schema refuses; the decode of it was a tenth of a call's garbage. It is cheaper than the
  // remembered answer below, whose WeakMap entry per request the collector pays for too.
  if (isPlainRequestMeta(meta)) return Either.right(meta as RequestMeta)
  // The transport classifies a request by its `_meta` and the Server validates it again: the
  // second look at the same (never modified) object is the first one's answer.
  const known = parsedMeta.get(meta)
  if (known !== undefined) return known
  const parsed = parseMetaObject(meta)
  parsedMeta.set(meta, parsed)
  return parsed
}

const parsedMeta = new WeakMap<JsonObject, Either.Either<RequestMeta, InvalidRequestMeta>>()

const decodeRequestMeta = Schema.decodeUnknownEither(RequestMeta)

const parseMetaObject = (meta: JsonObject): Either.Either<RequestMeta, InvalidRequestMeta> => {
  // Most requests are well formed: one decode says so. Only a failing one is taken apart field
  // by field, so that every problem is reported at once.
  const whole = decodeRequestMeta(meta)
  const claimed = meta[ProtocolVersionKey]
  if (Either.isRight(whole) && typeof claimed === "string" && claimed.length > 0) return Either.right(whole.right)
  const problems: Array<MetaProblem> = []
  const version = meta[ProtocolVersionKey]
  if (version === undefined) problems.push(problem(ProtocolVersionKey, "missing", "the protocol version is required"))
  else if (typeof version !== "string" || version.length === 0) problems.push(problem(ProtocolVersionKey, "invalid", "must be a non-empty string"))
  const caps = meta[ClientCapabilitiesKey]
  if (caps === undefined) problems.push(problem(ClientCapabilitiesKey, "missing", "client capabilities are required ({} declares none)"))
  else checkOptional(meta, ClientCapabilitiesKey, ModernClientCapabilities, problems)
  checkOptional(meta, ClientInfoKey, Implementation, problems)
  checkOptional(meta, LogLevelKey, LoggingLevel, problems)
  checkOptional(meta, ProgressTokenKey, ProgressToken, problems)
  if (problems.length > 0) return Either.left(new InvalidRequestMeta({ problems }))
  return whole.pipe(
    Either.mapLeft((e) => new InvalidRequestMeta({ problems: [problem("_meta", "invalid", describeParseError(e))] }))
  )
}

/** Checks a requested version against the versions served. */
export const checkVersion = (
  requested: string,
  supported: ReadonlyArray<string> = ModernRevisions
): Either.Either<string, UnsupportedProtocolVersion> =>
  supported.includes(requested) ? Either.right(requested) : Either.left(new UnsupportedProtocolVersion({ supported, requested }))

/** Validates a modern request's `_meta` completely: shape first, then version support. */
export const validateRequestMeta = (
  params: unknown,
  supported: ReadonlyArray<string> = ModernRevisions
): Either.Either<RequestMeta, InvalidRequestMeta | UnsupportedProtocolVersion> =>
  Either.flatMap(parseRequestMeta(params), (meta) => Either.map(checkVersion(meta[ProtocolVersionKey], supported), () => meta))

/** The data of a `-32602` for a malformed `_meta`: which fields are missing and which are invalid. */
export interface InvalidMetaData {
  readonly missing?: ReadonlyArray<string>
  readonly invalid?: ReadonlyArray<{ readonly field: string; readonly reason: string }>
}

/** The JSON-RPC error for a `_meta` validation failure. */
export const metaErrorObject = (
  e: InvalidRequestMeta | UnsupportedProtocolVersion
): { readonly code: number; readonly message: string; readonly data: unknown } => {
  if (e._tag === "UnsupportedProtocolVersion") {
    return {
      code: ErrorCode.UnsupportedProtocolVersion,
      message: `Unsupported protocol version: ${e.requested}`,
      data: { supported: [...e.supported], requested: e.requested }
    }
  }
  const missing = e.problems.filter((p) => p.problem === "missing").map((p) => p.field)
  const invalid = e.problems.filter((p) => p.problem === "invalid").map((p) => ({ field: p.field, reason: p.detail }))
  const data: InvalidMetaData = {
    ...(missing.length > 0 ? { missing } : {}),
    ...(invalid.length > 0 ? { invalid } : {})
  }
  const where = (field: string) => (field === "_meta" ? "params._meta" : `_meta ${field}`)
  const parts = [
    ...missing.map((f) => `${where(f)} is missing`),
    ...invalid.map((i) => `${where(i.field)} is invalid (${i.reason})`)
  ]
  return { code: ErrorCode.InvalidParams, message: `Invalid params: ${parts.join("; ")}`, data }
}

/** The JSON-RPC error response for a `_meta` validation failure of request `id`. */
export const metaErrorResponse = (
  id: JsonRpc.RequestId | undefined,
  e: InvalidRequestMeta | UnsupportedProtocolVersion
): JsonRpc.ErrorResponse => {
  const o = metaErrorObject(e)
  return JsonRpc.failure(id, o.code, o.message, o.data)
}

/** The fields of the `_meta` a modern client puts on a request. */
export interface RequestMetaFields {
  readonly protocolVersion: string
  readonly clientCapabilities: JsonObject
  readonly clientInfo?: Implementation | undefined
  readonly logLevel?: LoggingLevel | undefined
  readonly progressToken?: ProgressToken | undefined
}

/**
 * Sets a modern request's own `_meta` fields on `into`, after the keys it already holds. Assigned
 * one by one: a literal with a spread per optional field made four objects of every upstream call.
 */
export const putRequestMeta = (into: Record<string, unknown>, fields: RequestMetaFields): void => {
  into[ProtocolVersionKey] = fields.protocolVersion
  into[ClientCapabilitiesKey] = fields.clientCapabilities
  if (fields.clientInfo !== undefined) into[ClientInfoKey] = fields.clientInfo
  if (fields.logLevel !== undefined) into[LogLevelKey] = fields.logLevel
  if (fields.progressToken !== undefined) into[ProgressTokenKey] = fields.progressToken
}

/** Builds the `_meta` a modern client puts on a request. */
export const requestMeta = (fields: RequestMetaFields): JsonObject => {
  const meta: Record<string, unknown> = {}
  putRequestMeta(meta, fields)
  return meta
}

/**
 * Copies the keys of `meta` that are not reserved onto `into`; answers how many it copied. Read
 * key by key, without the pair per key and the arrays that `Object.entries` and a filter make for
 * every call's `_meta`. A `__proto__` key (JSON.parse makes it an own key) stays a key.
 */
export const copyUnreserved = (meta: JsonObject, into: Record<string, unknown>): number => {
  let copied = 0
  for (const key of Object.keys(meta)) {
    if (isReservedKey(key)) continue
    if (key === "__proto__") Object.defineProperty(into, key, { value: meta[key], enumerable: true, writable: true, configurable: true })
    else into[key] = meta[key]
    copied++
  }
  return copied
}
