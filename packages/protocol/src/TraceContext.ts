/**
 * W3C Trace Context (`traceparent`, `tracestate`) as MCP carries it: in a request's `_meta` (the
 * one exception to the `_meta` prefix rule) and, on Streamable HTTP, in the HTTP headers of the
 * same names.
 *
 * Parsing is strict and never fails: a value that is not exactly what the recommendation allows is
 * no trace context at all, so a malformed one starts a new trace rather than an error.
 */

/** The `_meta` key (and HTTP header) of the parent's trace and span ids. */
export const TraceparentKey = "traceparent"
/** The `_meta` key (and HTTP header) of vendor-specific trace state that travels with it. */
export const TracestateKey = "tracestate"

/** A parsed `traceparent`. */
export interface Traceparent {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string
  /** 16 lowercase hex digits, not all zero. */
  readonly spanId: string
  /** The `sampled` flag: whether the caller records this trace. */
  readonly sampled: boolean
}

// Version 00 is exactly 55 characters; a later version may append fields after a dash, which a
// version-00 parser must tolerate (and read the first four fields as version 00).
const pattern = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/
const zeroTrace = "0".repeat(32)
const zeroSpan = "0".repeat(16)

/** The trace context in `value`, or undefined when it is absent or malformed in any way. */
export const parseTraceparent = (value: unknown): Traceparent | undefined => {
  if (typeof value !== "string" || value.length < 55) return undefined
  const m = pattern.exec(value)
  if (m === null) return undefined
  const [, version, traceId, spanId, flags, rest] = m
  if (version === undefined || traceId === undefined || spanId === undefined || flags === undefined) return undefined
  // ff is forbidden; 00 has no trailing fields.
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined
  if (traceId === zeroTrace || spanId === zeroSpan) return undefined
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 }
}

/** The version-00 `traceparent` of a span. */
export const formatTraceparent = (context: Traceparent): string => `00-${context.traceId}-${context.spanId}-${context.sampled ? "01" : "00"}`

// A list member is `key=value`: key a lowercase simple key or `tenant@system`, value printable
// ASCII without `,` and `=` and not ending in a space; at most 32 members.
const memberPattern =
  /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/

/**
 * `value` when it is a valid `tracestate` (empty members between commas are allowed and kept as
 * they are), else undefined: a malformed one is dropped, never passed on.
 */
export const parseTracestate = (value: unknown): string | undefined => {
  if (typeof value !== "string" || value.length === 0 || value.length > 512) return undefined
  let members = 0
  for (const raw of value.split(",")) {
    const member = raw.trim()
    if (member.length === 0) continue
    if (++members > 32 || !memberPattern.test(member)) return undefined
  }
  return members === 0 ? undefined : value
}
