/**
 * A modern-only upstream on `@modelcontextprotocol/server` 2.x: the SDK's serving entries with
 * `legacy: 'reject'`, so `initialize` is refused with the unsupported-protocol-version error
 * naming 2026-07-28, and only `server/discover` + per-request `_meta` traffic is served.
 *
 *   node sdk-v2-modern.js                 stdio
 *   node sdk-v2-modern.js --http [--port] Streamable HTTP on 127.0.0.1 at /mcp
 */
import { McpServer } from "@modelcontextprotocol/server"
import { parseArgs } from "../sdk/Cli.js"
import { registerGreetings } from "../sdk/Greetings.js"
import { runV2 } from "../sdk/V2Host.js"

const fixture = "sdk-v2-modern"
const args = parseArgs(fixture, process.argv.slice(2))

await runV2({
  fixture,
  mode: "modern",
  args,
  surface: (ctx) => {
    const mcp = new McpServer({ name: fixture, version: "1.0.0" })
    registerGreetings(mcp, ctx)
    return mcp
  }
})
