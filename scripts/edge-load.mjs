// The load runs behind docs/reliability.md: the built daemon (packages/cli/dist/mcpx-fx.js, one
// era-server upstream, a temporary state directory, 127.0.0.1 and a free port) tried as the issue-10
// report tried it — a storm of connections, a big batch beside other callers, an 82,000-message
// batch, 40,000 abandoned sessions, deep nesting, inexact ids — each reported as tried / answered /
// lost, with the daemon's memory, and a valid call served after. Run `npm run build` first.
//
//   node scripts/edge-load.mjs            every run
//   node scripts/edge-load.mjs storm      one of: storm batch huge sessions deep ids
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as Net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

const root = new URL("..", import.meta.url).pathname
const bundle = join(root, "packages/cli/dist/mcpx-fx.js")
const eraServer = join(root, "packages/testing/dist/era-server.js")
const only = process.argv[2]

const dir = mkdtempSync(join(tmpdir(), "mcpx-edge-load-"))
const config = join(dir, "mcpx.json")
writeFileSync(config, JSON.stringify({ mcpServers: { alpha: { command: process.execPath, args: [eraServer, "--mode", "dual"] } } }))

const daemon = spawn(process.execPath, [bundle, "daemon", "--config", config, "--daemon-port", "0", "--json"], {
  env: { ...process.env, MCPX_STATE_DIR: join(dir, "state") },
  stdio: ["ignore", "pipe", "inherit"]
})
const info = await new Promise((resolve, reject) => {
  let out = ""
  daemon.stdout.on("data", (chunk) => {
    out += chunk
    const nl = out.indexOf("\n")
    if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)))
  })
  daemon.on("exit", (code) => reject(new Error(`the daemon exited (${code}) before it listened`)))
})
const { port } = new URL(info.url)
let exited = false
daemon.on("exit", () => {
  exited = true
})

const rssMb = () => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${daemon.pid}/status`, "utf8"))
  return m === null ? NaN : Math.round(Number(m[1]) / 1024)
}

const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-03-26" }
const post = async (body, extra = {}) => {
  const r = await fetch(info.mcp, { method: "POST", headers: { ...headers, ...extra }, body: typeof body === "string" ? body : JSON.stringify(body) })
  const text = await r.text()
  return { status: r.status, headers: r.headers, body: text.length > 0 ? JSON.parse(text) : undefined }
}
const rpc = (id, method, params) => ({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) })
const echo = (id, message) => rpc(id, "tools/call", { name: "alpha__echo", arguments: { message } })

/** Runs `n` tasks, `width` at a time. */
const pool = async (n, width, task) => {
  let next = 0
  const results = []
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) {
      const i = next++
      results[i] = await task(i).catch((e) => ({ error: String(e?.cause?.code ?? e) }))
    }
  }))
  return results
}

const runs = {
  // 1,100 connections opened in one tick, each asking /v1/health once.
  storm: async () => {
    const n = 1100
    const outcome = await new Promise((resolve) => {
      let answered = 0
      let closed = 0
      const errors = {}
      for (let i = 0; i < n; i++) {
        const s = Net.connect({ host: "127.0.0.1", port: Number(port) })
        let reply = ""
        s.setEncoding("utf8")
        s.on("connect", () => s.write(`GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`))
        s.on("data", (c) => { reply += c })
        s.on("error", (e) => { errors[e.code] = (errors[e.code] ?? 0) + 1 })
        s.on("close", () => {
          if (reply.startsWith("HTTP/1.1 200")) answered++
          if (++closed === n) resolve({ answered, errors })
        })
      }
    })
    return { tried: n, answered: outcome.answered, lost: n - outcome.answered, errors: outcome.errors }
  },
  // One caller's batch of 100 calls while 200 other callers each make one call.
  batch: async () => {
    const batch = post(Array.from({ length: 100 }, (_, i) => echo(i, `b${i}`)))
    const others = pool(200, 50, async (i) => post(echo(`o${i}`, `o${i}`)))
    const [b, o] = await Promise.all([batch, others])
    const answered = (Array.isArray(b.body) ? b.body.filter((r) => r.result !== undefined).length : 0) +
      o.filter((r) => r.body?.result !== undefined).length
    return { tried: 300, answered, lost: 300 - answered }
  },
  // The 82,000-message, 4.1 MB batch that ran the heap out of memory.
  huge: async () => {
    const before = rssMb()
    const r = await post(Array.from({ length: 82_000 }, (_, i) => rpc(i, "tools/list")))
    return { tried: 1, answered: r.status === 400 && r.body?.error?.code === -32600 ? 1 : 0, lost: 0, status: r.status, message: r.body?.error?.message, rssMb: [before, rssMb()] }
  },
  // 40,000 initializes nobody ends.
  sessions: async () => {
    const before = rssMb()
    const n = 40_000
    const results = await pool(n, 32, (i) => post(rpc(i, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "load", version: "1" } }), { "mcp-protocol-version": "2025-11-25" }))
    const minted = results.filter((r) => r.status === 200 && r.headers?.get("mcp-session-id")).length
    const busy = results.filter((r) => r.status === 503).length
    return { tried: n, answered: minted + busy, lost: n - minted - busy, minted, refused503: busy, rssMb: [before, rssMb()] }
  },
  // Arguments nested 5,000 deep, which overflowed the stack while forwarding.
  deep: async () => {
    const n = 100
    const text = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"a":${"[".repeat(5000)}${"]".repeat(5000)}}}}`
    const results = await pool(n, 10, () => post(text))
    const answered = results.filter((r) => r.status === 400 && r.body?.error?.code === -32600).length
    return { tried: n, answered, lost: n - answered }
  },
  // Ids no double holds exactly.
  ids: async () => {
    const texts = ["1e400", "1e-400", "9007199254740993"].map((id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`)
    const results = await pool(texts.length * 100, 10, (i) => post(texts[i % texts.length]))
    const answered = results.filter((r) => r.status === 400 && r.body?.error?.code === -32600 && !("id" in r.body)).length
    return { tried: results.length, answered, lost: results.length - answered }
  }
}

try {
  for (const [name, run] of Object.entries(runs)) {
    if (only !== undefined && only !== name) continue
    const started = Date.now()
    const outcome = await run()
    const after = exited ? undefined : await post(echo("after", "still here"))
    const servedAfter = after?.body?.result !== undefined
    console.log(JSON.stringify({ run: name, ...outcome, crashed: exited ? 1 : 0, servedAfter, ms: Date.now() - started }))
    if (exited) break
  }
} finally {
  daemon.kill("SIGTERM")
  await new Promise((resolve) => (exited ? resolve() : daemon.on("exit", resolve)))
  rmSync(dir, { recursive: true, force: true })
}
