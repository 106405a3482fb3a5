// Runs the official MCP conformance suite in client mode against mcpx-fx's upstream engine: the
// suite starts a mock server per scenario and runs the driver
// (packages/testing/src/bin/conformance-client.ts) with its URL, once per frozen requirement set,
// weighing failures against conformance/client-baseline.yml (where only the OAuth scenarios may
// sit). Exit 0 when every leg passed its baseline check. A leg whose only unexpected failures are
// the suite's mock server resetting the client's connection (see conformance-resets.mjs) has each
// of those scenarios rerun once, alone, and passes if every rerun does; the reruns are reported.
//
// The driver runs under this script's own Node (the project's Node 20), by absolute path, never
// under the suite's Node 22 (see conformance-lib.mjs).
import * as esbuild from "esbuild"
import { spawnSync } from "node:child_process"
import { loadavg } from "node:os"
import { join } from "node:path"
import { installRunnerIfMissing, requirementSets, root, runSuite, summaryOf } from "./conformance-lib.mjs"
import { rerunnable, resetsIn } from "./conformance-resets.mjs"

const name = "conformance:client"
const entry = join(root, "packages/testing/src/bin/conformance-client.ts")
const outDir = join(root, "out/conformance-client")
const driver = join(outDir, "driver/conformance-client.js")
const baseline = join(root, "conformance/client-baseline.yml")
// The suite runs a leg's scenarios all at once, a Node process each: on a small or busy machine
// a client can wait seconds for CPU, so it gets twice the suite's default 30 s, and gives up
// itself a little before the suite would kill it, leaving its reason in stderr.txt. Both legs
// stay within about three minutes even when every client runs out its time.
const CLIENT_TIMEOUT_MS = 60_000
const CLIENT_GIVE_UP_MS = 55_000
// Only bounds a hung leg; a healthy one takes well under a minute.
const LEG_TIMEOUT_MS = 90_000

const say = (line) => process.stdout.write(`${line}\n`)

// Clients run niced: the suite's mock servers all live in its one process, and a server whose
// event loop is starved for five seconds by forty clients at once drops the keep-alive
// connections clients are about to reuse (its idle timers fire before it reads what is waiting),
// which fails the request with ECONNRESET. The referee gets the CPU first; the clients wait.
const niced = spawnSync("nice", ["-n", "10", "true"]).status === 0
// The suite splits --command on spaces, so neither path may hold one.
const command = `${niced ? "nice -n 10 " : ""}${process.execPath} ${driver}`
if (process.execPath.includes(" ") || driver.includes(" ")) {
  say(`${name}: the suite splits its --command on spaces, and this one has a path with a space in it: ${command}`)
  process.exit(1)
}

// The same source `npm run bundle` puts in packages/testing/dist, but with effect and
// @effect/platform inlined as well as @mcpx-fx/*: the suite starts some forty clients at once,
// and loading effect's module graph from node_modules in each tripled a 2026-07-28 leg on two
// cores (59 s against 20 s), long enough for clients to time out.
const buildDriver = () =>
  esbuild.build({
    entryPoints: [entry],
    outfile: driver,
    bundle: true,
    // Our packages' sources, as in scripts/bundle.mjs.
    conditions: ["@mcpx-fx/source"],
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: "linked",
    logLevel: "warning",
    legalComments: "none",
    banner: { js: "import { createRequire as __mcpxCreateRequire } from 'node:module';const require = __mcpxCreateRequire(import.meta.url);" }
  })

const runLeg = (requirements) =>
  runSuite({
    name,
    args: [
      "client",
      "--command",
      command,
      "--requirements",
      requirements,
      "--expected-failures",
      baseline,
      "--timeout",
      String(CLIENT_TIMEOUT_MS)
    ],
    outDir: join(outDir, requirements),
    logFile: join(outDir, `${requirements}.log`),
    timeoutMs: LEG_TIMEOUT_MS,
    env: { MCPX_CONFORMANCE_GIVE_UP_MS: String(CLIENT_GIVE_UP_MS) }
  })

// One scenario again, alone, at the leg's wire: what --requirements runs, it runs with the
// revision as --spec-version and --force.
const rerun = (requirements, scenario) => {
  const slug = scenario.replace(/[^A-Za-z0-9_-]+/g, "_")
  return runSuite({
    name,
    args: [
      "client",
      "--command",
      command,
      "--scenario",
      scenario,
      "--spec-version",
      requirements,
      "--force",
      "--expected-failures",
      baseline,
      "--timeout",
      String(CLIENT_TIMEOUT_MS)
    ],
    outDir: join(outDir, `${requirements}-rerun`, slug),
    logFile: join(outDir, `${requirements}-rerun-${slug}.log`),
    timeoutMs: LEG_TIMEOUT_MS,
    env: { MCPX_CONFORMANCE_GIVE_UP_MS: String(CLIENT_GIVE_UP_MS) }
  })
}

// The suite's "Unexpected failures" list: `  ✗ <scenario>` lines (summary lines carry counts).
const unexpectedFailures = (output) =>
  output.split("\n").flatMap((line) => {
    const m = /^\s+✗ (\S+)$/.exec(line)
    return m === null ? [] : [m[1]]
  })

/**
 * A failed leg's verdict after at most one rerun of each scenario the mock server reset: true when
 * every unexpected failure was such a reset and passed when rerun. Anything else stays red.
 */
const settleFailedLeg = async (requirements, output) => {
  const unexpected = unexpectedFailures(output)
  const stale = output.includes("Stale baseline entries")
  const resets = resetsIn(join(outDir, requirements), unexpected)
  const load = loadavg()[0].toFixed(1)
  const toRerun = rerunnable({ unexpected, stale, resets })
  if (toRerun === undefined) {
    if (resets.size > 0) {
      say(`${name}: the suite's mock server reset the client's connection in ${[...resets.keys()].join(", ")} ` +
        `(load average ${load}), but other failures are not resets, so nothing is rerun`)
    }
    return false
  }
  say(`${name}: ${toRerun.length} scenario(s) failed only because the suite's mock server reset the client's ` +
    `connection (load average ${load}); rerunning each once, alone:`)
  let passed = true
  for (const scenario of toRerun) {
    const reset = resets.get(scenario)
    const again = await rerun(requirements, scenario)
    say(`  ${scenario} (${reset.url}: ${reset.cause}): rerun ${again.code === 0 ? "passed" : `FAILED (exit ${again.code})`}; ` +
      `log out/conformance-client/${requirements}-rerun-${scenario.replace(/[^A-Za-z0-9_-]+/g, "_")}.log`)
    if (again.code !== 0) passed = false
  }
  if (passed) reran.push(`${requirements}: ${toRerun.join(", ")}`)
  return passed
}

// Legs that passed only after reruns, for the closing line.
const reran = []

const main = async () => {
  const started = Date.now()
  installRunnerIfMissing(name)
  await buildDriver()
  const failed = []
  // One leg at a time: each already runs every scenario at once.
  for (const requirements of requirementSets) {
    const legStarted = Date.now()
    const { code, output } = await runLeg(requirements)
    const seconds = ((Date.now() - legStarted) / 1000).toFixed(1)
    say(`\n--- requirements ${requirements} (exit ${code}, ${seconds} s; full log out/conformance-client/${requirements}.log, ` +
      `per-scenario checks and client stderr under out/conformance-client/${requirements}/)`)
    say(summaryOf(output))
    if (code !== 0 && !(await settleFailedLeg(requirements, output))) failed.push(requirements)
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  if (failed.length > 0) {
    say(`\n${name}: FAILED for ${failed.join(", ")} (${seconds} s)`)
    process.exit(1)
  }
  const after = reran.length === 0 ? "" : `, after rerunning once what the suite's mock server reset (${reran.join("; ")})`
  say(`\n${name}: every scored scenario passed or is an expected failure for ${requirementSets.join(" and ")}${after} (${seconds} s)`)
}

main().catch((error) => {
  say(`${name}: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})
