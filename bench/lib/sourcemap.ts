/**
 * Just enough of a source map reader to say which source file a line of the bundle came from: the
 * `mappings` VLQ of a v3 map decoded into, for each generated line, its segments' columns and
 * source indexes.
 */
import { readFileSync } from "node:fs"

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const digit = new Map([...alphabet].map((c, i) => [c, i]))

/** Decodes one segment's VLQ fields. */
const decodeSegment = (segment: string): Array<number> => {
  const out: Array<number> = []
  let value = 0
  let shift = 0
  for (const c of segment) {
    const d = digit.get(c)!
    value += (d & 31) << shift
    if ((d & 32) !== 0) {
      shift += 5
      continue
    }
    out.push((value & 1) === 1 ? -(value >>> 1) : value >>> 1)
    value = 0
    shift = 0
  }
  return out
}

export interface SourceLookup {
  /** The source file of a 0-based line and column of the generated file, if mapped. */
  readonly sourceOf: (line: number, column: number) => string | undefined
}

export const readSourceMap = (file: string): SourceLookup => {
  const map = JSON.parse(readFileSync(file, "utf8")) as { sources: Array<string>; mappings: string }
  const lines: Array<Array<readonly [number, number]>> = []
  let source = 0
  for (const lineText of map.mappings.split(";")) {
    const segments: Array<readonly [number, number]> = []
    let column = 0
    if (lineText.length > 0) {
      for (const seg of lineText.split(",")) {
        const f = decodeSegment(seg)
        column += f[0] ?? 0
        if (f.length >= 4) {
          source += f[1]!
          segments.push([column, source])
        }
      }
    }
    lines.push(segments)
  }
  return {
    sourceOf: (line, column) => {
      const segments = lines[line]
      if (segments === undefined || segments.length === 0) return undefined
      let best = segments[0]!
      for (const s of segments) {
        if (s[0] > column) break
        best = s
      }
      return map.sources[best[1]]
    }
  }
}

/** A source path as a reader knows it: from the package (`effect/src/...`) or the workspace package. */
export const shorten = (source: string): string => {
  const nm = source.lastIndexOf("node_modules/")
  if (nm >= 0) return source.slice(nm + "node_modules/".length)
  const pk = source.indexOf("packages/")
  return pk >= 0 ? source.slice(pk + "packages/".length) : source
}
