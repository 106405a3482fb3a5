/**
 * How far apart two names are, for "did you mean": the optimal string alignment distance, i.e.
 * insertions, deletions, substitutions and swaps of two neighbours each count one. A swap is the
 * commonest typo (`stauts`), and plain Levenshtein would count it two. Every suggestion mcpx-fx
 * makes (tool, prompt, server and setting names here; commands and setting spellings in the CLI)
 * measures with this one function.
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
