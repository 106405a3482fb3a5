// Runs the official MCP conformance suite (server mode) against our conformance fixture over
// Streamable HTTP, with no expected-failures baseline: the fixture is the known-green reference
// the gateway's own conformance runs are compared with, so any failure here is a fixture bug.
//
// Each fixture variant runs for the requirement sets it can serve: the dual-era fixture for
// 2025-11-25 and 2026-07-28, the modern-only one for 2026-07-28 and the legacy-only one for
// 2025-11-25 (a legacy server cannot answer a 2026-07-28 request at all). A leg passes when the
// suite passes (its scored scenarios) and, under 2026-07-28, every scenario of the tasks
// extension passes too: the suite runs those without scoring them (an extension is optional),
// but the fixture serves the extension, so a failing one is a fixture bug like any other.
//
// The suite and its Node 22 come from tools/conformance-runner (see conformance-lib.mjs).
import { createWriteStream, mkdirSync } from "node:fs"
import { join } from "node:path"
import { bundle, checksOf, installRunnerIfMissing, root, runSuite, scenariosOf, startChild, stopChild, summaryOf } from "./conformance-lib.mjs"

const name = "conformance:fixture"
const fixtureScript = join(root, "packages/testing/dist/conformance-fixture.js")
const outDir = join(root, "out/conformance-fixture")
// Each leg takes seconds; the cap only bounds a hung run well inside the CI budget.
const LEG_TIMEOUT_MS = 120_000
const FIXTURE_START_TIMEOUT_MS = 30_000

const variants = [
  { id: "dual", args: [], requirements: ["2025-11-25", "2026-07-28"] },
  { id: "modern-only", args: ["--modern-only"], requirements: ["2026-07-28"] },
  { id: "legacy-only", args: ["--legacy-only"], requirements: ["2025-11-25"] }
]

/** The tasks extension's scenarios in conformance 0.2.0-alpha.12 (2026-07-28 only, never scored). */
const tasksScenarios = [
  "tasks-lifecycle",
  "tasks-capability-negotiation",
  "tasks-wire-fields",
  "tasks-request-state-removal",
  "tasks-mrtr-input",
  "tasks-request-headers",
  "tasks-dispatch-and-envelope",
  "tasks-status-notifications",
  "tasks-required-task-error",
  "tasks-mrtr-composition"
]

const say = (line) => process.stdout.write(`${line}\n`)

/** Starts the bundled fixture over HTTP and resolves with its URL once it has printed it. */
const startFixture = async (variant, log) => {
  const { child, first } = await startChild({
    command: process.execPath,
    args: [fixtureScript, "--http", ...variant.args],
    log,
    timeoutMs: FIXTURE_START_TIMEOUT_MS,
    what: "fixture"
  })
  return { child, url: first.url }
}

const stopFixture = (child) => stopChild(child, 5_000)

/** Runs one leg; resolves with the exit code and the suite's full output. */
const runLeg = (variant, url, requirements) =>
  runSuite({
    name,
    args: ["server", "--url", url, "--requirements", requirements],
    outDir: join(outDir, variant.id, requirements),
    logFile: join(outDir, `${variant.id}-${requirements}.log`),
    timeoutMs: LEG_TIMEOUT_MS
  })

/** What keeps a 2026-07-28 leg from passing on the tasks scenarios; none when all passed. */
const tasksProblems = (rows, checks) => {
  const problems = []
  for (const scenario of tasksScenarios) {
    const row = rows.find((r) => r.scenario === scenario)
    if (row === undefined) {
      problems.push(`${scenario}: not reported by the suite`)
      continue
    }
    for (const c of (checks[scenario] ?? []).filter((c) => c.status === "FAILURE")) {
      problems.push(`${scenario}: ${c.id} failed: ${c.errorMessage ?? "(no message)"}`)
    }
    if (!row.ok && !problems.some((p) => p.startsWith(`${scenario}:`))) problems.push(`${scenario}: failed`)
  }
  return problems
}

const runVariant = async (variant, failed) => {
  const fixtureLog = createWriteStream(join(outDir, `fixture-${variant.id}.log`))
  const { child, url } = await startFixture(variant, fixtureLog)
  const onSignal = (signal) => {
    stopFixture(child).finally(() => process.exit(signal === "SIGINT" ? 130 : 143))
  }
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)
  try {
    say(`${name}: ${variant.id} fixture at ${url}`)
    for (const requirements of variant.requirements) {
      const { code, output } = await runLeg(variant, url, requirements)
      say(`\n--- ${variant.id} ${requirements} (exit ${code}; full log out/conformance-fixture/${variant.id}-${requirements}.log)`)
      say(summaryOf(output))
      const problems = code === 0 ? [] : ["the suite failed (a scored scenario)"]
      if (requirements === "2026-07-28") {
        const rows = scenariosOf(output)
        const tasks = tasksProblems(rows, checksOf(join(outDir, variant.id, requirements)))
        const passing = tasksScenarios.length - new Set(tasks.map((p) => p.slice(0, p.indexOf(":")))).size
        say(`tasks extension scenarios passing: ${passing} of ${tasksScenarios.length}`)
        problems.push(...tasks)
      }
      for (const p of problems) say(`GATE: ${p}`)
      if (problems.length > 0) failed.push(`${variant.id} ${requirements}`)
    }
  } finally {
    process.removeListener("SIGINT", onSignal)
    process.removeListener("SIGTERM", onSignal)
    await stopFixture(child)
    fixtureLog.end()
  }
}

const main = async () => {
  const started = Date.now()
  installRunnerIfMissing(name)
  bundle(name)
  mkdirSync(outDir, { recursive: true })
  const failed = []
  for (const variant of variants) await runVariant(variant, failed)
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  if (failed.length > 0) {
    say(`\n${name}: FAILED for ${failed.join(", ")} (${seconds} s)`)
    process.exit(1)
  }
  say(`\n${name}: every scored scenario and every tasks extension scenario passed (${variants.map((v) => `${v.id}: ${v.requirements.join(" and ")}`).join("; ")}) (${seconds} s)`)
}

main().catch((error) => {
  say(`${name}: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})
