/**
 * Durations as people write them in config files, env vars and flags (`2s`, `5m`, `1500ms`,
 * `1h30m`, or a bare number of milliseconds), and the short form mcpx-fx reports them in.
 */
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

/** How an invalid duration is described to the user. */
export const expected = "a duration such as 2s, 5m or 1500ms"

const unitMillis: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }

// The sticky flag lets one regex walk a compound like `1h30m` piece by piece without slicing.
const piece = /(\d+(?:\.\d+)?)(ms|s|m|h)/y

/** Parses a duration; `None` when the text is not one (negative and sub-millisecond values included). */
export const parse = (text: string): Option.Option<Duration.Duration> => {
  const s = text.trim()
  if (s === "") return Option.none()
  if (/^\d+$/.test(s)) return fromMillis(Number(s))
  let total = 0
  piece.lastIndex = 0
  while (piece.lastIndex < s.length) {
    const at = piece.lastIndex
    const m = piece.exec(s)
    if (m === null || m.index !== at) return Option.none()
    total += Number(m[1]) * unitMillis[m[2]!]!
  }
  // Decimal fractions (`1.1s`) are not exact in binary; anything within a nanosecond of a whole
  // millisecond is that millisecond, and a real fraction of a millisecond is refused.
  const rounded = Math.round(total)
  return Math.abs(total - rounded) < 1e-6 ? fromMillis(rounded) : Option.none()
}

/** A duration from a JSON number of milliseconds; `None` unless it is a whole, non-negative number. */
export const fromMillis = (ms: number): Option.Option<Duration.Duration> =>
  Number.isSafeInteger(ms) && ms >= 0 ? Option.some(Duration.millis(ms)) : Option.none()

/** The shortest exact form in the largest unit that divides it: `2s`, `5m`, `1500ms`, `90s`, `0s`. */
export const format = (d: Duration.Duration): string => {
  const ms = Duration.toMillis(d)
  if (ms === 0) return "0s"
  if (!Number.isFinite(ms)) return "infinity"
  for (const unit of ["h", "m", "s"] as const) {
    const size = unitMillis[unit]!
    if (ms % size === 0) return `${ms / size}${unit}`
  }
  return `${ms}ms`
}
