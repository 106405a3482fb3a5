/**
 * "Did you mean", the one way mcpx-fx suggests a name: tools, prompts, servers and settings in the
 * gateway and the `/v1` API, commands, flags and setting spellings in the CLI.
 */

/**
 * How far apart two names are: the optimal string alignment distance, i.e. insertions,
 * deletions, substitutions and swaps of two neighbours each count one. A swap is the commonest
 * typo (`stauts`), and plain Levenshtein would count it two.
 */
export const distance = (a: string, b: string): number => {
  // Three rows of the table are enough: a swap looks two rows back.
  let beforePrevious: Array<number> = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, beforePrevious[j - 2]! + 1)
      current.push(best)
    }
    beforePrevious = previous
    previous = current
  }
  return previous[b.length]!
}

const score = (wanted: string, spelling: string): number =>
  wanted.length >= 3 && (spelling.includes(wanted) || wanted.includes(spelling)) ? 0 : distance(wanted, spelling)

// People type a name the way they last saw it: `pool-max` or `MCPX_POOL_MAX` for `pool.max`,
// `ns.tool` for `ns__tool`.
const normalise = (s: string): string => s.toLowerCase().replace(/^mcpx_|^-+/, "").replace(/[^a-z0-9]/g, "")

/**
 * The candidates close to `input`, closest first (ties in name order), at most `limit`. Each
 * candidate may be known by several spellings; the closest one counts. "Close" allows about one
 * typo per four characters, or a spelling that contains the input or is contained in it (`port`
 * for `daemon.port`, a bare tool name for `ns__tool`).
 */
export const closeMatches = <A>(
  input: string,
  candidates: ReadonlyArray<A>,
  spellings: (a: A) => ReadonlyArray<string>,
  limit = 5
): ReadonlyArray<A> => {
  const wanted = normalise(input)
  const threshold = Math.max(1, Math.floor(wanted.length / 4))
  return candidates
    .map((c) => {
      const names = spellings(c)
      return { c, d: Math.min(...names.map((s) => score(wanted, normalise(s)))), key: names[0] ?? "" }
    })
    .filter(({ d }) => d <= threshold)
    .sort((x, y) => x.d - y.d || x.key.localeCompare(y.key))
    .slice(0, limit)
    .map(({ c }) => c)
}

/** The known names closest to an unknown one, best first. */
export const closest = (unknown: string, known: ReadonlyArray<string>, limit = 5): ReadonlyArray<string> =>
  closeMatches(unknown, known, (name) => [name], limit)
