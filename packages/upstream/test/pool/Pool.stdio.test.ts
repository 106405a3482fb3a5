import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import { Pool } from "../../src/pool/Pool.js"
import { type Caller, type PoolServer, ScopeKey } from "../../src/pool/PoolModel.js"
import { PoolError, type PoolEvent } from "../../src/pool/PoolEvents.js"
import type { Preference } from "../../src/era/Preference.js"
import { StdioDefinition } from "../../src/ServerDefinition.js"
import type { Session } from "../../src/session/SessionModel.js"
import { stdioPool } from "../util/StdioPool.js"

const layer = stdioPool

const poolServer = (definition: StdioDefinition, preference: Preference): PoolServer => ({
  definition,
  // Generous: a loaded CI machine can take seconds to start node.
  probe: {
    preference,
    probeTimeout: "20 seconds",
    session: { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} }
  }
})

const eraServer = (mode: string, preference: Preference) => {
  const { command, args } = Fixtures.stdioCommand("era-server", ["--mode", mode])
  return poolServer(new StdioDefinition({ transport: "stdio", name: `era-${mode}`, command, args }), preference)
}

const modern: Caller = { key: ScopeKey.global }
const legacy: Caller = { key: ScopeKey.global, revision: "2025-11-25" }

/** The text of the era-server's `hello` tool, which names the era and version that served it. */
const hello = (s: Session) => Effect.map(s.request("tools/call", { name: "hello", arguments: {} }), (result) => JSON.stringify(result.content))

const next = <T extends PoolEvent["type"]>(events: Queue.Dequeue<PoolEvent>, type: T) =>
  Effect.gen(function*() {
    while (true) {
      const e = yield* Queue.take(events)
      if (e.type === type) return e as Extract<PoolEvent, { type: T }>
    }
  })

// A legacy stdio server that dies on its first tool call, saying why on stderr.
const dying = poolServer(
  new StdioDefinition({
    transport: "stdio",
    name: "dying",
    command: process.execPath,
    args: [
      "-e",
      `
      const rl = require("node:readline").createInterface({ input: process.stdin })
      const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n")
      rl.on("line", (line) => {
        const m = JSON.parse(line)
        if (m.method === "initialize") {
          send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "dying", version: "1" } } })
        } else if (m.method === "tools/call") {
          process.stderr.write("fatal: the flux capacitor melted\\n")
          process.exit(3)
        } else if (m.id !== undefined) {
          send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no " + m.method } })
        }
      })
      `
    ]
  }),
  "prefer-discover"
)

describe("Pool over real stdio servers", () => {
  it.scopedLive("pool/follow/dual over stdio: a modern session and a forced legacy session, each serving its own era", () =>
    Effect.gen(function*() {
      const pool = yield* Pool
      const events = yield* pool.subscribe
      const server = eraServer("dual", "follow")
      const fromModern = yield* pool.withSession(server, modern, hello)
      const fromLegacy = yield* pool.withSession(server, legacy, hello)
      assert.include(fromModern, "hello from dual over modern 2026-07-28")
      assert.include(fromLegacy, "hello from dual over legacy")

      const [status] = yield* pool.snapshot
      assert.deepStrictEqual(status?.instances.map((i) => [i.lane, i.era, i.eraSource]), [
        ["modern", "modern", "probe"],
        ["legacy", "legacy", "forced"]
      ])
      const started = [yield* next(events, "server.start"), yield* next(events, "server.start")]
      assert.deepStrictEqual(started.map((e) => [e.lane, e.era]).sort(), [["legacy", "legacy"], ["modern", "modern"]])

      assert.strictEqual(yield* pool.stop(server.definition.name), 2)
      const stopped = [yield* next(events, "server.stop"), yield* next(events, "server.stop")]
      assert.deepStrictEqual(stopped.map((e) => e.reason), ["stop", "stop"])
    }).pipe(Effect.provide(layer)))

  it.scopedLive("pool/follow/modern-only over stdio: the refused legacy-only start is remembered; legacy callers get the modern session", () =>
    Effect.gen(function*() {
      const pool = yield* Pool
      const server = eraServer("modern-only", "follow")
      assert.include(yield* pool.withSession(server, legacy, hello), "over modern 2026-07-28")
      const [status] = yield* pool.snapshot
      assert.isDefined(status?.legacyRefused)
      assert.deepStrictEqual(status?.instances.map((i) => i.lane), ["modern"])
      assert.include(yield* pool.withSession(server, legacy, hello), "over modern 2026-07-28")
    }).pipe(Effect.provide(layer)))

  it.scopedLive("pool/crash over stdio: the call fails naming the server and its stderr, and the next call starts a new process", () =>
    Effect.gen(function*() {
      const pool = yield* Pool
      const events = yield* pool.subscribe
      const e = yield* Effect.flip(pool.withSession(dying, modern, hello))
      assert.instanceOf(e, PoolError)
      assert.strictEqual(e.reason, "crashed")
      assert.include(e.message, "dying")
      assert.include(e.message, "exit code 3")
      assert.include(e.message, "fatal: the flux capacitor melted")
      const crash = yield* next(events, "server.crash")
      assert.include(crash.stderrTail, "flux capacitor")

      // The next call gets a fresh process (which dies the same way).
      const again = yield* Effect.flip(pool.withSession(dying, modern, hello))
      assert.instanceOf(again, PoolError)
      assert.include(again.message, "flux capacitor")
      const second = yield* next(events, "server.crash")
      assert.notStrictEqual(second.instance, crash.instance)
    }).pipe(Effect.provide(layer)))
})
