/**
 * Command-line options of the era fixture. Parsed by hand: the fixture is a test peer that must
 * start fast under plain `node`, and its whole surface is a handful of flags.
 */
import * as Revision from "@mcpx-fx/protocol/Revision"

/** How the fixture behaves; see `era-server.ts` for what each mode means. */
export const Modes = [
  "legacy-32601",
  "legacy-32602",
  "legacy-silent",
  "legacy-exit",
  "legacy-banner",
  "legacy-sse",
  "modern-only",
  "dual",
  "slow-discover"
] as const
export type Mode = (typeof Modes)[number]

/** How an HTTP request POST is answered: `auto` streams tools/call replies and sends the rest as JSON. */
export type Reply = "json" | "sse" | "auto"

export interface Options {
  readonly mode: Mode
  readonly http: boolean
  readonly reply: Reply
  readonly port: number
  readonly log: string | undefined
  readonly discoverDelayMs: number
  /** Legacy versions served, oldest first; empty for modern-only. */
  readonly legacyVersions: ReadonlyArray<string>
  /** Modern versions served, oldest first; empty for the legacy modes. */
  readonly modernVersions: ReadonlyArray<string>
  /** `--list-changed`: declare tools `listChanged` and resources `subscribe` (both eras). */
  readonly listChanged?: boolean
  /** `--start-delay <ms>` (stdio): read nothing for this long, as a server npx is still fetching. */
  readonly startDelayMs?: number
  /**
   * `--late-refusal` (stdio): refuse a legacy `initialize` only once every request read before it
   * has been answered, as a server that handles its input in order does (Python `mcp` 2.x). A
   * discover pending beside it then answers before the refusal instead of after.
   */
  readonly lateRefusal?: boolean
  /**
   * `--header-tools [name]`: list the `weather` tool, whose `region` argument is annotated
   * `x-mcp-header: <name>` (default Region), and refuse a modern HTTP call of it with -32020 when
   * `Mcp-Param-<name>` is missing or does not match.
   */
  readonly headerName?: string
  /** Every version the run serves, both eras, oldest first (what a mode change picks from). */
  readonly versions: ReadonlyArray<string>
}

/** Whether a mode serves `initialize` sessions. */
export const servesLegacy = (mode: Mode): boolean => mode !== "modern-only"
/** Whether a mode serves per-request `_meta`. */
export const servesModern = (mode: Mode): boolean => mode === "modern-only" || mode === "dual" || mode === "slow-discover"

// Unknown dates are accepted so a test can stand up a server that only speaks a future revision;
// the era of such a date follows from the date itself.
const isModernDate = (v: string): boolean => Revision.atLeast(v, Revision.LatestModernRevision)

export class UsageError extends Error {}

export const parse = (argv: ReadonlyArray<string>): Options => {
  let mode: Mode = "dual"
  let http = false
  let reply: Reply = "auto"
  let port = 0
  let log: string | undefined
  let discoverDelayMs = 3000
  let versions: ReadonlyArray<string> | undefined
  let listChanged = false
  let startDelayMs = 0
  let lateRefusal = false
  let headerName: string | undefined
  const value = (i: number, flag: string): string => {
    const v = argv[i + 1]
    if (v === undefined) throw new UsageError(`${flag} needs a value`)
    return v
  }
  const integer = (raw: string, flag: string): number => {
    const n = Number(raw)
    if (!Number.isInteger(n) || n < 0) throw new UsageError(`${flag} needs a non-negative integer, got ${raw}`)
    return n
  }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]
    switch (flag) {
      case "--mode": {
        const m = value(i++, flag)
        if (!(Modes as ReadonlyArray<string>).includes(m)) {
          throw new UsageError(`unknown mode ${m}; one of ${Modes.join(", ")}`)
        }
        mode = m as Mode
        break
      }
      case "--http":
        http = true
        break
      case "--reply": {
        const r = value(i++, flag)
        if (r !== "json" && r !== "sse" && r !== "auto") throw new UsageError(`--reply is json, sse or auto, got ${r}`)
        reply = r
        break
      }
      case "--port":
        port = integer(value(i++, flag), flag)
        break
      case "--log":
        log = value(i++, flag)
        break
      case "--discover-delay":
        discoverDelayMs = integer(value(i++, flag), flag)
        break
      case "--list-changed":
        listChanged = true
        break
      case "--start-delay":
        startDelayMs = integer(value(i++, flag), flag)
        break
      case "--late-refusal":
        lateRefusal = true
        break
      case "--header-tools": {
        // The header's name is optional: the next word, unless it is the next flag.
        const next = argv[i + 1]
        const named = next !== undefined && !next.startsWith("--")
        headerName = named ? next : "Region"
        if (named) i++
        break
      }
      case "--versions":
        versions = value(i++, flag).split(",").map((v) => v.trim()).filter((v) => v.length > 0)
        break
      default:
        throw new UsageError(`unknown option ${flag}`)
    }
  }
  if (mode === "legacy-sse" && !http) throw new UsageError("--mode legacy-sse needs --http")
  const chosen = [...(versions ?? Revision.AllRevisions)].sort(Revision.compare)
  return withMode({
    mode,
    http,
    reply,
    port,
    log,
    discoverDelayMs,
    legacyVersions: [],
    modernVersions: [],
    listChanged,
    startDelayMs,
    lateRefusal,
    ...(headerName !== undefined ? { headerName } : {}),
    versions: chosen
  }, mode)
}

/** The same run in another mode: the versions it serves follow the mode. */
export const withMode = (options: Options, mode: Mode): Options => ({
  ...options,
  mode,
  legacyVersions: servesLegacy(mode) ? options.versions.filter((v) => !isModernDate(v)) : [],
  modernVersions: servesModern(mode) ? options.versions.filter(isModernDate) : []
})
