/**
 * The fixture the official conformance suite runs against, and the single upstream put behind
 * the gateway for its own conformance runs. Built on `@modelcontextprotocol/server` 2.x with
 * our own surface (see ../sdk/ConformanceSurface.ts).
 *
 *   node conformance-fixture.js                 stdio, dual-era (era chosen by the first message)
 *   node conformance-fixture.js --http [--port] Streamable HTTP on 127.0.0.1 at /mcp, both eras
 *   --legacy-only                               answers only the initialize era (v1-style), so
 *                                               questions go out as server→client requests
 *   --modern-only                               legacy: 'reject'
 */
import { log, parseArgs } from "../sdk/Cli.js"
import { conformanceSurface } from "../sdk/ConformanceSurface.js"
import { runV2 } from "../sdk/V2Host.js"

const fixture = "conformance-fixture"
const args = parseArgs(fixture, process.argv.slice(2), ["--legacy-only", "--modern-only"])
if (args.flags.has("--legacy-only") && args.flags.has("--modern-only")) {
  log(fixture, "--legacy-only and --modern-only exclude each other")
  process.exit(2)
}

await runV2({
  fixture,
  mode: args.flags.has("--legacy-only") ? "legacy" : args.flags.has("--modern-only") ? "modern" : "dual",
  args,
  surface: conformanceSurface()
})
