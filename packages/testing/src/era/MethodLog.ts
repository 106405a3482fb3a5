/**
 * `--log <file>`: one line per received method, `<era> <method>`, so a test can assert what a
 * client sent (e.g. that no `server/discover` reached a server whose era was cached). Written
 * synchronously so the line is on disk before the reply leaves, and before `legacy-exit` exits.
 */
import { appendFileSync } from "node:fs"
import type { Era } from "@mcpx-fx/protocol/Revision"

export type MethodLog = (era: Era, method: string) => void

export const make = (file: string | undefined): MethodLog => file === undefined ? () => {} : (era, method) => appendFileSync(file, `${era} ${method}\n`)

/** Reads a log back as `{era, method}` rows (for tests). */
export const parseLog = (text: string): ReadonlyArray<{ readonly era: string; readonly method: string }> =>
  text
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => {
      const sp = l.indexOf(" ")
      return { era: l.slice(0, sp), method: l.slice(sp + 1) }
    })
