/**
 * How commands print: aligned text tables for people, indented JSON for programs. Everything here
 * goes to stdout and is command output only; messages about failures go to stderr (ExitCode.ts).
 */
import * as Console from "effect/Console"
import type * as Effect from "effect/Effect"

/**
 * Rows in aligned columns, each line prefixed with `indent`. Column widths come from the longest
 * cell; the last column is not padded, so no line ends in spaces.
 */
export const columns = (rows: ReadonlyArray<ReadonlyArray<string>>, indent = ""): string => {
  const widths: Array<number> = []
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)))
  return rows
    .map((r) => indent + r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  ").trimEnd())
    .join("\n")
}

/** A table with a header line. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => columns([header, ...rows])

/** A setting's value as tables show it; an empty list would otherwise be an empty cell. */
export const settingText = (row: { readonly text: string }): string => (row.text === "" ? "(none)" : row.text)

/** Prints text as one block, followed by a newline. */
export const text = (s: string): Effect.Effect<void> => Console.log(s)

/** Prints a value as indented JSON. */
export const json = (value: unknown): Effect.Effect<void> => Console.log(JSON.stringify(value, null, 2))
