/**
 * One pass over a frame's JSON text, before anything walks the parsed value, for what the parsed
 * value can no longer tell:
 *
 * - how deeply it nests: `JSON.parse` copes with any depth, but everything after it that recurses
 *   (Schema, canonical JSON, `JSON.stringify` on the way upstream) overflows the stack on a few
 *   thousand levels, so a frame past the bound is refused before it is walked;
 * - the exact text of each message's numeric `id`: `1e400` parses as Infinity, `1e-400` as 0, and
 *   integers past 2^53 as a neighbour, so an id that a JavaScript number cannot hold exactly would
 *   be echoed changed. Only the text shows that.
 *
 * The scan never validates: text that is not JSON is `JSON.parse`'s to refuse, and whatever the
 * scan says about it is ignored.
 */

/** What the scan found. */
export interface Scan {
  /** The frame nests deeper than the bound (the scan stopped there). */
  readonly tooDeep: boolean
  /**
   * The messages whose numeric `id` no JavaScript number holds exactly, each with the id's text:
   * index 0 for a single message, the element's index in a batch.
   */
  readonly inexactIds: ReadonlyArray<{ readonly index: number; readonly text: string }>
}

const Quote = 34
const Backslash = 92
const OpenObject = 123
const CloseObject = 125
const OpenArray = 91
const CloseArray = 93
const Comma = 44
const Colon = 58
const Minus = 45

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13
const isNumberChar = (c: number) => (c >= 48 && c <= 57) || c === Minus || c === 43 || c === 46 || c === 101 || c === 69

/** The index just past the string that opens at `start` (a quote), or the text's length. */
const skipString = (text: string, start: number): number => {
  let at = start + 1
  for (;;) {
    const close = text.indexOf("\"", at)
    if (close < 0) return text.length
    let slashes = 0
    for (let k = close - 1; k > start && text.charCodeAt(k) === Backslash; k--) slashes++
    if (slashes % 2 === 0) return close + 1
    at = close + 1
  }
}

/** A decimal number's value as digits and exponent, with the zeros that carry nothing dropped. */
const canonicalDecimal = (token: string): string | undefined => {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(token)
  if (m === null) return undefined
  const [, sign, whole = "", fraction = "", exponent = "0"] = m
  let digits = (whole + fraction).replace(/^0+/, "")
  if (digits.length === 0) return "0"
  const leadingZerosDropped = whole.length + fraction.length - digits.length
  // The value is 0.<digits> × 10^point.
  let point = Number(exponent) + whole.length - leadingZerosDropped
  digits = digits.replace(/0+$/, "")
  if (!Number.isFinite(point)) point = Number.MAX_SAFE_INTEGER
  return `${sign}${digits}e${point}`
}

/**
 * Whether `token` (JSON number text) round-trips through a JavaScript number unchanged in value,
 * and as an integer stays within ±(2^53 − 1), where every integer is exact.
 */
export const isExactNumber = (token: string): boolean => {
  const n = Number(token)
  if (!Number.isFinite(n)) return false
  if (Number.isInteger(n) && !Number.isSafeInteger(n)) return false
  if (String(n) === token) return true
  return canonicalDecimal(token) === canonicalDecimal(String(n).replace("e+", "e"))
}

/**
 * Scans `text` for nesting deeper than `maxDepth` and for inexact numeric ids of the messages at
 * the top (a single object, or a batch array's elements).
 */
export const scan = (text: string, maxDepth: number): Scan => {
  const inexactIds: Array<{ index: number; text: string }> = []
  // Per open container: 1 an object, 2 an array. The scan is synchronous, so one buffer serves
  // every scan within the usual bounds (each frame in both directions is scanned: a buffer each
  // was half a kilobyte of a call's garbage); only a slot a scan has opened is ever read.
  const kinds = maxDepth < shared.length ? shared : new Uint8Array(maxDepth + 1)
  let depth = 0
  let expectKey = false
  // Whether the key just read is "id" (compared in place: a slice per key was garbage per key).
  let keyIsId = false
  // Which top-level batch element the scan is in (0 for a single message).
  let element = 0
  const length = text.length
  let i = 0
  while (i < length) {
    const c = text.charCodeAt(i)
    if (c === Quote) {
      const end = skipString(text, i)
      if (expectKey && kinds[depth - 1] === 1) {
        keyIsId = isIdKey(text, i + 1, end - 1)
        expectKey = false
      }
      i = end
      continue
    }
    if (c === OpenObject || c === OpenArray) {
      if (depth === maxDepth) return { tooDeep: true, inexactIds }
      kinds[depth] = c === OpenObject ? 1 : 2
      depth++
      expectKey = c === OpenObject
      i++
      continue
    }
    if (c === CloseObject || c === CloseArray) {
      if (depth > 0) depth--
      i++
      continue
    }
    if (c === Comma) {
      if (depth === 1 && kinds[0] === 2) element++
      expectKey = kinds[depth - 1] === 1
      i++
      continue
    }
    if (c === Colon) {
      i++
      // A message's own id: the object at the top, or directly inside the top-level batch.
      const atMessage = kinds[depth - 1] === 1 && (depth === 1 || (depth === 2 && kinds[0] === 2))
      if (atMessage && keyIsId) {
        while (i < length && isSpace(text.charCodeAt(i))) i++
        const start = i
        while (i < length && isNumberChar(text.charCodeAt(i))) i++
        if (i > start) {
          const token = text.slice(start, i)
          if (!isExactNumber(token)) inexactIds.push({ index: element, text: token })
        }
      }
      keyIsId = false
      continue
    }
    i++
  }
  return { tooDeep: false, inexactIds }
}

/** Shared by every scan whose bound fits (MaxUpstreamDepth and below). */
const shared = new Uint8Array(1024)

/** The longest raw key that can spell "id": each letter escaped as `\uXXXX`. */
const MaxIdKeyText = 12

/** Whether the key text between `start` and `end` (no quotes) is "id", escapes read as JSON does. */
const isIdKey = (text: string, start: number, end: number): boolean => {
  const length = end - start
  if (length === 2) return text.charCodeAt(start) === 105 && text.charCodeAt(start + 1) === 100
  if (length > MaxIdKeyText || length < 2) return false
  const raw = text.slice(start, end)
  return raw.includes("\\") && decodeKey(raw) === "id"
}

const decodeKey = (raw: string): string => {
  try {
    const key: unknown = JSON.parse(`"${raw}"`)
    return typeof key === "string" ? key : raw
  } catch {
    return raw
  }
}
