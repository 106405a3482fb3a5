// Measures what calls in flight get when the daemon (or `serve`) is stopped with SIGTERM: for each
// route, how many were answered with their result, answered with an error, or lost (an empty body,
// a cut connection), and how long the process took to exit. The figures in docs/reliability.md
// come from it.
//
//   node scripts/reliability-shutdown.mjs [--calls 10] [--grace 2s] [--call-ms 40000] [--cli <bundle>]
//
// Each route gets --calls concurrent calls to an era-server's `slow` tool that sleeps --call-ms:
// a legacy session over /mcp (2025-11-25), modern /mcp (2026-07-28), /v1/call, and `serve` over
// stdio (with transport.stdioDrain = --grace). SIGTERM is sent once the upstream has every call.
// Needs the bundle (npm run bundle); --cli measures another build of it (an older one, to compare).
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"

const root = new URL("..", import.meta.url).pathname
const era = join(root, "packages/testing/dist/era-server.js")
const { values } = parseArgs({
  options: {
    calls: { type: "string", default: "10" },
    grace: { type: "string", default: "2s" },
    "call-ms": { type: "string", default: "40000" },
    cli: { type: "string", default: join(root, "packages/cli/dist/mcpx-fx.js") }
  }
})
const cli = values.cli
const calls = Number(values.calls)
const callMs = Number(values["call-ms"])

const dir = mkdtempSync(join(tmpdir(), "mcpx-reliability-"))
const log = join(dir, "upstream.log")
const config = join(dir, "mcpx.json")
writeFileSync(config, JSON.stringify({
  mcpServers: { s: { command: process.execPath, args: [era, "--mode", "dual", "--log", log] } },
  settings: { "transport.stdioDrain": values.grace }
}))
const env = { ...process.env, MCPX_STATE_DIR: join(dir, "state") }

const received = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter((l) => l.endsWith(" tools/call")).length : 0)
const untilReceived = async (n) => {
  while (received() < n) await new Promise((r) => setTimeout(r, 20))
}
const exited = (child) => new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal)))
const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "reliability", version: "1" }
}
const slow = { name: "s__slow", arguments: { ms: callMs } }

/** result | error | lost, from a body (JSON or an SSE event) or a failed fetch. */
const outcomeOf = (text) => {
  if (text === undefined || text.trim() === "") return "lost"
  const data = text.includes("data: ") ? text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).at(-1) : text
  try {
    const body = JSON.parse(data ?? "")
    return body.error !== undefined ? "error" : "result"
  } catch {
    return "lost"
  }
}
const tally = (outcomes) => {
  const t = { result: 0, error: 0, lost: 0 }
  for (const o of outcomes) t[o]++
  return t
}

const daemonRun = async () => {
  const daemon = spawn(process.execPath, [cli, "daemon", "--json", "--config", config, "--daemon-port", "0", "--daemon-shutdown-grace", values.grace], {
    env,
    stdio: ["ignore", "pipe", "ignore"]
  })
  const info = await new Promise((resolve) => daemon.stdout.once("data", (b) => resolve(JSON.parse(b.toString().split("\n")[0]))))
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" }
  const init = await fetch(info.mcp, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: meta["io.modelcontextprotocol/clientInfo"] } })
  })
  const session = { ...headers, "mcp-session-id": init.headers.get("mcp-session-id"), "mcp-protocol-version": "2025-11-25" }
  await init.text()
  await fetch(info.mcp, { method: "POST", headers: session, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) }).then((r) => r.text())
  const post = (url, h, body) => fetch(url, { method: "POST", headers: h, body: JSON.stringify(body) }).then((r) => r.text()).catch(() => undefined)
  const ids = Array.from({ length: calls }, (_, i) => i + 1)
  const legacy = ids.map((id) => post(info.mcp, session, { jsonrpc: "2.0", id, method: "tools/call", params: slow }))
  const modernHeaders = { ...headers, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "s__slow" }
  const modern = ids.map((id) => post(info.mcp, modernHeaders, { jsonrpc: "2.0", id, method: "tools/call", params: { ...slow, _meta: meta } }))
  const v1 = ids.map(() =>
    fetch(`${info.url}/v1/call`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ tool: "s.slow", arguments: slow.arguments }) })
      .then(async (r) => (r.status === 200 ? "result" : (await r.text()).length > 0 ? "error" : "lost"))
      .catch(() => "lost")
  )
  await untilReceived(3 * calls)
  const stopped = Date.now()
  daemon.kill("SIGTERM")
  const code = await exited(daemon)
  const exitMs = Date.now() - stopped
  return {
    "legacy session /mcp": tally((await Promise.all(legacy)).map(outcomeOf)),
    "modern /mcp": tally((await Promise.all(modern)).map(outcomeOf)),
    "/v1/call": tally(await Promise.all(v1)),
    exit: { code, ms: exitMs }
  }
}

const serveRun = async () => {
  rmSync(log, { force: true })
  const serve = spawn(process.execPath, [cli, "serve", "--config", config], { env, stdio: ["pipe", "pipe", "ignore"] })
  let out = ""
  serve.stdout.on("data", (d) => (out += d))
  const send = (m) => serve.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...m })}\n`)
  for (let id = 1; id <= calls; id++) send({ id, method: "tools/call", params: { ...slow, _meta: meta } })
  await untilReceived(calls)
  const stopped = Date.now()
  serve.kill("SIGTERM")
  const code = await exited(serve)
  const exitMs = Date.now() - stopped
  const replies = out.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))
  const outcomes = Array.from({ length: calls }, (_, i) => {
    const r = replies.find((m) => m.id === i + 1)
    return r === undefined ? "lost" : r.error !== undefined ? "error" : "result"
  })
  return { "serve (stdio, 2026-07-28)": tally(outcomes), exit: { code, ms: exitMs } }
}

const main = async () => {
  const load = loadavg()[0].toFixed(1)
  try {
    const daemon = await daemonRun()
    const serve = await serveRun()
    process.stdout.write(`${JSON.stringify({ calls, callMs, grace: values.grace, loadAverage: load, daemon, serve }, null, 2)}\n`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  process.stdout.write(`reliability-shutdown: ${e instanceof Error ? e.message : String(e)}\n`)
  process.exit(1)
})
