/** Order statistics over samples; every figure the bench reports is one of these. */

/** The value at quantile `q` (0..1) of `xs`, by nearest rank; NaN for no samples. */
export const quantile = (xs: ReadonlyArray<number>, q: number): number => {
  if (xs.length === 0) return Number.NaN
  const s = Float64Array.from(xs).sort()
  const rank = Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))
  return s[rank]!
}

/** The median (the mean of the middle two for an even count). */
export const median = (xs: ReadonlyArray<number>): number => {
  if (xs.length === 0) return Number.NaN
  const s = Float64Array.from(xs).sort()
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/** `xs` rotated left by `by` places: round r of an interleaved run starts with target r. */
export const rotate = <A>(xs: ReadonlyArray<A>, by: number): ReadonlyArray<A> => {
  if (xs.length === 0) return xs
  const k = ((by % xs.length) + xs.length) % xs.length
  return [...xs.slice(k), ...xs.slice(0, k)]
}

/** A number with `digits` decimals, or an en dash when there is none. */
export const fmt = (x: number | undefined, digits = 2): string => x === undefined || !Number.isFinite(x) ? "–" : x.toFixed(digits)
