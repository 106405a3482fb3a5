/**
 * The heap's limits (HeapSizing.ts, applied by bin.ts).
 *
 * The young generation is checked by what it does. A preloaded script keeps ~16 MB of fresh
 * objects alive while it allocates ~100 MB, which makes a default Node grow each semi-space to
 * its 16 MB limit (32 MB for the two), then reports the largest size it saw on stderr. A one-shot
 * command must stay at its start size, a daemon must stop at 8 MB per semi-space, and a size the
 * user gave Node must be left alone.
 *
 * Old space's growth is a number V8 uses at each mark-compact and no API reads back. So another
 * preloaded script records what the process asks of V8, and the bench measures the effect.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import * as DaemonProcess from "./support/DaemonProcess.js"
import { bundle, type Sandbox, sandbox } from "./support/Sandbox.js"

const churn = `
const v8 = require("v8")
const space = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size / 1048576
let most = space()
const ring = []
const churn = () => {
  const chunk = []
  for (let i = 0; i < 4096; i++) chunk.push({ i, s: "x" + i })
  ring.push(chunk)
  if (ring.length > 64) ring.shift()
  most = Math.max(most, space())
}
const report = () => process.stderr.write("young generation: " + most + " MB\\n")
// A one-shot command allocates in one synchronous run; a daemon over many turns of its event loop,
// once the test tells it (SIGUSR2) that the daemon is listening, after saying what its start left.
if (process.env.CHURN_AT_EXIT === "1") process.on("exit", () => { for (let t = 0; t < 400; t++) churn(); report() })
else process.once("SIGUSR2", () => {
  process.stderr.write("young generation at the start: " + space() + " MB\\n")
  let t = 0; const step = () => { churn(); if (++t < 400) setImmediate(step); else report() }; setImmediate(step)
})
`

const spy = `
const v8 = require("v8")
const set = v8.setFlagsFromString
const seen = []
v8.setFlagsFromString = (flags) => { seen.push(flags); set(flags) }
// The CLI imports node:v8 as an ES module, whose exports are copied from the CommonJS ones.
require("module").syncBuiltinESMExports()
process.on("exit", () => process.stderr.write("v8 flags set: " + JSON.stringify(seen) + "\\n"))
`

const flagsSet = (stderr: string): ReadonlyArray<string> => {
  const m = /v8 flags set: (.*)/.exec(stderr)
  assert.isNotNull(m, `no flags reported on stderr: ${stderr}`)
  return JSON.parse(m![1]!) as ReadonlyArray<string>
}

/** The V8 flags a run of the CLI set, recorded by the spy preloaded from `hook`. */
const spied = (sb: Sandbox, hook: string, nodeFlags: ReadonlyArray<string>, args: ReadonlyArray<string>) => {
  const r = spawnSync(process.execPath, [...nodeFlags, "--require", hook, bundle, ...args], {
    cwd: sb.root,
    encoding: "utf8",
    input: "",
    env: { PATH: process.env.PATH ?? "", HOME: sb.home, MCPX_STATE_DIR: sb.path("state") }
  })
  assert.strictEqual(r.status, 0, r.stderr)
  return flagsSet(r.stderr)
}

/** The first growth factor a run set: the one its start ran with. */
const startFactor = (flags: ReadonlyArray<string>): number => {
  const first = flags.find((f) => f.startsWith("--semi-space-growth-factor="))
  assert.isDefined(first, flags.join(" "))
  return Number(first!.split("=")[1])
}

const Report = /young generation: ([\d.]+) MB/

const preload = (sb: Sandbox) => sb.write("churn.cjs", churn)

const reported = (stderr: string): number => {
  const m = Report.exec(stderr)
  assert.isNotNull(m, `no report on stderr: ${stderr}`)
  return Number(m![1])
}

/** What the daemon's start left, then its report once it has churned; the churn starts now. */
const daemonReport = (daemon: DaemonProcess.Daemon): Effect.Effect<{ readonly atStart: number; readonly most: number }> =>
  Effect.async<string>((resume) => {
    const check = () => {
      if (Report.test(daemon.stderr())) {
        daemon.child.stderr?.off("data", onData)
        resume(Effect.succeed(daemon.stderr()))
      }
    }
    // After the harness's own listener, which collects what daemon.stderr() answers.
    const onData = () => check()
    daemon.child.stderr?.on("data", onData)
    daemon.child.kill("SIGUSR2")
    check()
    return Effect.sync(() => daemon.child.stderr?.off("data", onData))
  }).pipe(Effect.map((stderr) => {
    const atStart = /young generation at the start: ([\d.]+) MB/.exec(stderr)
    assert.isNotNull(atStart, stderr)
    return { atStart: Number(atStart![1]), most: reported(stderr) }
  }))

const startDaemon = (sb: Sandbox, nodeOptions: string) =>
  Effect.gen(function*() {
    const hook = yield* preload(sb)
    const config = yield* sb.writeJson("mcpx.json", { mcpServers: {} })
    return yield* DaemonProcess.start(sb, { config, env: { NODE_OPTIONS: `${nodeOptions} --require ${hook}`.trim() } })
  })

describe("heap sizing", () => {
  it.scopedLive("cli/memory/a one-shot command keeps the young generation at its start size", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const hook = yield* preload(sb)
      const r = yield* sb.run(["--help"], { env: { NODE_OPTIONS: `--require ${hook}`, CHURN_AT_EXIT: "1" } })
      assert.strictEqual(r.code, 0, r.stderr)
      assert.isAtMost(reported(r.stderr), 2)
    }))

  it.scopedLive("cli/memory/the daemon starts held, then lets it grow, but to 8 MB per semi-space at most", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const daemon = yield* startDaemon(sb, "")
      const { atStart, most } = yield* daemonReport(daemon)
      assert.isAtMost(atStart, 2)
      assert.isAbove(most, 2)
      assert.isAtMost(most, 16)
    }))

  it.scopedLive("cli/memory/a semi-space size given to Node is the user's, and the daemon leaves it alone", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const daemon = yield* startDaemon(sb, "--max-semi-space-size=16")
      assert.isAbove((yield* daemonReport(daemon)).most, 16)
    }))

  it.scopedLive("cli/memory/old space grows by 150% between mark-compacts, unless the user gave Node a growth", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const hook = yield* sb.write("spy.cjs", spy)
      const help = (nodeFlags: ReadonlyArray<string>) => spied(sb, hook, nodeFlags, ["--help"])
      assert.include(help([]), "--heap-growing-percent=150")
      const chosen = help(["--heap-growing-percent=200"])
      assert.isFalse(chosen.some((f) => f.startsWith("--heap-growing-percent")), chosen.join(" "))
      // The young generation is still held: the user chose only the old generation's growth.
      assert.include(chosen, "--semi-space-growth-factor=1")
    }))

  it.scopedLive("cli/memory/serve runs without allocation-site pretenuring, a one-shot command with it, unless the user chose", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const hook = yield* sb.write("spy.cjs", spy)
      const config = yield* sb.writeJson("empty.json", { mcpServers: {} })
      const serve = (nodeFlags: ReadonlyArray<string>) => spied(sb, hook, nodeFlags, ["serve", "--config", config])
      assert.include(serve([]), "--no-allocation-site-pretenuring")
      assert.notInclude(spied(sb, hook, [], ["--help"]), "--no-allocation-site-pretenuring")
      const chosen = serve(["--allocation-site-pretenuring"])
      assert.isFalse(chosen.some((f) => f.includes("pretenuring")), chosen.join(" "))
    }))

  it.scopedLive("cli/memory/serve starts with one growth to the cap, where a one-shot command starts held", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const hook = yield* sb.write("spy.cjs", spy)
      const config = yield* sb.writeJson("empty.json", { mcpServers: {} })
      // stdin is closed at once: serve starts, answers nothing and exits.
      assert.isAbove(startFactor(spied(sb, hook, [], ["serve", "--config", config])), 1)
      assert.strictEqual(startFactor(spied(sb, hook, [], ["--help"])), 1)
    }))
})
