/**
 * "Did you mean" for mistyped names. People type a setting the way they last saw it, so a path is
 * also matched by its flag and environment spellings (`pool-max`, `MCPX_POOL_MAX` → `pool.max`).
 */
import { distance } from "@mcpx-fx/gateway/EditDistance"

const score = (wanted: string, spelling: string): number =>
  wanted.length >= 3 && spelling.includes(wanted) ? 0 : distance(wanted, spelling)

const normalise = (s: string): string => s.toLowerCase().replace(/^mcpx_|^-+/, "").replace(/[^a-z0-9]/g, "")

/**
 * The candidates close to `input`, closest first. Each candidate may be known by several
 * spellings; the closest one counts. "Close" allows about one typo per four characters, or a
 * spelling that contains the input (`port` → `daemon.port`).
 */
export const closeMatches = <A>(
  input: string,
  candidates: ReadonlyArray<A>,
  spellings: (a: A) => ReadonlyArray<string>
): ReadonlyArray<A> => {
  const wanted = normalise(input)
  const limit = Math.max(1, Math.floor(wanted.length / 4))
  return candidates
    .map((c) => ({ c, d: Math.min(...spellings(c).map((s) => score(wanted, normalise(s)))) }))
    .filter(({ d }) => d <= limit)
    .sort((x, y) => x.d - y.d)
    .map(({ c }) => c)
}
