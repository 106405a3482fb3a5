/**
 * `mcpx-fx call` on a tool that asks, end to end through the bundle: without a terminal it stops
 * with exit 75, printing the question and the commands that answer it while the daemon keeps the
 * call; `mcpx-fx elicit` answers it and `call --resume` collects the result. In-process, with no
 * daemon to keep the call, exit 75 says it was cancelled. On a terminal (a pty from `script`),
 * the question is asked there.
 */
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as DaemonProcess from "./support/DaemonProcess.js"
import { bundle, type Sandbox, sandbox } from "./support/Sandbox.js"

const era = (mode: string) => ({ command: process.execPath, args: [Fixtures.fixtureScript("era-server"), "--mode", mode] })
const servers = { leg: era("legacy-32601") }

/** A sandbox with the config and a daemon on it; `run` runs the CLI against that daemon. */
const withDaemon = Effect.gen(function*() {
  const sb = yield* sandbox
  const config = yield* sb.writeJson("mcpx.json", { mcpServers: servers, settings: { "upstream.probeTimeout": "20s" } })
  const daemon = yield* DaemonProcess.start(sb, { config })
  const run = (args: ReadonlyArray<string>) => sb.run(args, { env: { MCPX_STATE_DIR: daemon.stateDir } })
  return { sb, run }
})

/** The id `mcpx-fx elicit answer <id>` names in an exit-75 message. */
const questionIdIn = (stderr: string): string => {
  const id = /mcpx-fx elicit answer (\S+)/.exec(stderr)?.[1]
  assert.isString(id, stderr)
  return id!
}
const callIdIn = (stderr: string): string => {
  const id = /mcpx-fx call --resume (\S+)/.exec(stderr)?.[1]
  assert.isString(id, stderr)
  return id!
}

/** Runs the CLI on a pseudo-terminal (`script`), typing `input` once `ready` appears in its output. */
const onTerminal = (sb: Sandbox, args: ReadonlyArray<string>, ready: string, input: string) =>
  Effect.async<{ readonly output: string; readonly code: number }>((resume) => {
    const command = [process.execPath, bundle, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ")
    const child = spawn("script", ["-qec", command, "/dev/null"], {
      cwd: sb.root,
      env: { PATH: process.env.PATH ?? "", HOME: sb.home, XDG_CONFIG_HOME: sb.path("home", ".config") },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let output = ""
    let typed = false
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk
      if (!typed && output.includes(ready)) {
        typed = true
        child.stdin.write(input)
      }
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
    child.once("exit", (code) => resume(Effect.succeed({ output, code: code ?? -1 })))
    return Effect.sync(() => void child.kill())
  })

describe("mcpx-fx call on a tool that asks", () => {
  it.scopedLive("cli/questions/without a terminal call exits 75 naming the commands; elicit answer and call --resume finish it", () =>
    Effect.gen(function*() {
      const { run } = yield* withDaemon
      const asked = yield* run(["call", "leg.ask_name"])
      assert.strictEqual(asked.code, 75, asked.stderr)
      assert.include(asked.stderr, "What is your name?")
      assert.include(asked.stderr, "field: name (string, required)")
      const question = questionIdIn(asked.stderr)
      const call = callIdIn(asked.stderr)
      assert.include(asked.stderr, `mcpx-fx elicit decline ${question}`)
      assert.strictEqual(asked.stdout, "")

      const listed = yield* run(["elicit", "list", "--json"])
      assert.strictEqual(listed.code, 0, listed.stderr)
      const open = (JSON.parse(listed.stdout) as { questions: ReadonlyArray<{ id: string; call?: string; method: string }> }).questions
      assert.deepStrictEqual(open.map((q) => [q.id, q.call, q.method]), [[question, call, "elicitation/create"]])

      const bad = yield* run(["elicit", "answer", question, "[1]"])
      assert.strictEqual(bad.code, 2, bad.stderr)
      const answered = yield* run(["elicit", "answer", question, "{\"name\":\"Ada\"}"])
      assert.strictEqual(answered.code, 0, answered.stderr)
      assert.include(answered.stdout, `mcpx-fx call --resume ${call}`)

      const resumed = yield* run(["call", "--resume", call])
      assert.strictEqual(resumed.code, 0, resumed.stderr)
      assert.strictEqual(resumed.stdout.trim(), "hello, Ada")
      const again = yield* run(["call", "--resume", call])
      assert.strictEqual(again.code, 2, again.stderr)
    }))

  it.scopedLive("cli/questions/elicit decline and cancel answer the elicitation as such; --json prints where the call stands", () =>
    Effect.gen(function*() {
      const { run } = yield* withDaemon
      for (const action of ["decline", "cancel"] as const) {
        const asked = yield* run(["call", "leg.ask_name", "--json"])
        assert.strictEqual(asked.code, 75, asked.stderr)
        const status = JSON.parse(asked.stdout) as { id: string; status: string; questions: ReadonlyArray<{ id: string }> }
        assert.strictEqual(status.status, "input_required")
        const refused = yield* run(["elicit", action, status.questions[0]!.id])
        assert.strictEqual(refused.code, 0, refused.stderr)
        const resumed = yield* run(["call", "--resume", status.id])
        assert.strictEqual(resumed.stdout.trim(), `no name (${action})`, resumed.stderr)
      }
    }))

  it.scopedLive("cli/questions/in-process there is nothing to keep the call: exit 75 says it was cancelled upstream", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const config = yield* sb.writeJson("mcpx.json", { mcpServers: servers, settings: { "upstream.probeTimeout": "20s" } })
      const asked = yield* sb.run(["call", "leg.ask_name", "--config", config], { env: { MCPX_STATE_DIR: sb.path("state") } })
      assert.strictEqual(asked.code, 75, asked.stderr)
      assert.include(asked.stderr, "What is your name?")
      assert.include(asked.stderr, "cancelled upstream")
      assert.notInclude(asked.stderr, "mcpx-fx elicit answer")
    }))

  it.scopedLive("cli/questions/a question this command cannot take (sampling) exits 75, not 2; roots it did not declare are answered with none", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const legacy = { command: process.execPath, args: [Fixtures.fixtureScript("sdk-v1-legacy")] }
      const config = yield* sb.writeJson("mcpx.json", { mcpServers: { legacy }, settings: { "upstream.probeTimeout": "20s" } })
      const env = { env: { MCPX_STATE_DIR: sb.path("state") } }
      const sampled = yield* sb.run(["call", "legacy.ask_sampling", "--local", "--config", config], env)
      assert.strictEqual(sampled.code, 75, sampled.stderr)
      assert.include(sampled.stderr, "sampling")
      assert.include(sampled.stderr, "the call was cancelled")
      const rooted = yield* sb.run(["call", "legacy.ask_roots", "--local", "--config", config], env)
      assert.strictEqual(rooted.code, 0, rooted.stderr)
      assert.strictEqual(rooted.stdout.trim(), "Roots: (none)")
    }))

  it.scopedLive("cli/questions/on a terminal the question is asked there, field by field; --no-input stops with 75 instead", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const config = yield* sb.writeJson("mcpx.json", { mcpServers: servers, settings: { "upstream.probeTimeout": "20s" } })
      const env = ["--config", config]
      const answered = yield* onTerminal(sb, ["call", "leg.ask_name", ...env], "Your name", "Grace\n")
      assert.strictEqual(answered.code, 0, answered.output)
      assert.include(answered.output, "What is your name?")
      assert.include(answered.output, "hello, Grace")
      const declined = yield* onTerminal(sb, ["call", "leg.ask_name", ...env], "Your name", "!decline\n")
      assert.include(declined.output, "no name (decline)")
      const refused = yield* onTerminal(sb, ["call", "leg.ask_name", "--no-input", ...env], "What is your name?", "")
      assert.strictEqual(refused.code, 75, refused.output)
    }))
})
