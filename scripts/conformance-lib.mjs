// What the conformance runners share: where the official suite lives, installing it on demand,
// running it as a child under its own Node 22, pulling the summary out of its output, and
// starting and stopping the server under test (a fixture or the daemon) as a child.
//
// The suite needs Node 22 and lives in tools/conformance-runner with its own node_modules, so
// its node binary never shadows the workspace's Node 20: it is only ever started by absolute
// path, and nothing here puts tools/conformance-runner/node_modules/.bin on PATH.
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"

export const root = new URL("..", import.meta.url).pathname
export const runnerDir = join(root, "tools/conformance-runner")
export const runnerNode = join(runnerDir, "node_modules/.bin/node")
export const suite = join(runnerDir, "node_modules/@modelcontextprotocol/conformance/dist/index.js")

/** The frozen requirement sets every leg is run for. */
export const requirementSets = ["2025-11-25", "2026-07-28"]

/** Runs a command to completion with inherited stdio, or exits 1 saying what failed. */
export const runOrDie = (name, command, args, what) => {
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit" })
  if (result.status !== 0) {
    process.stdout.write(`${name}: ${what} failed (${result.error?.message ?? `exit ${result.status}`})\n`)
    process.exit(1)
  }
}

/** Installs the suite and its Node 22 from tools/conformance-runner's lockfile when either is missing. */
export const installRunnerIfMissing = (name) => {
  if (existsSync(runnerNode) && existsSync(suite)) return
  process.stdout.write(`${name}: installing the conformance runner (npm ci --prefix tools/conformance-runner)\n`)
  runOrDie(name, "npm", ["ci", "--prefix", runnerDir, "--no-audit", "--no-fund"], "installing the runner")
}

/** Bundles the CLI and every fixture and driver in packages/testing/src/bin under the project's Node. */
export const bundle = (name) => runOrDie(name, process.execPath, [join(root, "scripts/bundle.mjs")], "bundling")

/**
 * Runs the suite with `args` (its output directory `outDir` emptied first) and resolves with its
 * exit code and full output, which is also written to `logFile`. `timeoutMs` only bounds a hung
 * run; `env` is added to this process's environment (the suite passes it on to a client).
 */
export const runSuite = ({ name, args, outDir, logFile, timeoutMs, env = {} }) =>
  new Promise((resolve) => {
    rmSync(outDir, { recursive: true, force: true })
    mkdirSync(dirname(logFile), { recursive: true })
    const child = spawn(runnerNode, [suite, ...args, "-o", outDir], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (d) => (output += d.toString()))
    child.stderr.on("data", (d) => (output += d.toString()))
    const timer = setTimeout(() => {
      output += `\n(${name}: the suite timed out after ${timeoutMs} ms)\n`
      child.kill("SIGKILL")
    }, timeoutMs)
    child.on("error", (error) => {
      clearTimeout(timer)
      resolve({ code: 1, output: `${output}\n${error.message}\n` })
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      writeFileSync(logFile, output)
      resolve({ code: code ?? 1, output })
    })
  })

/** The suite's closing summary (from its SUMMARY banner on), or the output's tail when it has none. */
export const summaryOf = (output) => {
  const at = Math.max(output.lastIndexOf("=== SUMMARY ==="), output.lastIndexOf("=== SUITE SUMMARY ==="))
  return (at < 0 ? output.split("\n").slice(-40).join("\n") : output.slice(at)).trimEnd()
}

/**
 * Spawns `command args` in the repository root (`env` added to this process's environment),
 * its stderr piped to `log`, and resolves once its first stdout line has arrived, parsed as JSON
 * (the address it announces). A child that exits, fails to spawn, prints something else first or
 * says nothing within `timeoutMs` is killed and the promise rejects naming it as `what`.
 */
export const startChild = ({ command, args, env = {}, log, timeoutMs, what }) =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let buffered = ""
    let settled = false
    const timer = setTimeout(() => settle(new Error(`${what} printed no first line on stdout within ${timeoutMs} ms; see its log`)), timeoutMs)
    const settle = (error, first) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (error) {
        child.kill("SIGKILL")
        reject(error)
      } else resolve({ child, first })
    }
    child.stderr.pipe(log)
    // Read on after the first line too, so a chatty child never blocks on a full pipe.
    child.stdout.on("data", (chunk) => {
      if (settled) return
      buffered += chunk.toString()
      const nl = buffered.indexOf("\n")
      if (nl < 0) return
      try {
        settle(undefined, JSON.parse(buffered.slice(0, nl)))
      } catch {
        settle(new Error(`${what}: unexpected first stdout line: ${buffered.slice(0, nl)}`))
      }
    })
    child.on("error", (error) => settle(error))
    child.on("exit", (code, signal) => settle(new Error(`${what} exited early (${signal ?? code}); see its log`)))
  })

/** Stops a child with SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves once it has. */
export const stopChild = (child, graceMs) =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const force = setTimeout(() => child.kill("SIGKILL"), graceMs)
    child.once("exit", () => {
      clearTimeout(force)
      resolve()
    })
    child.kill("SIGTERM")
  })

/** `✓ name: 3 passed, 0 failed` lines of the summary, with whether each is scored. */
export const scenariosOf = (output) => {
  const summary = summaryOf(output)
  const unscoredAt = summary.indexOf("Not scored")
  const unscored = new Set(
    unscoredAt < 0 ? [] : [...summary.slice(unscoredAt).matchAll(/^\s+[✓✗] (\S+) \(/gm)].map((m) => m[1])
  )
  return [...summary.matchAll(/^([✓✗]) ([^:\n]+): (\d+) passed, (\d+) failed/gm)].map((m) => ({
    scenario: m[2],
    ok: m[1] === "✓",
    passed: Number(m[3]),
    failed: Number(m[4]),
    scored: !unscored.has(m[2])
  }))
}

/** Every check the suite wrote for each scenario of a run: `{ scenario: [{ id, status, errorMessage }] }`. */
export const checksOf = (dir) => {
  const byScenario = {}
  if (!existsSync(dir)) return byScenario
  for (const entry of readdirSync(dir)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry)
    const file = join(dir, entry, "checks.json")
    if (m === null || !existsSync(file)) continue
    byScenario[m[1]] = JSON.parse(readFileSync(file, "utf8"))
  }
  return byScenario
}
