// Measures what is left of the processes the daemon starts, and how a start copes with odd state
// files; the figures in docs/reliability.md come from it.
//
//   node scripts/reliability-processes.mjs [--runs 3] [--cli <bundle>]
//
// - graceful: an upstream behind `sh -c` whose grandchild ignores SIGTERM; one call, then SIGTERM
//   to the daemon: does the grandchild survive it?
// - crash: the same, SIGKILL to the daemon, then a second daemon on the same state directory: does
//   the grandchild survive the crash, and the next start?
// - state files: a FIFO or a /dev/zero symlink as upstream-eras.json, a daemon.lock naming a live
//   process that is no daemon, daemon.sock as a directory: does the start come up (within 15 s),
//   refuse with a message, or hang — and if it hangs, does SIGTERM end it?
// Needs the bundle (npm run bundle); --cli measures another build of it (an older one, to compare).
// Every process it starts is killed before it exits.
import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"

const root = new URL("..", import.meta.url).pathname
const era = join(root, "packages/testing/dist/era-server.js")
const { values } = parseArgs({
  options: { runs: { type: "string", default: "3" }, cli: { type: "string", default: join(root, "packages/cli/dist/mcpx-fx.js") } }
})
const runs = Number(values.runs)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const started = new Set()

const alive = (pid) => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}
/** Whether `pid` is still running after `ms` (polled: its death sends this process no event). */
const survives = async (pid, ms) => {
  for (const until = Date.now() + ms; Date.now() < until; await sleep(20)) if (!alive(pid)) return false
  return alive(pid)
}
const kill = (pid) => {
  try {
    process.kill(pid, "SIGKILL")
  } catch {
    // Gone already.
  }
}

const stubborn = "process.on('SIGTERM', () => {}); require('fs').writeFileSync(process.argv[1], String(process.pid)); setInterval(() => {}, 1e9)"
const script = `"$1" -e "$2" "$3" >/dev/null 2>&1 </dev/null & exec "$1" "$4" --mode dual`

const sandbox = () => {
  const dir = mkdtempSync(join(tmpdir(), "mcpx-reliability-"))
  const config = join(dir, "mcpx.json")
  writeFileSync(config, JSON.stringify({
    mcpServers: { wrapped: { command: "sh", args: ["-c", script, "sh", process.execPath, stubborn, join(dir, "grandchild.pid"), era] } }
  }))
  mkdirSync(join(dir, "state"))
  return { dir, config, state: join(dir, "state") }
}

/** Starts a daemon; resolves with it once it printed where it listens, or with how it ended within `ms`. */
const startDaemon = (sb, ms = 15_000) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [values.cli, "daemon", "--json", "--config", sb.config, "--daemon-port", "0"], {
      env: { ...process.env, MCPX_STATE_DIR: sb.state },
      stdio: ["ignore", "pipe", "pipe"]
    })
    started.add(child)
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => resolve({ child, outcome: "hung" }), ms)
    child.stdout.once("data", (b) => {
      clearTimeout(timer)
      resolve({ child, outcome: "started", info: JSON.parse(b.toString().split("\n")[0]) })
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve({ child, outcome: `refused (exit ${code}): ${stderr.trim().split("\n").at(-1)}` })
    })
  })
const exited = (child) => new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once("exit", () => r())))

const callOnce = (info) =>
  fetch(`${info.url}/v1/call`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ tool: "wrapped.echo", arguments: { message: "hi" } })
  }).then((r) => r.text())

const grandchildOf = async (sb) => {
  const file = join(sb.dir, "grandchild.pid")
  for (let i = 0; i < 500 && !existsSync(file); i++) await sleep(20)
  return Number(readFileSync(file, "utf8"))
}

const graceful = async () => {
  const sb = sandbox()
  const { child, info } = await startDaemon(sb)
  await callOnce(info)
  const grandchild = await grandchildOf(sb)
  child.kill("SIGTERM")
  await exited(child)
  const left = await survives(grandchild, 3000)
  kill(grandchild)
  rmSync(sb.dir, { recursive: true, force: true })
  return left
}

const crash = async () => {
  const sb = sandbox()
  const first = await startDaemon(sb)
  await callOnce(first.info)
  const grandchild = await grandchildOf(sb)
  first.child.kill("SIGKILL")
  await exited(first.child)
  const afterCrash = alive(grandchild)
  const second = await startDaemon(sb)
  const afterRestart = await survives(grandchild, 3000)
  second.child.kill("SIGTERM")
  await exited(second.child)
  kill(grandchild)
  rmSync(sb.dir, { recursive: true, force: true })
  return { afterCrash, afterRestart }
}

/** A start with `prepare` done to its state directory: started, refused, or hung (and whether SIGTERM ended it). */
const startWith = async (prepare) => {
  const sb = sandbox()
  const cleanup = prepare(sb.state) ?? (() => {})
  const { child, outcome } = await startDaemon(sb)
  let result = outcome
  if (outcome === "hung") {
    child.kill("SIGTERM")
    const ended = await Promise.race([exited(child).then(() => true), sleep(5000).then(() => false)])
    result = ended ? "hung; SIGTERM ended it" : "hung; SIGTERM ignored (SIGKILLed)"
  } else if (outcome === "started") child.kill("SIGTERM")
  kill(child.pid)
  await exited(child)
  cleanup()
  rmSync(sb.dir, { recursive: true, force: true })
  return result
}

const main = async () => {
  const load = loadavg()[0].toFixed(1)
  const gracefulLeft = []
  const crashes = []
  for (let i = 0; i < runs; i++) {
    gracefulLeft.push(await graceful())
    crashes.push(await crash())
  }
  const count = (xs) => `${xs.filter(Boolean).length} of ${xs.length}`
  const stranger = spawn("sleep", ["600"], { stdio: "ignore" })
  const states = {
    "upstream-eras.json a FIFO": await startWith((s) => void execFileSync("mkfifo", [join(s, "upstream-eras.json")])),
    "upstream-eras.json -> /dev/zero": await startWith((s) => void symlinkSync("/dev/zero", join(s, "upstream-eras.json"))),
    "daemon.lock naming a live non-daemon": await startWith((s) => void writeFileSync(join(s, "daemon.lock"), `${stranger.pid}\n`)),
    "daemon.sock a directory": await startWith((s) => void mkdirSync(join(s, "daemon.sock", "inside"), { recursive: true }))
  }
  stranger.kill("SIGKILL")
  process.stdout.write(`${JSON.stringify({
    loadAverage: load,
    "grandchild survives a graceful stop": count(gracefulLeft),
    "grandchild survives a daemon SIGKILL": count(crashes.map((c) => c.afterCrash)),
    "grandchild survives the next daemon's start": count(crashes.map((c) => c.afterRestart)),
    "start with": states
  }, null, 2)}\n`)
}

main()
  .catch((e) => process.stdout.write(`reliability-processes: ${e instanceof Error ? e.message : String(e)}\n`))
  .finally(() => {
    for (const child of started) kill(child.pid)
  })
