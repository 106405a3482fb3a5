// Telling a conformance client scenario that failed because the suite's own mock server reset the
// connection apart from one that failed for a reason of ours, so the runner can rerun the first
// kind once and keep every other failure red.
//
// In client mode the suite runs a leg's scenarios all at once, their mock servers sharing its one
// event loop; on a loaded machine that loop can stall long enough for a server to drop a keep-alive
// connection a client is about to reuse, and the client's request fails with the connection reset.
// The driver (packages/testing/src/bin/conformance-client.ts) logs the mock server's URL it was
// given first and, when it fails, one ERROR line with the reason, e.g.
//
//   [10:34:57.290] INFO (#16): tools_call at 2025-11-25: http://localhost:37713/mcp (prefer-discover)
//   [10:35:13.358] ERROR (#0): tools_call failed: cannot reach http://localhost:37713/mcp: fetch failed: other side closed
//
// A failure counts as the mock server's reset only when that last ERROR line says the request to
// the mock server's own origin could not be sent or broke off (`cannot reach <url>` /
// `connection to <url> broke`) with a reset for its cause: other side closed, ECONNRESET, socket
// hang up. Any other failure — a check that failed, a timeout, a refused connection, a reset of
// anything else — is not one.
import { readdirSync, readFileSync } from "node:fs"
import { join, sep } from "node:path"

const ResetCause = /\b(other side closed|ECONNRESET|socket hang up)\b/
const GivenUrl = /^\[[^\]]*\] INFO \(#\d+\): \S+ at \S+: (\S+)/m
const ErrorLine = / ERROR \(#\d+\): (.*)$/gm
const Unreachable = /(?:cannot reach (\S+?)|connection to (\S+?) broke): (.*)$/

const originOf = (url) => {
  try {
    return new URL(url).origin
  } catch {
    return undefined
  }
}

/**
 * The reset that ended a client scenario, from the client's stderr: `{ url, cause }` when its last
 * error is the mock server (the URL it was given) resetting the connection, otherwise undefined.
 */
export const mockServerReset = (stderr) => {
  const given = GivenUrl.exec(stderr)
  if (given === null) return undefined
  const last = [...stderr.matchAll(ErrorLine)].at(-1)
  if (last === undefined) return undefined
  const failure = Unreachable.exec(last[1])
  if (failure === null) return undefined
  const url = failure[1] ?? failure[2]
  const cause = failure[3]
  const mock = originOf(given[1])
  if (mock === undefined || originOf(url) !== mock || !ResetCause.test(cause)) return undefined
  return { url, cause }
}

/** The scenario a result directory is for: its name (which may hold `/`) without the suite's timestamp. */
export const scenarioOfDir = (dir) => dir.split(sep).join("/").replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "")

/**
 * Of `scenarios` (a leg's unexpected failures), those whose client was reset by the mock server,
 * each with its reset; read from the leg's result directory (`<scenario>-<timestamp>/stderr.txt`).
 */
export const resetsIn = (legDir, scenarios) => {
  const resets = new Map()
  let files
  try {
    files = readdirSync(legDir, { recursive: true }).map(String).filter((f) => f.endsWith(`${sep}stderr.txt`) || f === "stderr.txt")
  } catch {
    return resets
  }
  // The latest run of a scenario is the one that counts (names sort by their timestamps).
  for (const file of files.sort()) {
    const scenario = scenarioOfDir(file.slice(0, -`${sep}stderr.txt`.length))
    if (!scenarios.includes(scenario)) continue
    const reset = mockServerReset(readFileSync(join(legDir, file), "utf8"))
    if (reset === undefined) resets.delete(scenario)
    else resets.set(scenario, reset)
  }
  return resets
}

/**
 * Whether a failed leg may be rerun: every unexpected failure is a mock-server reset and nothing
 * else is wrong (no stale baseline entry). Returns the scenarios to rerun, or undefined to stay red.
 */
export const rerunnable = ({ unexpected, stale, resets }) =>
  !stale && unexpected.length > 0 && unexpected.every((s) => resets.has(s)) ? [...unexpected] : undefined
