/**
 * How a value travels in `Mcp-Name` or `Mcp-Param-*`: verbatim when a header carries it unchanged,
 * otherwise as `=?base64?<base64 of UTF-8>?=`; and how an argument value is written as header text
 * and compared with the body once received.
 */
import { Buffer } from "node:buffer"
import { TextDecoder } from "node:util"
import * as Data from "effect/Data"
import * as Either from "effect/Either"

const Prefix = "=?base64?"
const Suffix = "?="

/** Whether a value is in sentinel form: lowercase prefix and suffix, not overlapping. */
const isSentinel = (s: string): boolean => s.length >= Prefix.length + Suffix.length && s.startsWith(Prefix) && s.endsWith(Suffix)

/** Whether every character is one a header value may carry: visible ASCII, space, tab. */
export const isHeaderSafe = (s: string): boolean => /^[\t\x20-\x7e]*$/.test(s)

/**
 * Whether a value is sent verbatim rather than in sentinel form. Tab is header-safe but sent
 * encoded anyway: it is whitespace an intermediary may fold or trim, and the conformance suite's
 * client checks expect it encoded.
 */
export const sendsPlain = (s: string): boolean => /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/.test(s) && !isSentinel(s)

/**
 * Encodes a string for `Mcp-Name` or `Mcp-Param-*`: verbatim when a header carries it unchanged,
 * otherwise (non-ASCII, control characters, leading or trailing whitespace, or text that looks like
 * the sentinel itself) as `=?base64?…?=`.
 */
export const encodeValue = (value: string): string => sendsPlain(value) ? value : `${Prefix}${Buffer.from(value, "utf8").toString("base64")}${Suffix}`

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
