/**
 * `mcpx-fx servers add|remove` run side by side, end to end through the bundle: each edit holds
 * the file's edit lock for its read-modify-write, so none is lost; a lock left by a process that
 * died is taken over.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { access, readFile } from "node:fs/promises"
import { sandbox } from "./support/Sandbox.js"

const serversIn = (file: string) =>
  Effect.map(
    Effect.promise(() => readFile(file, "utf8")),
    (text) => Object.keys((JSON.parse(text) as { mcpServers: Record<string, unknown> }).mcpServers).sort()
  )

describe("mcpx-fx servers: concurrent edits", () => {
  it.scopedLive("cli/servers/ten adds at once all land, and so do ten removes", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* sb.write(".mcp.json", `{\n  "mcpServers": {\n    "keep": { "command": "keep-server" }\n  }\n}\n`)
      const names = Array.from({ length: 10 }, (_, i) => `s${i}`)
      const added = yield* Effect.forEach(names, (name) => sb.run(["servers", "add", name, `${name}-server`]), { concurrency: "unbounded" })
      for (const r of added) assert.strictEqual(r.code, 0, r.stderr)
      assert.deepStrictEqual(yield* serversIn(file), ["keep", ...names].sort())

      const removed = yield* Effect.forEach(names, (name) => sb.run(["servers", "remove", name]), { concurrency: "unbounded" })
      for (const r of removed) assert.strictEqual(r.code, 0, r.stderr)
      assert.deepStrictEqual(yield* serversIn(file), ["keep"])
    }), { timeout: 60_000 })

  it.scopedLive("cli/servers/a lock left by a process that died is taken over; the lock is gone after the edit", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* sb.write(".mcp.json", `{ "mcpServers": {} }\n`)
      // The lock of `.mcp.json`, held by a pid no process has (far above any pid_max).
      const stale = yield* sb.write("..mcp.json.lock", "99999999")
      const r = yield* sb.run(["servers", "add", "one", "one-server"])
      assert.strictEqual(r.code, 0, r.stderr)
      assert.deepStrictEqual(yield* serversIn(file), ["one"])
      const left = yield* Effect.promise(() => access(stale).then(() => true, () => false))
      assert.isFalse(left)
    }), { timeout: 30_000 })
})
