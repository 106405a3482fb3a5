/**
 * JSON with comments and trailing commas, as editors write `.mcp.json`-style files, read with
 * jsonc-parser (the parser VS Code itself uses), so every file VS Code accepts is read the same way
 * here and an edit (ConfigEdit.ts) can keep the file's comments and layout.
 */
import * as jsonc from "jsonc-parser"
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

/** The options every read and edit shares: comments and trailing commas are allowed. */
export const parseOptions: jsonc.ParseOptions = { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false }

// jsonc-parser's error codes read as CamelCase words ("PropertyNameExpected"); people read words.
const describe = (code: jsonc.ParseErrorCode): string => {
  const name = jsonc.printParseErrorCode(code)
  if (name === "UnexpectedEndOfComment") return "unterminated /* comment"
  if (name === "UnexpectedEndOfString") return "unterminated string"
  return name.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase()
}

/** Parses JSONC text; the first error names its line and column. A byte-order mark is ignored. */
export const parse = (input: string): Either.Either<unknown, SyntaxError> => {
  const text = input.charCodeAt(0) === 0xfeff ? ` ${input.slice(1)}` : input
  const errors: Array<jsonc.ParseError> = []
  const value: unknown = jsonc.parse(text, errors, parseOptions)
  const first = errors[0]
  if (first !== undefined) return Either.left({ message: describe(first.error), ...lineColumn(text, first.offset) })
  if (text.trim() === "") return Either.left({ message: "unexpected end of file", ...lineColumn(text, text.length) })
  return Either.right(value)
}
