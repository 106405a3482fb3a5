/**
 * A plain check of a modern request's `_meta` against `Meta.RequestMeta`, for the hot path: every
 * modern call's `_meta` is looked at once, and decoding it with the Schema cost a tenth of the
 * garbage a call makes. The Schema stays the definition. This check only ever says yes to what
 * the Schema decodes unchanged (a value the Schema decodes keeps every key and value as it came),
 * and is stricter wherever exactness would cost code: an `icons` list, or anything unusual, is
 * answered "not vouched for" and left to the Schema. test/RequestMetaCheck.test.ts runs both over
 * the same inputs.
 */
import { hasKey, isJsonObject, type JsonObject } from "./Json.js"

// The keys of Meta.ts, repeated rather than imported: Meta.ts imports this module.
const ProtocolVersionKey = "io.modelcontextprotocol/protocolVersion"
const ClientCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities"
const ClientInfoKey = "io.modelcontextprotocol/clientInfo"
const LogLevelKey = "io.modelcontextprotocol/logLevel"
const ProgressTokenKey = "progressToken"

const LogLevels: ReadonlySet<unknown> = new Set(["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"])

/** Absent, or a JSON object (Capabilities' `flag`). */
const optionalObject = (o: JsonObject, key: string): boolean => !hasKey(o, key) || isJsonObject(o[key])

/** Absent, or an object whose every value is an object (`experimental`, `extensions`). */
const optionalObjectOfObjects = (o: JsonObject, key: string): boolean => {
  if (!hasKey(o, key)) return true
  const v = o[key]
  if (!isJsonObject(v)) return false
  for (const k in v) if (hasKey(v, k) && !isJsonObject(v[k])) return false
  return true
}

/** Absent, or an object whose `a` and `b` are each absent or an object (`sampling`, `elicitation`). */
const optionalPair = (o: JsonObject, key: string, a: string, b: string): boolean => {
  if (!hasKey(o, key)) return true
  const v = o[key]
  return isJsonObject(v) && optionalObject(v, a) && optionalObject(v, b)
}

const optionalString = (o: JsonObject, key: string): boolean => !hasKey(o, key) || typeof o[key] === "string"

/** `Capabilities.ModernClientCapabilities`. */
const isModernClientCapabilities = (caps: unknown): boolean =>
  isJsonObject(caps) &&
  optionalObjectOfObjects(caps, "experimental") &&
  optionalObject(caps, "roots") &&
  optionalPair(caps, "sampling", "context", "tools") &&
  optionalPair(caps, "elicitation", "form", "url") &&
  optionalObjectOfObjects(caps, "extensions")

/** `Implementation.Implementation`, without icons (those go to the Schema). */
const isPlainImplementation = (info: unknown): boolean =>
  isJsonObject(info) &&
  typeof info.name === "string" &&
  typeof info.version === "string" &&
  optionalString(info, "title") &&
  !hasKey(info, "icons") &&
  optionalString(info, "description") &&
  optionalString(info, "websiteUrl")

/**
 * Whether `meta` is a `RequestMeta` with a non-empty protocol version, by plain checks. False
 * means "ask the Schema", not "invalid".
 */
export const isPlainRequestMeta = (meta: JsonObject): boolean => {
  const version = meta[ProtocolVersionKey]
  if (typeof version !== "string" || version.length === 0) return false
  if (!hasKey(meta, ClientCapabilitiesKey) || !isModernClientCapabilities(meta[ClientCapabilitiesKey])) return false
  if (hasKey(meta, ClientInfoKey) && !isPlainImplementation(meta[ClientInfoKey])) return false
  if (hasKey(meta, LogLevelKey) && !LogLevels.has(meta[LogLevelKey])) return false
  if (hasKey(meta, ProgressTokenKey)) {
    const token = meta[ProgressTokenKey]
    if (typeof token !== "string" && typeof token !== "number") return false
  }
  return true
}
