/**
 * The patterns of a server's `tools` (allow) and `excludeTools` (deny) lists: `/regex/` (unanchored,
 * flags after the closing slash), a glob when the text has any of `*?[{` (or an extglob: picomatch),
 * otherwise an exact name. They are compiled once, when the config is read, so a bad one is a
 * configuration error there and matching a name costs a few comparisons.
 */
import * as Either from "effect/Either"
import picomatch from "picomatch"

/** A compiled pattern. */
export type Matcher = (name: string) => boolean

/** A pattern as written, and its matcher. */
export interface Compiled {
  readonly pattern: string
  readonly matches: Matcher
}

// Tool names are not paths: `*` runs over `/` too (bash), `[!x]` negates (posix), and a leading
// dot is an ordinary character (dot); an unclosed bracket or brace is an error, not a literal.
const globOptions: picomatch.PicomatchOptions = { bash: true, posix: true, dot: true, strictBrackets: true }

/** Compiles one pattern, or says why it is not one. */
export const compile = (pattern: string): Either.Either<Matcher, string> => {
  if (pattern === "") return Either.left("an empty pattern matches nothing; remove it")
  const regex = /^\/(.*)\/([a-z]*)$/s.exec(pattern)
  if (regex !== null) {
    try {
      const re = new RegExp(regex[1]!, regex[2]!.replace(/[gy]/g, ""))
      return Either.right((name) => re.test(name))
    } catch (e) {
      return Either.left(`an invalid regular expression (${e instanceof Error ? e.message : String(e)})`)
    }
  }
  // scan alone takes an unclosed `[` for a literal; it is a glob someone got wrong.
  if (/[*?[{]/.test(pattern) || picomatch.scan(pattern, globOptions).isGlob) {
    try {
      return Either.right(picomatch(pattern, globOptions))
    } catch (e) {
      return Either.left(`an invalid glob (${e instanceof Error ? e.message : String(e)})`)
    }
  }
  return Either.right((name) => name === pattern)
}

/** A pattern of a server's lists that matches none of the tools it was checked against. */
export interface Unmatched {
  readonly list: "tools" | "excludeTools"
  readonly pattern: string
}

/** Whether a tool passes a server's lists: in `allow` (when given) and in no `deny` pattern. */
export interface ToolFilter {
  readonly allows: Matcher
  /** True when no list is set, so callers can skip the check on the hot path. */
  readonly all: boolean
  /** The patterns that match none of `names` (a server's whole listing): most likely typos. */
  readonly unmatched: (names: ReadonlyArray<string>) => ReadonlyArray<Unmatched>
}

/** Everything passes. */
export const allowAll: ToolFilter = { allows: () => true, all: true, unmatched: () => [] }

/** The filter of compiled lists; deny wins over allow. */
export const filterOf = (allow: ReadonlyArray<Compiled> | undefined, deny: ReadonlyArray<Compiled>): ToolFilter => {
  if (allow === undefined && deny.length === 0) return allowAll
  const lists = [
    ...(allow ?? []).map((p) => ({ list: "tools" as const, ...p })),
    ...deny.map((p) => ({ list: "excludeTools" as const, ...p }))
  ]
  return {
    all: false,
    allows: (name) => (allow === undefined || allow.some((p) => p.matches(name))) && !deny.some((p) => p.matches(name)),
    unmatched: (names) => lists.filter((p) => !names.some((name) => p.matches(name))).map(({ list, pattern }) => ({ list, pattern }))
  }
}
