/**
 * The floor: the least an HTTP server in Node can do for an echo call. It parses each POST's JSON
 * body and answers with the echo of its `arguments.message` under the request's id, as one JSON
 * body (a session id for `initialize`, 202 for notifications). No MCP, no validation, no upstream:
 * what is left is Node's HTTP and JSON cost, which no gateway can go below.
 *
 * Prints `{"port": n}` on stdout once it listens on 127.0.0.1.
 */
import * as http from "node:http"

const server = http.createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    const m = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      id?: number
      method: string
      params?: { arguments?: { message?: string } }
    }
    if (m.id === undefined) {
      res.writeHead(202).end()
      return
    }
    const result = m.method === "initialize"
      ? { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "floor", version: "0" } }
      : { content: [{ type: "text", text: m.params?.arguments?.message ?? "" }] }
    const body = JSON.stringify({ jsonrpc: "2.0", id: m.id, result })
    res.writeHead(200, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      ...(m.method === "initialize" ? { "mcp-session-id": "floor" } : {})
    })
    res.end(body)
  })
})

server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  process.stdout.write(`${JSON.stringify({ port: typeof address === "object" && address !== null ? address.port : 0 })}\n`)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
