/**
 * `mcpx-fx call --task` and `mcpx-fx tasks`, end to end through the bundle against a daemon: the
 * id comes back at once, `tasks result` waits for the call's own result (exit 75 while it has not
 * ended), a task's question is answered with `tasks answer`, `tasks cancel` stops one, and the
 * commands refuse without a daemon or with an id nobody issued.
 */
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import * as DaemonProcess from "./support/DaemonProcess.js"
import { sandbox } from "./support/Sandbox.js"

const era = (mode: string) => ({ command: process.execPath, args: [Fixtures.fixtureScript("era-server"), "--mode", mode] })

/** A daemon on the era fixture; `run` runs the CLI against it. */
const withDaemon = Effect.gen(function*() {
  const sb = yield* sandbox
  const config = yield* sb.writeJson("mcpx.json", {
    mcpServers: { dual: era("dual"), leg: era("legacy-32601") },
    settings: { "upstream.probeTimeout": "20s" }
  })
  const daemon = yield* DaemonProcess.start(sb, { config })
  const run = (args: ReadonlyArray<string>) => sb.run(args, { env: { MCPX_STATE_DIR: daemon.stateDir } })
  return { sb, run }
})

const idOf = (stdout: string): string => {
  const id = stdout.trim()
  assert.match(id, /^[A-Za-z0-9_-]{22,}$/, stdout)
  return id
}

describe("mcpx-fx call --task and mcpx-fx tasks", () => {
  it.scopedLive("cli/tasks/call --task prints the id at once; tasks result prints the call's result; tasks list and get show it", () =>
    Effect.gen(function*() {
      const { run } = yield* withDaemon
      const started = yield* run(["call", "--task", "dual.slow", "{\"ms\":200}"])
      assert.strictEqual(started.code, 0, started.stderr)
      const id = idOf(started.stdout)
      const result = yield* run(["tasks", "result", id])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(result.stdout.trim(), "slept 200ms")
      const listed = yield* run(["tasks", "list"])
      assert.strictEqual(listed.code, 0, listed.stderr)
      assert.match(listed.stdout, new RegExp(`${id}\\s+completed`))
      const got = yield* run(["tasks", "get", id, "--json"])
      assert.strictEqual(got.code, 0, got.stderr)
      assert.deepInclude(JSON.parse(got.stdout) as object, { taskId: id, status: "completed" })
      const json = yield* run(["call", "--task", "dual.hello", "--json"])
      assert.strictEqual(json.code, 0, json.stderr)
      assert.strictEqual((JSON.parse(json.stdout) as { task: { status: string } }).task.status, "working")
    }))

  it.scopedLive("cli/tasks/a task not ended is exit 75; cancel stops it and its result is then exit 1", () =>
    Effect.gen(function*() {
      const { run } = yield* withDaemon
      const id = idOf((yield* run(["call", "--task", "dual.slow", "{\"ms\":600000}"])).stdout)
      const waited = yield* run(["tasks", "result", id, "--wait", "0"])
      assert.strictEqual(waited.code, 75, waited.stderr)
      assert.include(waited.stderr, `task ${id} is still working`)
      const cancelled = yield* run(["tasks", "cancel", id])
      assert.strictEqual(cancelled.code, 0, cancelled.stderr)
      assert.include(cancelled.stdout, `${id}  cancelled`)
      const after = yield* run(["tasks", "result", id])
      assert.strictEqual(after.code, 1, after.stderr)
      assert.include(after.stderr, "cancelled")
    }))

  it.scopedLive("cli/tasks/a task's question is printed with exit 75; tasks answer lets it finish", () =>
    Effect.gen(function*() {
      const { run } = yield* withDaemon
      const id = idOf((yield* run(["call", "--task", "leg.ask_name"])).stdout)
      const asked = yield* run(["tasks", "result", id])
      assert.strictEqual(asked.code, 75, asked.stderr)
      const key = /^\s+(\S+): elicitation\/create/m.exec(asked.stdout)?.[1]
      assert.isString(key, asked.stdout)
      assert.include(asked.stderr, `mcpx-fx tasks answer ${id}`)
      const bad = yield* run(["tasks", "answer", id, "[1]"])
      assert.strictEqual(bad.code, 2, bad.stderr)
      const answered = yield* run(["tasks", "answer", id, JSON.stringify({ [key!]: { action: "accept", content: { name: "Ada" } } })])
      assert.strictEqual(answered.code, 0, answered.stderr)
      const done = yield* run(["tasks", "result", id])
      assert.strictEqual(done.code, 0, done.stderr)
      assert.include(done.stdout, "hello, Ada")
    }))

  it.scopedLive("cli/tasks/an unknown id is exit 2; without a daemon the commands say one is needed", () =>
    Effect.gen(function*() {
      const { run } = yield* withDaemon
      const unknown = yield* run(["tasks", "get", "AAAAAAAAAAAAAAAAAAAAAA"])
      assert.strictEqual(unknown.code, 2, unknown.stderr)
      assert.include(unknown.stderr, "no task AAAAAAAAAAAAAAAAAAAAAA")
      const conflicting = yield* run(["call", "--task", "--local", "dual.hello"])
      assert.strictEqual(conflicting.code, 2, conflicting.stderr)
      const sb = yield* sandbox
      const alone = yield* sb.run(["tasks", "list"], { env: { MCPX_STATE_DIR: sb.path("state") } })
      assert.strictEqual(alone.code, 1, alone.stderr)
      assert.include(alone.stderr, "needs a running daemon")
      const call = yield* sb.run(["call", "--task", "dual.hello"], { env: { MCPX_STATE_DIR: sb.path("state") } })
      assert.strictEqual(call.code, 1, call.stderr)
      assert.include(call.stderr, "call --task needs a running daemon")
    }))
})
