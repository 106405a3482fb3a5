/**
 * `${VAR}` expansion in config values, in the syntax Claude Code's `.mcp.json` uses, so one file
 * serves both: `${VAR}`, `${VAR:-default}` (default when unset or empty) and `$$` for a literal `$`.
 * VS Code's spellings are read too: `${env:VAR}` is `${VAR}`, and named values such as
 * `${workspaceFolder}` come from `vars`; its `${input:...}` prompts have no one to ask here.
 */
import * as Either from "effect/Either"

/** Why a value could not be expanded. */
export type ExpandIssue =
  | { readonly _tag: "Unset"; readonly name: string }
  | { readonly _tag: "Malformed"; readonly text: string }
  | { readonly _tag: "Input"; readonly text: string }

const reference = /^\$\{(env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/

/** Expands every reference in `value` from `env`; an unset variable without a default is an issue. */
export const expand = (
  value: string,
  env: Readonly<Record<string, string | undefined>>,
  vars: Readonly<Record<string, string>> = {}
): Either.Either<string, ExpandIssue> => {
  let out = ""
  let i = 0
  while (i < value.length) {
    const at = value.indexOf("$", i)
    if (at < 0) {
      out += value.slice(i)
      break
    }
    out += value.slice(i, at)
    const rest = value.slice(at)
    if (rest.startsWith("$$")) {
      out += "$"
      i = at + 2
    } else if (rest.startsWith("${")) {
      const m = reference.exec(rest)
      const text = rest.slice(0, Math.max(2, rest.indexOf("}") + 1))
      if (m === null) return Either.left(rest.startsWith("${input:") ? { _tag: "Input", text } : { _tag: "Malformed", text })
      const name = m[2]!
      const fallback = m[3]
      const named = m[1] === undefined ? vars[name] : undefined
      const v = named ?? env[name]
      if (fallback !== undefined) out += v === undefined || v === "" ? fallback : v
      else if (v === undefined) return Either.left({ _tag: "Unset", name })
      else out += v
      i = at + m[0].length
    } else {
      // A `$` that starts no reference is kept, so `$HOME`-style text passes through untouched.
      out += "$"
      i = at + 1
    }
  }
  return Either.right(out)
}
