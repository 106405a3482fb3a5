/**
 * Command-line conventions shared by the official-SDK fixtures. stdout belongs to the protocol
 * (JSON-RPC lines on stdio, the one `{"url":…}` line over HTTP), so every diagnostic goes to stderr.
 */

/** Options every SDK fixture understands; each fixture accepts only the flags it lists. */
export interface FixtureArgs {
  readonly http: boolean
  readonly port: number | undefined
  readonly flags: ReadonlySet<string>
  /** The values of the fixture's own value options (`--log <file>`), by option. */
  readonly values: ReadonlyMap<string, string>
}

/** Writes one diagnostic line to stderr, prefixed with the fixture's name. */
export const log = (fixture: string, message: string): void => {
  process.stderr.write(`[${fixture}] ${message}\n`)
}

const usage = (fixture: string, extraFlags: ReadonlyArray<string>, valueOptions: ReadonlyArray<string>): string =>
  `usage: node ${fixture}.js [--http [--port <n>]]${extraFlags.map((f) => ` [${f}]`).join("")}${valueOptions.map((o) => ` [${o} <value>]`).join("")}`

/**
 * Parses argv. An unknown flag or a bad port is a usage error (exit 2): a fixture started with a
 * typo would otherwise run in a mode the test did not ask for and fail somewhere far away.
 */
export const parseArgs = (
  fixture: string,
  argv: ReadonlyArray<string>,
  extraFlags: ReadonlyArray<string> = [],
  valueOptions: ReadonlyArray<string> = []
): FixtureArgs => {
  let http = false
  let port: number | undefined
  const flags = new Set<string>()
  const values = new Map<string, string>()
  const fail = (reason: string): never => {
    log(fixture, `${reason}\n${usage(fixture, extraFlags, valueOptions)}`)
    process.exit(2)
  }
  const parsePort = (raw: string | undefined): number => {
    const n = Number(raw)
    return raw !== undefined && Number.isInteger(n) && n >= 0 && n <= 65535 ? n : fail(`bad --port value: ${raw}`)
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--http") http = true
    else if (arg === "--port") port = parsePort(argv[++i])
    else if (arg.startsWith("--port=")) port = parsePort(arg.slice("--port=".length))
    else if (extraFlags.includes(arg)) flags.add(arg)
    else if (valueOptions.includes(arg)) {
      const value = argv[++i]
      if (value === undefined || value.startsWith("--")) return fail(`${arg} needs a value`)
      values.set(arg, value)
    } else fail(`unknown argument: ${arg}`)
  }
  if (port !== undefined && !http) fail("--port only applies with --http")
  return { http, port, flags, values }
}
