/**
 * What the Server reads of a request's params: the shapes each method takes, a retry's fields, the
 * `_meta` passed on upstream, a call's log level and the caller's session identity.
 */
import { describeParseError, hasKey, isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as Meta from "@mcpx-fx/protocol/Meta"
import * as Method from "@mcpx-fx/protocol/Method"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { InputRetry, NotificationChannel } from "../Backend.js"
import { InvalidParams } from "../ServerErrors.js"

/** mcpx-fx's own `_meta` key naming the caller's session (call scope) explicitly. */
export const SessionKey = "dev.mcpx/session"
/** opencode's per-conversation id, sent on every call; used as the caller's session when present. */
export const OpencodeSessionKey = "ai.opencode/sessionID"
/** The keys read, in order, for a caller's session identity. */
export const SessionIdentityKeys: ReadonlyArray<string> = [SessionKey, OpencodeSessionKey]

// ---------------------------------------------------------------------------------------------
// Params

export const NameParams = Schema.Struct({
  name: Schema.String,
  arguments: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Unknown }), { exact: true })
})
export const PromptParams = Schema.Struct({
  name: Schema.String,
  arguments: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), { exact: true })
})
export const ReadParams = Schema.Struct({ uri: Schema.String })
export const CompleteParams = Schema.Struct({
  ref: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  argument: Schema.Struct({ name: Schema.String, value: Schema.String })
})
export const ListParams = Schema.Struct({ cursor: Schema.optionalWith(Schema.String, { exact: true }) })

/**
 * Params decoded by `schema`, or what is wrong with them. An Either is an effect too, and a caller
 * on a call's path reads it in place rather than spending a step of the fiber on it.
 */
export const decodeParams = <A, I>(schema: Schema.Schema<A, I>, params: JsonObject): Either.Either<A, InvalidParams> =>
  Either.mapLeft(Schema.decodeUnknownEither(schema)(params), (e) => new InvalidParams({ detail: describeParseError(e) }))

export const RetryFields = Schema.Struct({
  inputResponses: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Unknown }), { exact: true }),
  requestState: Schema.optionalWith(Schema.String, { exact: true })
})

/**
 * The MRTR retry fields of a modern request, if it is a retry. The answers are kept raw: which
 * answer fits which question is for whoever asked it (the Backend) to judge.
 */
export const retryOf = (params: JsonObject): Either.Either<InputRetry | undefined, InvalidParams> =>
  // Nearly every call is a first round: nothing to decode.
  !hasKey(params, "inputResponses") && !hasKey(params, "requestState")
    ? Either.right(undefined)
    : Either.map(decodeParams(RetryFields, params), (r) => r.inputResponses === undefined && r.requestState === undefined ? undefined : r)

/**
 * A call's name and arguments. The common shape (a string name, arguments an object or absent) is
 * taken as it is, which is what decoding `NameParams` yields for it; anything else is decoded,
 * for the error that says what is wrong.
 */
export const nameParams = (params: JsonObject): Either.Either<typeof NameParams.Type, InvalidParams> => {
  const args = params.arguments
  if (typeof params.name === "string" && (args === undefined || isJsonObject(args))) {
    return Either.right(args === undefined ? { name: params.name } : { name: params.name, arguments: args })
  }
  return decodeParams(NameParams, params)
}

/**
 * The `_meta` that travels on to the upstream: the protocol's reserved keys describe this hop (and
 * the Backend declares its own), everything else (progress token, third-party keys) is the caller's.
 */
export const forwardMeta = (params: JsonObject): JsonObject | undefined => {
  const meta = Meta.metaOf(params)
  if (meta === undefined) return undefined
  const out: Record<string, unknown> = {}
  return Meta.copyUnreserved(meta, out) === 0 ? undefined : out
}

// The schema lists the levels from least to most severe.
const levels: ReadonlyArray<string> = Meta.LoggingLevel.literals

/**
 * A call's notification channel and log level: log messages below the level the host asked for
 * (or all of them, when it asked for none) are dropped here, whatever the upstream sent.
 */
export const notifying = (
  notify: NotificationChannel | undefined,
  logLevel: Meta.LoggingLevel | undefined
): { readonly notify?: NotificationChannel; readonly logLevel?: Meta.LoggingLevel } => {
  if (notify === undefined) return {}
  const floor = logLevel === undefined ? Infinity : levels.indexOf(logLevel)
  const filtered: NotificationChannel = (n) => {
    if (n.method !== Method.NotificationsMessage) return notify(n)
    const level = n.params?.level
    const at = typeof level === "string" ? levels.indexOf(level) : -1
    return at >= floor ? notify(n) : Effect.void
  }
  return logLevel === undefined ? { notify: filtered } : { notify: filtered, logLevel }
}

/** The caller's explicit session identity from a request's `_meta`, if it names one. */
export const sessionIdentity = (params: JsonObject | undefined): string | undefined => {
  const meta = Meta.metaOf(params)
  if (meta === undefined) return undefined
  for (const key of SessionIdentityKeys) {
    const v = meta[key]
    if (typeof v === "string" && v.length > 0) return v
  }
  return undefined
}
