/**
 * A legacy-only upstream on `@modelcontextprotocol/sdk` 1.x, the SDK most servers in the wild
 * run: it speaks 2024-11-05 … 2025-11-25 through `initialize`, and knows nothing of
 * `server/discover` (stdio answers it with -32601; HTTP answers a session-less non-initialize
 * POST with 400). Its questions go to the client as server→client requests: `elicitation/create`,
 * `sampling/createMessage` and `roots/list`, from tools, a prompt and a resource (../sdk/LegacyQuestions.ts).
 *
 *   node sdk-v1-legacy.js                 stdio
 *   node sdk-v1-legacy.js --http [--port] sessionful Streamable HTTP on 127.0.0.1 at /mcp
 *   --log <file>                          what it received and asked, one line each (../sdk/WireLog.ts)
 */
import { randomUUID } from "node:crypto"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import * as z from "zod"
import { log, parseArgs } from "../sdk/Cli.js"
import { localhostOnly, serveHttp } from "../sdk/HttpHost.js"
import { legacySessions } from "../sdk/LegacySessions.js"
import { registerQuestions } from "../sdk/LegacyQuestions.js"
import { logWire } from "../sdk/WireLog.js"

const fixture = "sdk-v1-legacy"
const args = parseArgs(fixture, process.argv.slice(2), [], ["--log"])
const logFile = args.values.get("--log")

const build = (): McpServer => {
  const mcp = new McpServer({ name: fixture, version: "1.0.0" })

  mcp.registerTool(
    "hello",
    { description: "Says which server answered and over which protocol era", inputSchema: z.object({}) },
    () => ({ content: [{ type: "text", text: `hello from ${fixture} over legacy` }] })
  )

  mcp.registerTool(
    "echo",
    { description: "Returns its message unchanged", inputSchema: z.object({ message: z.string() }) },
    ({ message }) => ({ content: [{ type: "text", text: message }] })
  )

  mcp.registerTool(
    "boom",
    { description: "Always fails with an isError result", inputSchema: z.object({}) },
    () => ({ isError: true, content: [{ type: "text", text: `boom from ${fixture}` }] })
  )

  registerQuestions(mcp)

  return mcp
}

log(fixture, `starting (legacy) over ${args.http ? "http" : "stdio"}`)
if (args.http) {
  const sessions = legacySessions(async (callbacks) => {
    const mcp = build()
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: callbacks.onsessioninitialized,
      onsessionclosed: callbacks.onsessionclosed
    })
    await mcp.connect(transport)
    logWire(transport, logFile, "legacy")
    return { transport, close: () => mcp.close() }
  })
  await serveHttp(fixture, sessions, { port: args.port, guard: localhostOnly })
} else {
  const transport = new StdioServerTransport()
  await build().connect(transport)
  logWire(transport, logFile, "legacy")
}
