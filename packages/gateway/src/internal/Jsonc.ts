/**
 * JSON with comments and trailing commas, as editors write `.mcp.json`-style files. Comments and
 * dropped commas are replaced by spaces rather than removed, so a position that `JSON.parse`
 * reports is also the position in the file the user sees.
 */
import * as Either from "effect/Either"

/** Where and why a file is not JSONC. */
export interface SyntaxError {
  readonly message: string
  readonly line: number
  readonly column: number
}

/** 1-based line and column of a character offset. */
export const lineColumn = (text: string, offset: number): { readonly line: number; readonly column: number } => {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)))
  const lines = before.split("\n")
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 }
}

const blank = (c: string) => (c === "\n" || c === "\r" ? c : " ")

/**
 * The index of the next character that is neither whitespace nor inside a comment, the text's
 * length at the end, or `-1 - start` when a block comment opened at `start` never closes.
 */
const nextSignificant = (text: string, from: number): number => {
  let i = from
  while (i < text.length) {
    const c = text[i]!
    if (c === " " || c === "\t" || c === "\n" || c === "\r") i++
    else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2)
      if (end < 0) return -1 - i
      i = end + 2
    } else return i
  }
  return i
}

/** Blanks out comments and trailing commas outside strings; fails only on an unclosed block comment. */
export const strip = (input: string): Either.Either<string, SyntaxError> => {
  const text = input.charCodeAt(0) === 0xfeff ? ` ${input.slice(1)}` : input
  const out: Array<string> = []
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (c === '"') {
      out.push(c)
      i++
      while (i < text.length && text[i] !== '"' && text[i] !== "\n") {
        // An escaped quote or backslash must not end the string, so copy the pair as one.
        if (text[i] === "\\" && i + 1 < text.length) out.push(text[i++]!)
        out.push(text[i++]!)
      }
      if (i < text.length) out.push(text[i++]!)
    } else if (c === "/" && (text[i + 1] === "/" || text[i + 1] === "*")) {
      const next = nextSignificant(text, i)
      if (next < 0) {
        const at = -1 - next
        return Either.left({ message: "unterminated /* comment", ...lineColumn(text, at) })
      }
      // nextSignificant also skips the whitespace after the comment; blank it all alike.
      for (; i < next; i++) out.push(blank(text[i]!))
    } else if (c === ",") {
      const next = nextSignificant(text, i + 1)
      const closer = next >= 0 && (text[next] === "}" || text[next] === "]")
      out.push(closer ? " " : c)
      i++
    } else {
      out.push(c)
      i++
    }
  }
  return Either.right(out.join(""))
}

/** Parses JSONC text; the error carries the line and column when the parser reports a position. */
export const parse = (text: string): Either.Either<unknown, SyntaxError> =>
  Either.flatMap(strip(text), (json) => {
    try {
      return Either.right(JSON.parse(json) as unknown)
    } catch (e) {
      const raw = e instanceof Error ? e.message : String(e)
      const position = /at position (\d+)/.exec(raw)
      const where = position !== null ? lineColumn(text, Number(position[1])) : lineColumn(text, json.trimEnd().length)
      const message = raw.replace(/\s*in JSON at position \d+.*$/, "").replace(/^Unexpected end of JSON input$/, "unexpected end of file")
      return Either.left({ message, ...where })
    }
  })
