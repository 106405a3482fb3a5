/**
 * What sits in the state directory when the daemon starts, through the bundle: files that are not
 * what mcpx-fx wrote there never hang a start or a command, a lock held by a process that is not
 * an mcpx-fx daemon is taken over, a path mcpx-fx must not remove is named with what to do, and
 * no temp file outlives the write it was for.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync, spawn } from "node:child_process"
import { lstatSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import * as DaemonProcess from "./support/DaemonProcess.js"
import { type Sandbox, sandbox } from "./support/Sandbox.js"
import { era } from "./support/StdioServe.js"

const config = (sb: Sandbox) => sb.writeJson("mcpx.json", { mcpServers: { up: era("dual") } })

const call = (url: string) =>
  Effect.promise(() =>
    fetch(`${url}/v1/call`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tool: "up.echo", arguments: { message: "hi" } })
    }).then((r) => r.status)
  )

// A pid that certainly belonged to a process and no longer does.
const deadPid = () => Number(execFileSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }))

/** A live process that is nothing of mcpx-fx's, killed when the scope closes. */
const unrelated = Effect.acquireRelease(
  Effect.sync(() => spawn("sleep", ["600"], { stdio: "ignore" })),
  (child) => Effect.sync(() => child.kill("SIGKILL"))
)

const oddFiles = [
  ["a FIFO", (file: string) => execFileSync("mkfifo", [file])],
  ["a symlink to /dev/zero", (file: string) => symlinkSync("/dev/zero", file)]
] as const

describe.concurrent("daemon state files", () => {
  it.scoped.each(oddFiles)(
    "daemon/state/%s as upstream-eras.json does not hold the start, and the first probe replaces it",
    ([_, make]) =>
      Effect.gen(function*() {
        const sb = yield* sandbox
        const state = yield* sb.mkdir("state")
        make(path.join(state, "upstream-eras.json"))
        const daemon = yield* DaemonProcess.start(sb, { config: yield* config(sb), stateDir: state })
        assert.strictEqual(yield* call(daemon.info.url), 200, daemon.stderr())
        assert.isTrue(lstatSync(path.join(state, "upstream-eras.json")).isFile())
        assert.include(daemon.stderr(), "era cache file ignored")
      })
  )

  it.scoped("daemon/state/status with a FIFO as daemon.json says no daemon runs, and names the file", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const state = yield* sb.mkdir("state")
      execFileSync("mkfifo", [path.join(state, "daemon.json")])
      const status = yield* sb.run(["status"], { env: { MCPX_STATE_DIR: state } })
      assert.strictEqual(status.code, 1, status.stderr)
      assert.include(status.stderr, "no daemon is running")
      assert.include(status.stderr, "daemon.json ignored: a FIFO")
    }))

  it.scoped.each([["names no start time", ""], ["names another start time", "1\n"]] as const)(
    "daemon/state/a daemon.lock whose live pid is not an mcpx-fx daemon (it %s) is taken over",
    ([_, start]) =>
      Effect.gen(function*() {
        const sb = yield* sandbox
        const state = yield* sb.mkdir("state")
        const holder = yield* unrelated
        yield* sb.write("state/daemon.lock", `${holder.pid}\n${start}`)
        const daemon = yield* DaemonProcess.start(sb, { config: yield* config(sb), stateDir: state })
        assert.strictEqual(readFileSync(path.join(state, "daemon.lock"), "utf8").split("\n")[0], String(daemon.info.pid))
        assert.include(daemon.stderr(), `names pid ${holder.pid}, which is not the mcpx-fx daemon`)
        assert.isNull(holder.exitCode, "the lock's holder was touched")
      })
  )

  it.scoped("daemon/state/daemon.sock as a directory is refused, naming it and what to do", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      yield* sb.mkdir("state/daemon.sock/inside")
      const state = sb.path("state")
      const run = yield* sb.run(["daemon", "--config", yield* config(sb), "--daemon-port", "0"], { env: { MCPX_STATE_DIR: state } })
      assert.strictEqual(run.code, 1, run.stderr)
      assert.notInclude(run.stderr, "internal error")
      assert.include(run.stderr, path.join(state, "daemon.sock"))
      assert.include(run.stderr, "it is a directory")
      assert.include(run.stderr, "rm -r")
    }))

  it.scoped("daemon/state/an info file that cannot be written fails the start and leaves no temp file", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      yield* sb.mkdir("state/daemon.json/inside")
      const state = sb.path("state")
      const run = yield* sb.run(["daemon", "--config", yield* config(sb), "--daemon-port", "0"], { env: { MCPX_STATE_DIR: state } })
      assert.strictEqual(run.code, 1, run.stderr)
      assert.include(run.stderr, "daemon.json")
      assert.deepStrictEqual(readdirSync(state).filter((f) => f.endsWith(".tmp")), [])
    }))

  it.scoped("daemon/state/temp files that writes of a dead process left are removed at start", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const state = yield* sb.mkdir("state")
      const dead = deadPid()
      const stale = [`daemon.json.${dead}.tmp`, `.daemon.json.${dead}.a1b2c3.tmp`, `.upstream-eras.json.${dead}.a1b2c3.tmp`]
      const live = `.upstream-eras.json.${process.pid}.a1b2c3.tmp`
      for (const f of [...stale, live]) writeFileSync(path.join(state, f), "")
      yield* DaemonProcess.start(sb, { config: yield* config(sb), stateDir: state })
      const left = readdirSync(state).filter((f) => f.endsWith(".tmp"))
      assert.deepStrictEqual(left, [live])
    }))
})
