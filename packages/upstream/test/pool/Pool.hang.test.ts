/**
 * A stdio server that stops answering under its calls (SIGSTOP, a deadlock) is found out and
 * replaced: a call on it that ends after `hangCheck` of silence sends a ping, and no answer within
 * `pingTimeout` ends the instance as a crash, so the next call starts a fresh one. A server that
 * is only slow answers the ping and keeps its process.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import { Pool } from "../../src/pool/Pool.js"
import { type PoolServer, ScopeKey } from "../../src/pool/PoolModel.js"
import type { PoolEvent } from "../../src/pool/PoolEvents.js"
import { StdioDefinition } from "../../src/ServerDefinition.js"
import type { Session } from "../../src/session/SessionModel.js"
import { stdioPool } from "../util/StdioPool.js"

// A legacy server: `pid` says its process id, `slow` answers after two seconds; pings are answered.
const source = `
const rl = require("node:readline").createInterface({ input: process.stdin })
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n")
const text = (t) => ({ content: [{ type: "text", text: t }] })
rl.on("line", (line) => {
  const m = JSON.parse(line)
  if (m.id === undefined) return
  if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "hang", version: "1" } } })
  if (m.method === "ping") return send({ jsonrpc: "2.0", id: m.id, result: {} })
  if (m.method === "tools/call" && m.params.name === "pid") return send({ jsonrpc: "2.0", id: m.id, result: text(String(process.pid)) })
  if (m.method === "tools/call" && m.params.name === "slow") return setTimeout(() => send({ jsonrpc: "2.0", id: m.id, result: text("slept") }), 2000)
  send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no " + m.method } })
})
`

const server = (name: string): PoolServer => ({
  definition: new StdioDefinition({ transport: "stdio", name, command: process.execPath, args: ["-e", source] }),
  probe: {
    preference: "force-initialize",
    probeTimeout: "20 seconds",
    session: { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} }
  },
  settings: { hangCheck: "200 millis", pingTimeout: "1 second" }
})

const callTool = (s: Session, name: string) =>
  Effect.map(s.request("tools/call", { name, arguments: {} }), (r) => String((r.content as Array<{ text: string }>)[0]!.text))

const pidOf = (pool: Pool["Type"], def: PoolServer) => pool.withSession(def, { key: ScopeKey.global }, (s) => callTool(s, "pid"))

const nextCrash = (events: Queue.Dequeue<PoolEvent>) =>
  Effect.gen(function*() {
    while (true) {
      const e = yield* Queue.take(events)
      if (e.type === "server.crash") return e
    }
  })

describe("Pool: hung stdio servers", () => {
  it.scopedLive("pool/hang/a stopped server is pinged after a call on it gives up, and replaced", () =>
    Effect.gen(function*() {
      const pool = yield* Pool
      const events = yield* pool.subscribe
      const def = server("hung")
      const pid = Number(yield* pidOf(pool, def))
      process.kill(pid, "SIGSTOP")
      // The caller gives up on a call the stopped server will never answer.
      const gaveUp = yield* Effect.either(Effect.timeout(pidOf(pool, def), "600 millis"))
      assert.isTrue(gaveUp._tag === "Left")
      const crash = yield* nextCrash(events)
      assert.include(crash.reason, "did not answer a ping")
      const fresh = Number(yield* pidOf(pool, def))
      assert.notStrictEqual(fresh, pid)
    }).pipe(Effect.provide(stdioPool)), { timeout: 30_000 })

  it.scopedLive("pool/hang/a slow server answers the ping and keeps its process", () =>
    Effect.gen(function*() {
      const pool = yield* Pool
      const events = yield* pool.subscribe
      const def = server("slow")
      const pid = Number(yield* pidOf(pool, def))
      const gaveUp = yield* Effect.either(Effect.timeout(pool.withSession(def, { key: ScopeKey.global }, (s) => callTool(s, "slow")), "600 millis"))
      assert.isTrue(gaveUp._tag === "Left")
      // The ping sent as the call ended is answered. A slow call that outlasts the ping's second
      // would be cut by the crash had it gone unanswered; it completes, on the same process.
      assert.strictEqual(yield* pool.withSession(def, { key: ScopeKey.global }, (s) => callTool(s, "slow")), "slept")
      assert.strictEqual(Number(yield* pidOf(pool, def)), pid)
      const seen = [...(yield* Queue.takeAll(events))]
      assert.isFalse(seen.some((e) => e.type === "server.crash"), JSON.stringify(seen))
    }).pipe(Effect.provide(stdioPool)), { timeout: 30_000 })
})
