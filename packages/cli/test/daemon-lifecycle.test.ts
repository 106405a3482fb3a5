/**
 * `mcpx-fx daemon`, `status` and `stop` through the bundle: where it listens and what it writes,
 * one daemon per state directory, and a graceful shutdown that leaves nothing behind — no files,
 * no upstream processes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, statSync } from "node:fs"
import * as path from "node:path"
import { isLoopback } from "../src/commands/Daemon.js"
import * as DaemonProcess from "./support/DaemonProcess.js"
import * as EraLog from "./support/EraLog.js"
import { type Sandbox, sandbox } from "./support/Sandbox.js"

const eraServer = (mode: string) => ({
  command: process.execPath,
  args: [Fixtures.fixtureScript("era-server"), "--mode", mode]
})

const config = (sb: Sandbox, servers: Record<string, unknown>) => sb.writeJson("mcpx.json", { mcpServers: servers })

const stateEnv = (daemon: DaemonProcess.Daemon) => ({ env: { MCPX_STATE_DIR: daemon.stateDir } })

const packageVersion = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version

const mode = (file: string): number => statSync(file).mode & 0o777

const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The pids of a process's children (Linux /proc, as `ps --ppid` reads it). */
const childrenOf = (pid: number): ReadonlyArray<number> =>
  execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
    .split("\n")
    .map((l) => Number.parseInt(l.trim(), 10))
    .filter((n) => Number.isInteger(n))

describe("daemon", () => {
  it.scoped("daemon/start/prints where it listens and writes an owner-only info file and socket", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const daemon = yield* DaemonProcess.start(sb, { config: yield* config(sb, { modern: eraServer("modern-only") }) })
      const { info } = daemon
      assert.match(info.url, /^http:\/\/127\.0\.0\.1:\d+$/)
      assert.strictEqual(info.mcp, `${info.url}/mcp`)
      assert.strictEqual(info.pid, daemon.child.pid)
      const infoFile = path.join(daemon.stateDir, "daemon.json")
      assert.deepStrictEqual(JSON.parse(readFileSync(infoFile, "utf8")), info)
      assert.strictEqual(mode(infoFile), 0o600)
      assert.strictEqual(info.socket, path.join(daemon.stateDir, "daemon.sock"))
      assert.isTrue(statSync(info.socket).isSocket())
      assert.strictEqual(mode(info.socket), 0o600)
      const health = yield* Effect.promise(() => fetch(`${info.url}/v1/health`).then((r) => r.json()))
      assert.deepInclude(health, { ok: true, pid: info.pid })
      // The API document carries the package's version, which is the daemon's.
      const openapi = yield* Effect.promise(() => fetch(`${info.url}/v1/openapi.json`).then((r) => r.json() as Promise<{ info: { version: string } }>))
      assert.strictEqual(openapi.info.version, packageVersion)
      assert.strictEqual(info.version, packageVersion)
    }))

  it.scoped("daemon/start/a second daemon for the same state refuses and names the first", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* config(sb, { modern: eraServer("modern-only") })
      const first = yield* DaemonProcess.start(sb, { config: file })
      const second = yield* sb.run(["daemon", "--config", file, "--daemon-port", "0"], stateEnv(first))
      assert.strictEqual(second.code, 1)
      assert.include(second.stderr, `pid ${first.info.pid}`)
      assert.include(second.stderr, first.info.url)
      // The first is untouched: still answering, its files still there.
      assert.isTrue(existsSync(path.join(first.stateDir, "daemon.json")))
      const health = yield* Effect.promise(() => fetch(`${first.info.url}/v1/health`).then((r) => r.status))
      assert.strictEqual(health, 200)
    }))

  it.scoped("daemon/start/files left by a daemon that died are taken over", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const state = yield* sb.mkdir("state")
      // A pid that certainly belonged to a process and no longer does.
      const dead = execFileSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" })
      yield* sb.write("state/daemon.lock", `${dead}\n`)
      yield* sb.write("state/daemon.sock", "")
      const daemon = yield* DaemonProcess.start(sb, { config: yield* config(sb, { modern: eraServer("modern-only") }), stateDir: state })
      // The lock's first line is its holder's pid (the second, its start time).
      assert.strictEqual(readFileSync(path.join(state, "daemon.lock"), "utf8").split("\n")[0], String(daemon.info.pid))
      assert.isTrue(statSync(daemon.info.socket).isSocket())
    }))

  it.scoped("daemon/shutdown/SIGTERM removes its files, stops upstream processes and exits 0", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* config(sb, { modern: eraServer("modern-only") })
      const daemon = yield* DaemonProcess.start(sb, { config: file })
      // A call starts the upstream, a child of the daemon.
      const status = yield* Effect.promise(() =>
        fetch(`${daemon.info.url}/v1/call`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ tool: "modern.hello", arguments: {} })
        }).then((r) => r.status)
      )
      assert.strictEqual(status, 200)
      const upstreams = childrenOf(daemon.info.pid)
      assert.lengthOf(upstreams, 1)
      const code = yield* daemon.stop("SIGTERM")
      assert.strictEqual(code, 0)
      for (const name of ["daemon.json", "daemon.sock", "daemon.lock"]) {
        assert.isFalse(existsSync(path.join(daemon.stateDir, name)), `${name} left behind`)
      }
      assert.isFalse(processAlive(upstreams[0]!), "the upstream outlived the daemon")
    }))

  it.scoped("daemon/shutdown/a call in flight at SIGTERM finishes within the grace period", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const log = sb.path("modern.log")
      const file = yield* sb.writeJson("mcpx.json", {
        mcpServers: { modern: { ...eraServer("modern-only"), args: [...eraServer("modern-only").args, "--log", log] } }
      })
      const daemon = yield* DaemonProcess.start(sb, { config: file })
      const call = fetch(`${daemon.info.url}/v1/call`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ tool: "modern.slow", arguments: { ms: 1500 } })
      }).then(async (r) => ({ status: r.status, body: await r.json() as { result: unknown } }))
      // Once the upstream has the call, the daemon is told to stop.
      yield* EraLog.until(log, (lines) => lines.some((l) => l.method === "tools/call"))
      yield* Effect.sync(() => daemon.child.kill("SIGTERM"))
      const answered = yield* Effect.promise(() => call)
      assert.strictEqual(answered.status, 200, `${JSON.stringify(answered.body)} ${daemon.stderr()}`)
      assert.include(JSON.stringify(answered.body.result), "slept 1500ms")
      assert.strictEqual(yield* daemon.exited, 0)
    }))

  it.scoped("daemon/status/reports the running daemon and exits 1 when there is none", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* config(sb, { modern: eraServer("modern-only") })
      const none = yield* sb.run(["status"], { env: { MCPX_STATE_DIR: sb.path("state") } })
      assert.strictEqual(none.code, 1)
      assert.include(none.stderr, "no daemon is running")
      const daemon = yield* DaemonProcess.start(sb, { config: file })
      const text = yield* sb.run(["status"], stateEnv(daemon))
      assert.strictEqual(text.code, 0, text.stderr)
      assert.include(text.stdout, daemon.info.mcp)
      assert.include(text.stdout, "modern")
      const json = yield* sb.run(["status", "--json"], stateEnv(daemon))
      const body = JSON.parse(json.stdout) as { running: boolean; pid: number; status: { servers: ReadonlyArray<{ name: string }> } }
      assert.isTrue(body.running)
      assert.strictEqual(body.pid, daemon.info.pid)
      assert.deepStrictEqual(body.status.servers.map((s) => s.name), ["modern"])
    }))

  it.scoped("daemon/status/labels each session with the era it speaks and the version it negotiated", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* config(sb, { old: eraServer("legacy-32601"), new: eraServer("modern-only") })
      const daemon = yield* DaemonProcess.start(sb, { config: file })
      for (const tool of ["old.hello", "new.hello"]) {
        const call = yield* sb.run(["call", tool], stateEnv(daemon))
        assert.strictEqual(call.code, 0, call.stderr)
      }
      const text = yield* sb.run(["status"], stateEnv(daemon))
      assert.strictEqual(text.code, 0, text.stderr)
      const row = (server: string) => text.stdout.split("\n").find((l) => l.startsWith(`${server} `))?.split(/ {2,}/)
      assert.deepStrictEqual(row("SERVER"), ["SERVER", "TRANSPORT", "PREFERENCE", "SESSIONS"], text.stdout)
      assert.deepStrictEqual(row("old"), ["old", "stdio", "prefer-discover", "legacy 2025-11-25"], text.stdout)
      assert.deepStrictEqual(row("new"), ["new", "stdio", "prefer-discover", "modern 2026-07-28"], text.stdout)
    }))

  it.scoped("daemon/stop/stops the running daemon and waits until it is gone", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const daemon = yield* DaemonProcess.start(sb, { config: yield* config(sb, { modern: eraServer("modern-only") }) })
      const stopped = yield* sb.run(["stop"], stateEnv(daemon))
      assert.strictEqual(stopped.code, 0, stopped.stderr)
      assert.include(stopped.stdout, `pid ${daemon.info.pid}`)
      // `stop` returns only once the process is gone.
      assert.isFalse(processAlive(daemon.info.pid))
      assert.isFalse(existsSync(path.join(daemon.stateDir, "daemon.json")))
      const again = yield* sb.run(["stop"], stateEnv(daemon))
      assert.strictEqual(again.code, 1)
      assert.include(again.stderr, "no daemon is running")
    }))

  it("daemon/address/only loopback addresses count as local", () => {
    for (const a of ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"]) assert.isTrue(isLoopback(a), a)
    for (const a of ["0.0.0.0", "::", "192.168.1.10", "example.com"]) assert.isFalse(isLoopback(a), a)
  })
})
