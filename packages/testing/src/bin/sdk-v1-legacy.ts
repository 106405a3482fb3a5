/**
 * A legacy-only upstream on `@modelcontextprotocol/sdk` 1.x, the SDK most servers in the wild
 * run: it speaks 2024-11-05 … 2025-11-25 through `initialize`, and knows nothing of
 * `server/discover` (stdio answers it with -32601; HTTP answers a session-less non-initialize
 * POST with 400). Questions go to the client as server→client `elicitation/create` requests.
 *
 *   node sdk-v1-legacy.js                 stdio
 *   node sdk-v1-legacy.js --http [--port] sessionful Streamable HTTP on 127.0.0.1 at /mcp
 */
import { randomUUID } from "node:crypto"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import * as z from "zod"
import { log, parseArgs } from "../sdk/Cli.js"
import { localhostOnly, serveHttp } from "../sdk/HttpHost.js"
import { legacySessions } from "../sdk/LegacySessions.js"

const fixture = "sdk-v1-legacy"
const args = parseArgs(fixture, process.argv.slice(2))

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

  mcp.registerTool(
    "ask_name",
    { description: "Asks the client for a name (elicitation) and greets it", inputSchema: z.object({}) },
    async (_args, extra) => {
      // Related to the tool call, so over HTTP the question travels on the call's own SSE
      // stream, as a v1 server's would, rather than on a GET stream the client may not hold.
      const answer = await mcp.server.elicitInput(
        {
          message: "What is your name?",
          requestedSchema: {
            type: "object",
            properties: { name: { type: "string", description: "Your name" } },
            required: ["name"]
          }
        },
        { relatedRequestId: extra.requestId }
      )
      const name = answer.content?.["name"]
      return answer.action === "accept" && typeof name === "string"
        ? { content: [{ type: "text", text: `Hello, ${name}!` }] }
        : { content: [{ type: "text", text: `No name given (${answer.action})` }] }
    }
  )

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
    return { transport, close: () => mcp.close() }
  })
  await serveHttp(fixture, sessions, { port: args.port, guard: localhostOnly })
} else {
  await build().connect(new StdioServerTransport())
}
