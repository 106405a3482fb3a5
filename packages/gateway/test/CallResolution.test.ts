/**
 * A modern `tools/call` through the whole in-process HTTP path (HttpHost → Server →
 * GatewayBackend → Gateway → Pool → the era fixture), its `Mcp-Param-*` headers checked against
 * the schema ToolSchemas resolves: a request the Server refuses for its `_meta` starts nothing, and
 * the lookup that does start a server starts it for the call's own caller, not for nobody. The
 * resolution that lookup makes is the call's: the name is resolved once per call.
 */
import * as HttpApp from "@effect/platform/HttpApp"
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as TasksExtension from "@mcpx-fx/protocol/TasksExtension"
import { HttpHost } from "@mcpx-fx/server/HttpHost"
import * as Server from "@mcpx-fx/server/Server"
import { RequestState } from "@mcpx-fx/server/RequestState"
import { Pool } from "@mcpx-fx/upstream/pool/Pool"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { readFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Config } from "@mcpx-fx/config/Config"
import { Gateway } from "../src/Gateway.js"
import * as GatewayBackend from "../src/GatewayBackend.js"
import * as ToolSchemas from "../src/ToolSchemas.js"
import { countingCatalog, era, layer as gatewayFor } from "@mcpx-fx/testing/gateway/TestGateway"
import * as TestTasks from "@mcpx-fx/testing/server/TestTasks"

const Url = "http://127.0.0.1:7717/mcp"

const logFile = join(tmpdir(), `mcpx-resolution-${process.pid}-${Date.now()}.log`)

/** The logged fixture's lines for `method` so far (each start of it says `initialize` once). */
const logged = (method: string) =>
  Effect.promise(() => readFile(logFile, "utf8").catch(() => "")).pipe(
    Effect.map((text) => text.split("\n").filter((l) => l.endsWith(` ${method}`)).length)
  )

/** `/mcp` over the gateway, its header check on the gateway's schema lookup; `post` sends one modern tools/call. */
const host = Effect.gen(function*() {
  const gateway = yield* Gateway
  const inputSchemaOf = yield* ToolSchemas.make(gateway)
  const backend = GatewayBackend.layer.pipe(Layer.provide(Layer.succeed(Gateway, gateway)))
  const layer = HttpHost.layer({ inputSchemaOf }).pipe(
    Layer.provide(Server.Server.layer),
    Layer.provide(backend),
    Layer.provide(TestTasks.layer),
    Layer.provide(RequestState.layer)
  )
  const built = yield* Layer.build(layer)
  const handler = HttpApp.toWebHandlerRuntime(yield* Effect.runtime<never>())(Context.get(built, HttpHost).app)
  return (meta: JsonObject, args: JsonObject = { message: "hi" }) =>
    Effect.promise(async () => {
      const response = await handler(
        new Request(Url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "alpha__echo"
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "alpha__echo", arguments: args, _meta: meta } })
        })
      )
      return { status: response.status, body: (await response.json()) as JsonObject }
    })
})

const modernMeta = (extra: JsonObject = {}): JsonObject => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "resolution-test", version: "1.0.0" },
  ...extra
})

const hideEcho = { allows: (name: string) => name !== "echo", all: false, unmatched: () => [] }

const instancesOf = (server: string) =>
  Effect.map(Pool.pipe(Effect.flatMap((pool) => pool.snapshot)), (all) => all.find((p) => p.server === server)?.instances ?? [])

describe("CallResolution", () => {
  it.scopedLive("2026-07-28/http/a tools/call refused for its _meta starts no upstream, not even for its schema", () =>
    Effect.gen(function*() {
      const post = yield* host
      const { ["io.modelcontextprotocol/clientCapabilities"]: _dropped, ...withoutCapabilities } = modernMeta()
      for (const meta of [withoutCapabilities, modernMeta({ "io.modelcontextprotocol/logLevel": "loud" })]) {
        const refused = yield* post(meta)
        assert.strictEqual(refused.status, 400, JSON.stringify(refused.body))
        assert.strictEqual((refused.body.error as JsonObject).code, -32602)
        assert.deepStrictEqual(yield* instancesOf("alpha"), [])
      }
      // The same call with its _meta whole starts alpha and is answered.
      const good = yield* post(modernMeta())
      assert.strictEqual(good.status, 200, JSON.stringify(good.body))
      assert.include(JSON.stringify(good.body), "hi")
    }).pipe(Effect.provide(gatewayFor({ alpha: era("legacy-32601") }))))

  it.scopedLive("2026-07-28/http/the schema lookup starts a session-scoped server for the call's session, the one the call then uses", () =>
    Effect.gen(function*() {
      const post = yield* host
      const good = yield* post(modernMeta({ "dev.mcpx/session": "s1" }))
      assert.strictEqual(good.status, 200, JSON.stringify(good.body))
      const instances = yield* instancesOf("alpha")
      assert.deepStrictEqual(instances.map((i) => i.key), ["session:s1"])
      // Started once, listed once: no instance of its own for the lookup, under nobody's key.
      assert.strictEqual(yield* logged("initialize"), 1)
      assert.strictEqual(yield* logged("tools/list"), 1)
    }).pipe(Effect.provide(gatewayFor({ alpha: era("legacy-32601", { args: [...era("legacy-32601").args, "--log", logFile], pool: { scope: "session" } }) }))))

  it.scopedLive("2026-07-28/http/a tools/call's name is resolved once: the header check's resolution is the call's", () => {
    const count = { resolutions: 0 }
    return Effect.gen(function*() {
      const post = yield* host
      // The first call lists alpha (started for it), the next ones find echo in place: one
      // resolution each, whichever way it was made.
      for (const message of ["one", "two", "three"]) {
        const before = count.resolutions
        const answered = yield* post(modernMeta(), { message })
        assert.strictEqual(answered.status, 200, JSON.stringify(answered.body))
        assert.include(JSON.stringify(answered.body), message)
        assert.strictEqual(count.resolutions - before, 1, `resolutions of the call "${message}"`)
      }
      // A host that declared tasks is asked whether the tool is one: the same resolution answers.
      const before = count.resolutions
      const tasked = yield* post(modernMeta({ "io.modelcontextprotocol/clientCapabilities": TasksExtension.requiredCapabilities }))
      assert.strictEqual(tasked.status, 200, JSON.stringify(tasked.body))
      assert.include(JSON.stringify(tasked.body), "hi")
      assert.strictEqual(count.resolutions - before, 1)
    }).pipe(Effect.provide(gatewayFor({ alpha: era("legacy-32601") }, { catalog: countingCatalog(count) })))
  })

  it.scopedLive("gateway/reload/a resolution made before a reload is made again: a tool the reload hides is refused", () =>
    Effect.gen(function*() {
      const gateway = yield* Gateway
      const config = yield* Config
      yield* gateway.callTool({}, "alpha__echo", { message: "listed" })
      const before = gateway.peekTool("alpha__echo")
      if (before === undefined) return assert.fail("echo is in alpha's live listing")
      // Without a reload it is the call's, as made.
      assert.include(JSON.stringify(yield* gateway.callTool({}, before, { message: "carried" })), "carried")
      yield* gateway.reconfigure({ ...config, servers: config.servers.map((s) => ({ ...s, excludeTools: ["echo"], filter: hideEcho })) })
      const refused = yield* Effect.flip(gateway.callTool({}, before, { message: "stale" }))
      assert.strictEqual(refused._tag, "UnknownName")
      assert.isUndefined(gateway.peekTool("alpha__echo"))
    }).pipe(Effect.provide(gatewayFor({ alpha: era("legacy-32601") }))))
})
