/**
 * The minimal gateway (issue 29's reference): the least a Node process can do to put one upstream
 * behind HTTP. Plain node:http and child_process; it validates no header and knows no era.
 *
 *   node minimal-gateway.js --stdio <command> [args…]    a stdio upstream, spawned at start
 *   node minimal-gateway.js --http <url>                  a Streamable HTTP upstream
 *
 * At start it opens one legacy session upstream (initialize + notifications/initialized). Per POST
 * it parses the body, drops the `<namespace>__` prefix of a tools/call name, and forwards it: on
 * stdio under a fresh upstream id as one line, putting the caller's id back on the answer line; on
 * HTTP as one POST with the session id it got at start. Its own `initialize` is answered locally
 * (with a session id) and notifications get 202, as the floor does, so a legacy host can talk to it.
 *
 * Prints `{"port": n}` on stdout once the upstream session is open and it listens on 127.0.0.1.
 */
import { spawn } from "node:child_process"
import * as http from "node:http"
import { createInterface } from "node:readline"

type Message = { id?: number | string; method?: string; params?: { name?: string } }
type Reply = (status: number, body: string, headers?: Record<string, string>) => void

const [kind, target, ...rest] = process.argv.slice(2)
const init = (id: number) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "minimal", version: "0" } }
  })
const initialized = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })

/** Sends one request upstream; `reply` gets the upstream's answer (its own id restored). */
let forward: (m: Message, callerId: number | string, reply: Reply) => void

if (kind === "--stdio") {
  const child = spawn(target!, rest, { stdio: ["pipe", "pipe", "inherit"] })
  const waiting = new Map<number, (answer: Message) => void>()
  let nextId = 1
  createInterface({ input: child.stdout }).on("line", (line) => {
    const answer = JSON.parse(line) as Message
    const done = typeof answer.id === "number" ? waiting.get(answer.id) : undefined
    if (done === undefined) return
    waiting.delete(answer.id as number)
    done(answer)
  })
  waiting.set(0, () => {
    child.stdin.write(`${initialized}\n`)
    listen()
  })
  child.stdin.write(`${init(0)}\n`)
  forward = (m, callerId, reply) => {
    const id = nextId++
    waiting.set(id, (answer) => {
      answer.id = callerId
      reply(200, JSON.stringify(answer), { "content-type": "application/json" })
    })
    m.id = id
    child.stdin.write(`${JSON.stringify(m)}\n`)
  }
} else if (kind === "--http") {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 })
  const headers: Record<string, string> = { accept: "application/json, text/event-stream", "content-type": "application/json" }
  const post = (body: string, done: (res: http.IncomingMessage, text: string) => void) => {
    const req = http.request(target!, { method: "POST", agent, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => done(res, Buffer.concat(chunks).toString("utf8")))
    })
    req.end(body)
  }
  post(init(0), (res) => {
    headers["mcp-session-id"] = String(res.headers["mcp-session-id"])
    headers["mcp-protocol-version"] = "2025-11-25"
    post(initialized, listen)
  })
  // The caller's id is the id sent; the upstream's answer (JSON or an event stream) goes back as it came.
  forward = (m, _callerId, reply) =>
    post(JSON.stringify(m), (res, text) => reply(res.statusCode ?? 502, text, { "content-type": String(res.headers["content-type"]) }))
} else {
  throw new Error("usage: minimal-gateway --stdio <command> [args…] | --http <url>")
}

const server = http.createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    const reply: Reply = (status, body, headers = {}) => res.writeHead(status, { ...headers, "content-length": Buffer.byteLength(body) }).end(body)
    const m = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Message
    if (m.id === undefined) return void res.writeHead(202).end()
    if (m.method === "initialize") {
      const result = { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "minimal", version: "0" } }
      return reply(200, JSON.stringify({ jsonrpc: "2.0", id: m.id, result }), { "content-type": "application/json", "mcp-session-id": "minimal" })
    }
    const name = m.params?.name
    if (m.method === "tools/call" && name !== undefined && name.includes("__")) m.params!.name = name.slice(name.indexOf("__") + 2)
    forward(m, m.id, reply)
  })
})

// Called once the upstream session is open, so no call arrives before it.
function listen() {
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    process.stdout.write(`${JSON.stringify({ port: typeof address === "object" && address !== null ? address.port : 0 })}\n`)
  })
}
process.on("SIGTERM", () => server.close(() => process.exit(0)))
