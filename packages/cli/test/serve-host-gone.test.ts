/**
 * A host that goes away while `serve` writes to it (it closed its end of stdout) ends serve as
 * end of input does: quietly, exit 0, no EPIPE stack trace, its upstreams stopped.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { once } from "node:events"
import { createInterface } from "node:readline"
import * as DaemonProcess from "./support/DaemonProcess.js"
import { bundle, sandbox } from "./support/Sandbox.js"
import { era } from "./support/StdioServe.js"

describe("mcpx-fx serve: the host goes away", () => {
  for (const relay of [false, true]) {
    it.scopedLive(`serve${relay ? " --relay" : ""}/a host that closes its end of stdout ends serve quietly`, () =>
      Effect.gen(function*() {
        const sb = yield* sandbox
        const config = yield* sb.writeJson("mcpx.json", { mcpServers: { alpha: era("dual") } })
        const stateDir = relay ? (yield* Effect.orDie(DaemonProcess.start(sb, { config }))).stateDir : sb.path("state")
        const child = spawn(process.execPath, [bundle, "serve", ...(relay ? ["--relay"] : ["--config", config])], {
          cwd: sb.root,
          env: { PATH: process.env.PATH ?? "", HOME: sb.home, MCPX_STATE_DIR: stateDir },
          stdio: ["pipe", "pipe", "pipe"]
        })
        yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))
        let stderr = ""
        child.stderr.on("data", (d: Buffer) => {
          stderr += d.toString("utf8")
        })
        const exited = Effect.promise(() => once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>)
        const send = (m: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...m })}\n`)
        send({ id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } })
        const [first] = yield* Effect.promise(() => once(createInterface({ input: child.stdout }), "line") as Promise<[string]>)
        assert.strictEqual(JSON.parse(first).id, 0)
        // The host stops reading and closes its end; serve still has answers to write.
        child.stdout.destroy()
        send({ method: "notifications/initialized" })
        for (let i = 1; i <= 20; i++) send({ id: i, method: "tools/list" })
        const [code, signal] = yield* exited
        assert.strictEqual(signal, null, stderr)
        assert.strictEqual(code, 0, stderr)
        assert.notInclude(stderr, "EPIPE")
        assert.notInclude(stderr, "Error")
      }), { timeout: 60_000 })
  }
})
