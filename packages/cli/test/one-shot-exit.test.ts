/**
 * A one-shot command prints its answer and exits without waiting for a server that stays up
 * after its stdin closes (and ignores SIGTERM): the server is handed to a detached reaper, which
 * stops it after the kill grace, SIGTERM and SIGKILL, as the command itself would have.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { readFileSync } from "node:fs"
import * as DaemonProcess from "./support/DaemonProcess.js"
import { sandbox } from "./support/Sandbox.js"

/** A legacy server that writes its pid to `pidFile`, then outlives EOF and ignores SIGTERM. */
const stubborn = (pidFile: string) => `
require("node:fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid))
setInterval(() => {}, 1000)
process.on("SIGTERM", () => {})
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n")
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line)
  if (m.id === undefined) return
  if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } } })
  if (m.method === "tools/list") return send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "stays", inputSchema: { type: "object" } }] } })
  send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no " + m.method } })
})
`

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe("one-shot commands and servers that outlive their stdin", () => {
  it.scopedLive("cli/tools/exits once the listing is printed; the server is stopped after it by the reaper", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const pidFile = sb.path("server.pid")
      const script = yield* sb.write("stubborn.js", stubborn(pidFile))
      const config = yield* sb.writeJson("mcpx.json", { mcpServers: { s: { command: process.execPath, args: [script] } } })
      const r = yield* sb.run(["tools", "--config", config, "--local"])
      assert.strictEqual(r.code, 0, r.stderr)
      assert.include(r.stdout, "s__stays")
      const pid = Number(readFileSync(pidFile, "utf8"))
      yield* Effect.addFinalizer(() => Effect.sync(() => alive(pid) && process.kill(pid, "SIGKILL")))
      // The server ignores EOF and SIGTERM, so a command that waited for it would have had to
      // SIGKILL it before exiting: it is still there, left to the reaper.
      assert.isTrue(alive(pid), "the command waited for the server to be gone")
      yield* Effect.suspend(() => (alive(pid) ? Effect.fail("alive") : Effect.void)).pipe(
        Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("20 seconds")))
      )
      assert.isFalse(alive(pid))
    }), { timeout: 60_000 })

  it.scopedLive("cli/stop/the daemon exits once it has stopped serving; its stubborn server is left to the reaper", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const pidFile = sb.path("server.pid")
      const script = yield* sb.write("stubborn.js", stubborn(pidFile))
      const config = yield* sb.writeJson("mcpx.json", { mcpServers: { s: { command: process.execPath, args: [script] } } })
      const daemon = yield* Effect.orDie(DaemonProcess.start(sb, { config }))
      const env = { MCPX_STATE_DIR: daemon.stateDir }
      const listed = yield* sb.run(["tools"], { env })
      assert.include(listed.stdout, "s__stays", listed.stderr)
      const pid = Number(readFileSync(pidFile, "utf8"))
      yield* Effect.addFinalizer(() => Effect.sync(() => alive(pid) && process.kill(pid, "SIGKILL")))
      const stopped = yield* sb.run(["stop"], { env })
      assert.strictEqual(stopped.code, 0, stopped.stderr)
      assert.strictEqual(yield* daemon.exited, 0)
      assert.isTrue(alive(pid), "the daemon waited for the server to be gone")
      yield* Effect.suspend(() => (alive(pid) ? Effect.fail("alive") : Effect.void)).pipe(
        Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("20 seconds")))
      )
    }), { timeout: 60_000 })
})
