/**
 * An upstream whose result nests thousands of levels deep (issue 30): nothing mcpx-fx does with it
 * could walk it (JSON.stringify itself overflows the stack), so the response is replaced by an
 * error for its own request, and every caller gets one clear answer: `call` exits 1 naming the
 * bound, and `serve` answers the request with its id, then goes on serving.
 */
import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import { writeFileSync } from "node:fs"
import { sandbox } from "./support/Sandbox.js"
import { start } from "./support/StdioServe.js"

/** A legacy stdio server with one tool, `deep`, whose result nests `levels` deep (argument). */
const deepServer = `
import * as readline from "node:readline"
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n")
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line)
  if (m.id === undefined) return
  if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "deep", version: "1" } } })
  if (m.method === "tools/list") return send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "deep", inputSchema: { type: "object" } }] } })
  if (m.method === "tools/call") {
    const n = m.params.arguments.levels
    return process.stdout.write('{"jsonrpc":"2.0","id":' + JSON.stringify(m.id) + ',"result":{"content":[{"type":"text","text":"deep"}],"structuredContent":{"a":' + "[".repeat(n) + "]".repeat(n) + '}}}\\n')
  }
  send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no such method" } })
})
`

describe("results nested too deep", () => {
  it.scopedLive("cli/call/a result nested 5,000 deep is an error naming the bound, exit 1", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const script = yield* sb.write("deep.mjs", deepServer)
      const config = yield* sb.writeJson("mcpx.json", { mcpServers: { deep: { command: process.execPath, args: [script] } } })
      const r = yield* sb.run(["call", "deep.deep", JSON.stringify({ levels: 5000 }), "--config", config, "--local"])
      assert.strictEqual(r.code, 1, r.stderr)
      assert.include(r.stderr, `deeper than ${JsonRpc.MaxUpstreamDepth} levels`)
      assert.notInclude(r.stderr, "RangeError")
      const fine = yield* sb.run(["call", "deep.deep", JSON.stringify({ levels: 10 }), "--config", config, "--local"])
      assert.strictEqual(fine.code, 0, fine.stderr)
    }), { timeout: 30_000 })

  it.scoped("serve/a result nested 5,000 deep is answered with the request's id, and serve goes on", () =>
    Effect.gen(function*() {
      const serve = yield* start((sb) => {
        const script = sb.path("deep.mjs")
        writeFileSync(script, deepServer)
        return { servers: { deep: { command: process.execPath, args: [script] } } }
      })
      yield* serve.request(0, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } })
      yield* serve.send({ method: "notifications/initialized" })
      const deep = yield* serve.request(1, "tools/call", { name: "deep__deep", arguments: { levels: 5000 } })
      assert.strictEqual(deep.id, 1)
      assert.include(JSON.stringify(deep), `deeper than ${JsonRpc.MaxUpstreamDepth} levels`)
      const fine = yield* serve.request(2, "tools/call", { name: "deep__deep", arguments: { levels: 10 } })
      assert.strictEqual(fine.id, 2)
      assert.isTrue("result" in fine, JSON.stringify(fine).slice(0, 200))
    }), { timeout: 30_000 })
})
