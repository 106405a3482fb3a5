// Runs the official MCP conformance suite (server mode) against our conformance fixture over
// Streamable HTTP, once per frozen requirement set, with no expected-failures baseline: the
// fixture is the known-green reference the gateway's own conformance runs are compared with,
// so any scored failure here is a fixture bug.
//
// The suite and its Node 22 come from tools/conformance-runner (see conformance-lib.mjs).
import { createWriteStream, mkdirSync } from "node:fs"
import { join } from "node:path"
import { bundle, installRunnerIfMissing, requirementSets, root, runSuite, startChild, stopChild, summaryOf } from "./conformance-lib.mjs"

const name = "conformance:fixture"
const fixtureScript = join(root, "packages/testing/dist/conformance-fixture.js")
const outDir = join(root, "out/conformance-fixture")
// Each leg takes seconds; the cap only bounds a hung run well inside the CI budget.
const LEG_TIMEOUT_MS = 120_000
const FIXTURE_START_TIMEOUT_MS = 30_000

const say = (line) => process.stdout.write(`${line}\n`)

/** Starts the bundled fixture over HTTP and resolves with its URL once it has printed it. */
const startFixture = async (log) => {
  const { child, first } = await startChild({
    command: process.execPath,
    args: [fixtureScript, "--http"],
    log,
    timeoutMs: FIXTURE_START_TIMEOUT_MS,
    what: "fixture"
  })
  return { child, url: first.url }
}

const stopFixture = (child) => stopChild(child, 5_000)

/** Runs one leg; resolves with the exit code and the suite's full output. */
const runLeg = (url, requirements) =>
  runSuite({
    name,
    args: ["server", "--url", url, "--requirements", requirements],
    outDir: join(outDir, requirements),
    logFile: join(outDir, `${requirements}.log`),
    timeoutMs: LEG_TIMEOUT_MS
  })

const main = async () => {
  const started = Date.now()
  installRunnerIfMissing(name)
  bundle(name)
  mkdirSync(outDir, { recursive: true })
  const fixtureLog = createWriteStream(join(outDir, "fixture.log"))
  const { child, url } = await startFixture(fixtureLog)
  const onSignal = (signal) => {
    stopFixture(child).finally(() => process.exit(signal === "SIGINT" ? 130 : 143))
  }
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)
  const failed = []
  try {
    say(`conformance:fixture: fixture at ${url}`)
    for (const requirements of requirementSets) {
      const { code, output } = await runLeg(url, requirements)
      say(`\n--- requirements ${requirements} (exit ${code}; full log out/conformance-fixture/${requirements}.log)`)
      say(summaryOf(output))
      if (code !== 0) failed.push(requirements)
    }
  } finally {
    await stopFixture(child)
    fixtureLog.end()
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  if (failed.length > 0) {
    say(`\nconformance:fixture: FAILED for ${failed.join(", ")} (${seconds} s)`)
    process.exit(1)
  }
  say(`\nconformance:fixture: every scored scenario passed for ${requirementSets.join(" and ")} (${seconds} s)`)
}

main().catch((error) => {
  say(`conformance:fixture: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})
