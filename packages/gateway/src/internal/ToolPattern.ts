/**
 * The patterns of a server's `tools` (allow) and `excludeTools` (deny) lists: `/regex/` (unanchored,
 * flags after the closing slash), a glob when the text has any of `*?[`, otherwise an exact name.
 * They are compiled once, when the config is read, so a bad one is a configuration error there and
 * matching a name costs a few comparisons.
 */
import * as Either from "effect/Either"

/** A compiled pattern. */
export type Matcher = (name: string) => boolean

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

/** A glob as an anchored regex: `*` any run, `?` one character, `[...]` a class (`[!...]` negated). */
const globSource = (glob: string): Either.Either<string, string> => {
  let out = ""
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (c === "*") out += ".*"
    else if (c === "?") out += "."
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2)
      if (end < 0) return Either.left("an unclosed [ in a glob")
      let body = glob.slice(i + 1, end)
      if (body.startsWith("!")) body = `^${body.slice(1)}`
      out += `[${body.replace(/\\/g, "\\\\")}]`
      i = end
    } else out += escape(c)
  }
  return Either.right(`^${out}$`)
}

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
  if (/[*?[]/.test(pattern)) {
    return Either.flatMap(globSource(pattern), (source) => {
      try {
        const re = new RegExp(source)
        return Either.right((name: string) => re.test(name))
      } catch (e) {
        return Either.left(`an invalid glob (${e instanceof Error ? e.message : String(e)})`)
      }
    })
  }
  return Either.right((name) => name === pattern)
}

/** Whether a tool passes a server's lists: in `allow` (when given) and in no `deny` pattern. */
export interface ToolFilter {
  readonly allows: Matcher
  /** True when no list is set, so callers can skip the check on the hot path. */
  readonly all: boolean
}

/** Everything passes. */
export const allowAll: ToolFilter = { allows: () => true, all: true }

/** The filter of compiled lists; deny wins over allow. */
export const filterOf = (allow: ReadonlyArray<Matcher> | undefined, deny: ReadonlyArray<Matcher>): ToolFilter =>
  allow === undefined && deny.length === 0
    ? allowAll
    : {
      all: false,
      allows: (name) => (allow === undefined || allow.some((m) => m(name))) && !deny.some((m) => m(name))
    }
