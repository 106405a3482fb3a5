/**
 * A reload's effect on the running servers: the diff of two configurations, the Gateway swapping
 * its server table (unchanged servers keep their instances, a removed one finishes its call first),
 * and settings taking a reloaded file's values.
 */
import { assert, describe, it } from "@effect/vitest"
import { Pool } from "@mcpx-fx/upstream/pool/Pool"
import { StdioDefinition } from "@mcpx-fx/upstream/ServerDefinition"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import { Config, type ConfiguredServer, type LoadedConfig } from "@mcpx-fx/config/Config"
import { Gateway } from "../src/Gateway.js"
import * as ServerTable from "../src/ServerTable.js"
import * as Settings from "@mcpx-fx/config/Settings"
import { era, layer as gatewayFor } from "@mcpx-fx/testing/gateway/TestGateway"

const server = (name: string, command: string, extra: Partial<ConfiguredServer> = {}): ConfiguredServer => ({
  name,
  namespace: name,
  definition: new StdioDefinition({ transport: "stdio", name, command, args: [], env: {} }),
  pool: {},
  file: "/f.json",
  ...extra
})

describe("ServerTable.diff", () => {
  it("sorts servers into added, removed, restarted, refiltered and unchanged", () => {
    const before = [server("keep", "a"), server("gone", "b"), server("redefined", "c"), server("filtered", "d"), server("pooled", "e")]
    const after = [
      server("keep", "a", { file: "/elsewhere.json" }),
      server("redefined", "c2"),
      server("filtered", "d", { excludeTools: ["x"] }),
      server("pooled", "e", { pool: { max: 3 } }),
      server("new", "f")
    ]
    assert.deepStrictEqual(ServerTable.diff(before, after), {
      added: ["new"],
      removed: ["gone"],
      restarted: ["redefined", "pooled"],
      refiltered: ["filtered"],
      unchanged: ["keep"]
    })
    assert.isFalse(ServerTable.changesAnything(ServerTable.diff(before, before)))
  })
})

describe("Settings.replaceFiles", () => {
  it.effect("hot values of a reloaded file apply, a changed cold one waits for a restart, env still wins", () =>
    Effect.gen(function*() {
      const settings = yield* Settings.make({
        files: [{ file: "/f", values: { "pool.callTimeout": "1m", "pool.max": 1 } }],
        env: { MCPX_POOL_IDLE_TIMEOUT: "2m" }
      })
      const replaced = yield* settings.replaceFiles([
        { file: "/f", values: { "pool.callTimeout": "5s", "pool.max": 4, "pool.idleTimeout": "9m" } }
      ])
      assert.deepStrictEqual(replaced, { applied: ["pool.callTimeout"], restartRequired: ["pool.max"] })
      assert.strictEqual((yield* settings.get("pool.callTimeout")).toString(), "Duration(5s)")
      assert.strictEqual(yield* settings.get("pool.max"), 1)
      assert.strictEqual((yield* settings.resolve("pool.idleTimeout")).source, "env:MCPX_POOL_IDLE_TIMEOUT")
    }))
})

describe("Gateway.reconfigure", () => {
  it.scopedLive("gateway/reload/unchanged servers keep their instance, a removed one finishes its call and then stops", () =>
    Effect.gen(function*() {
      const gateway = yield* Gateway
      const pool = yield* Pool
      const config = yield* Config
      const changes = yield* gateway.changes
      const events = yield* pool.subscribe
      yield* gateway.callTool({}, "alpha__hello", {})
      const alphaId = Effect.map(pool.snapshot, (all) => all.find((p) => p.server === "alpha")?.instances[0]?.id)
      const before = yield* alphaId
      // A call on beta is running when beta is removed.
      const slow = yield* Effect.fork(gateway.callTool({}, "beta__slow", { ms: 400 }))
      yield* Queue.take(events).pipe(Effect.repeat({ until: (e) => e.type === "server.start" && e.server === "beta" }))
      const next: LoadedConfig = { ...config, servers: config.servers.filter((s) => s.name !== "beta") }
      const diff = yield* gateway.reconfigure(next)
      assert.deepStrictEqual(diff.removed, ["beta"])
      assert.deepStrictEqual(gateway.servers.map((s) => s.name), ["alpha"])
      const told = Chunk.toReadonlyArray(yield* Queue.takeN(changes, 3))
      assert.deepStrictEqual(told.map((c) => c._tag), ["ToolsListChanged", "PromptsListChanged", "ResourcesListChanged"])
      // The call in flight is answered, and only then is beta stopped.
      const answered = yield* Fiber.join(slow)
      assert.include(JSON.stringify(answered.content), "slept 400ms")
      const stopped = yield* Queue.take(events).pipe(Effect.repeat({ until: (e) => e.type === "server.stop" && e.server === "beta" }))
      assert.strictEqual(stopped.type === "server.stop" ? stopped.reason : undefined, "reconfigured")
      assert.strictEqual(yield* alphaId, before)
      const gone = yield* Effect.flip(gateway.callTool({}, "beta__echo", { message: "x" }))
      assert.strictEqual(gone._tag, "UnknownName")
    }).pipe(Effect.provide(gatewayFor({ alpha: era("dual"), beta: era("legacy-32601") }))))
})
