/**
 * Two callers' calls in flight at once on one stdio process: what the process says about one call
 * reaches that call's caller only. Progress goes by token, and callers pick their tokens without
 * knowing of each other, so the session sends each call upstream under a token of its own and
 * gives the progress back under the caller's. A log message goes to a call when the process tied
 * it to one (by that token in its `_meta`); untied, to the calls in flight only when they are all
 * one caller's, else to the daemon's log.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import { makeSession } from "../../src/session/Session.js"
import { StdioDefinition } from "../../src/ServerDefinition.js"
import { openStdio } from "../../src/transport/StdioTransport.js"
import { legacyEstablished } from "../util/TestConnection.js"

const legacy = legacyEstablished

// Holds calls until two have come, then says for each: progress under its token, a log message
// tied to it by that token, one log message tied to nobody; then answers both.
const server = new StdioDefinition({
  transport: "stdio",
  name: "shared",
  command: process.execPath,
  args: [
    "-e",
    `const calls = []
     const out = (x) => process.stdout.write(JSON.stringify(x) + '\\n')
     require('readline').createInterface({ input: process.stdin }).on('line', (l) => {
       const m = JSON.parse(l)
       if (m.method !== 'tools/call') return
       calls.push(m)
       if (calls.length < 2) return
       out({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'warning', data: 'untied: starting two' } })
       for (const c of calls) {
         const progressToken = c.params._meta.progressToken
         out({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress: 1, message: 'for ' + c.params.arguments.who } })
         out({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'log for ' + c.params.arguments.who, _meta: { progressToken } } })
       }
       for (const c of calls) out({ jsonrpc: '2.0', id: c.id, result: { content: [] } })
     })`
  ]
})

/** Both calls, then what each caller heard and what the daemon logged. */
const run = (logged: Array<string>, untiedLogged: Deferred.Deferred<void>) =>
  Effect.gen(function*() {
    const conn = yield* openStdio(server)
    const session = yield* makeSession("shared", conn, legacy, { clientInfo: { name: "t", version: "0" }, clientCapabilities: {} })
    const heard: Record<string, Array<JsonRpc.Notification>> = { A: [], B: [] }
    const call = (who: "A" | "B") =>
      session.request(
        "tools/call",
        { name: "x", arguments: { who }, _meta: { progressToken: "same" } },
        { callerId: who, onNotification: (n) => Effect.sync(() => void heard[who]!.push(n)) }
      )
    yield* Effect.all([call("A"), call("B")], { concurrency: 2 })
    for (const who of ["A", "B"] as const) {
      const other = who === "A" ? "B" : "A"
      const said = heard[who]!.map((n) => ({ method: n.method, params: n.params }))
      assert.deepStrictEqual(said, [
        { method: "notifications/progress", params: { progressToken: "same", progress: 1, message: `for ${who}` } },
        { method: "notifications/message", params: { level: "info", data: `log for ${who}`, _meta: { progressToken: "same" } } }
      ], `${who} heard ${JSON.stringify(said)}`)
      assert.notInclude(JSON.stringify(said), `for ${other}`)
    }
    // The message tied to nobody went to the daemon's log.
    yield* Deferred.await(untiedLogged)
    assert.isTrue(logged.some((l) => l.includes("shared: untied: starting two")), logged.join("\n"))
  })

describe("Session: two callers on one stdio process", () => {
  it.scopedLive("session/callers: the same progressToken from two callers: each gets its own progress and tied logs; an untied log reaches neither", () =>
    Effect.gen(function*() {
      const logged: Array<string> = []
      const untiedLogged = yield* Deferred.make<void>()
      const logger = Logger.make(({ message }) => {
        const text = Array.isArray(message) ? message.join(" ") : String(message)
        logged.push(text)
        if (text.includes("untied")) Deferred.unsafeDone(untiedLogged, Effect.void)
      })
      yield* run(logged, untiedLogged).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("session/callers: an untied log message goes to the calls in flight when they are all one caller's", () =>
    Effect.gen(function*() {
      const conn = yield* openStdio(server)
      const session = yield* makeSession("shared", conn, legacy, { clientInfo: { name: "t", version: "0" }, clientCapabilities: {} })
      const heard: Array<Array<string>> = [[], []]
      const call = (n: 0 | 1) =>
        session.request(
          "tools/call",
          { name: "x", arguments: { who: `A${n}` }, _meta: { progressToken: n } },
          { callerId: "A", onNotification: (m) => Effect.sync(() => void heard[n]!.push(String(m.params?.data ?? m.params?.message))) }
        )
      yield* Effect.all([call(0), call(1)], { concurrency: 2 })
      assert.deepStrictEqual(heard, [["untied: starting two", "for A0", "log for A0"], ["untied: starting two", "for A1", "log for A1"]])
    }).pipe(Effect.provide(NodeContext.layer)))
})
