/**
 * A dual-era upstream on `@modelcontextprotocol/server` 2.x: one endpoint (or one stdio
 * process) that answers both `initialize` (2025) and `server/discover` + per-request `_meta`
 * (2026-07-28), as the SDK's serving entries do out of the box.
 *
 *   node sdk-v2-dual.js                 stdio (era chosen by the first message)
 *   node sdk-v2-dual.js --http [--port] Streamable HTTP on 127.0.0.1 at /mcp
 *   --stateless-legacy                  serve 2025 HTTP traffic with the SDK's default stateless
 *                                       fallback (no sessions, so no mid-call questions)
 */
import { McpServer } from "@modelcontextprotocol/server"
import { parseArgs } from "../sdk/Cli.js"
import { registerGreetings } from "../sdk/Greetings.js"
import { runV2 } from "../sdk/V2Host.js"

const fixture = "sdk-v2-dual"
const args = parseArgs(fixture, process.argv.slice(2), ["--stateless-legacy"])

await runV2({
  fixture,
  mode: "dual",
  args,
  statelessLegacy: args.flags.has("--stateless-legacy"),
  surface: (ctx) => {
    const mcp = new McpServer({ name: fixture, version: "1.0.0" })
    registerGreetings(mcp, ctx)
    return mcp
  }
})
