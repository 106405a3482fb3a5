import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import { Pool } from "@mcpx-fx/upstream/pool/Pool"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Gateway } from "../src/Gateway.js"
import * as ToolSchemas from "../src/ToolSchemas.js"
import type * as Meta from "@mcpx-fx/protocol/Meta"
import { era, layer as gatewayFor } from "@mcpx-fx/testing/gateway/TestGateway"

/** A modern host's validated `_meta`, as a tools/call brings it. */
const asker: Meta.RequestMeta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} }

const logFile = join(tmpdir(), `mcpx-schemas-${process.pid}-${Date.now()}.log`)

/** How many tools/list requests the logged fixture received so far. */
const toolsLists = Effect.flatMap(FileSystem.FileSystem, (fs) =>
  fs.readFileString(logFile).pipe(
    Effect.orElseSucceed(() => ""),
    Effect.map((text) => text.split("\n").filter((l) => l.endsWith(" tools/list")).length)
  )).pipe(Effect.provide(NodeContext.layer))

// A stdio server that never says a word: its start hangs until pool.startTimeout.
const hung = { command: process.execPath, args: ["-e", "setInterval(() => {}, 1 << 30)"] }

describe("ToolSchemas", () => {
  it.scopedLive("gateway/schemas/only the called server is listed, once, and a missing name is remembered until its tools change", () =>
    Effect.gen(function*() {
      const gateway = yield* Gateway
      const lookup = yield* ToolSchemas.make(gateway)
      const echo = yield* lookup("beta__echo", asker, undefined)
      assert.deepInclude(echo?.inputSchema as object, { type: "object" })
      yield* lookup("beta__echo", asker, undefined)
      yield* lookup("beta__hello", asker, undefined)
      assert.strictEqual(yield* toolsLists, 1)
      // A name beta does not have: beta is listed once more, then the miss is remembered.
      assert.isUndefined(yield* lookup("beta__nothing", asker, undefined))
      assert.isUndefined(yield* lookup("beta__nothing", asker, undefined))
      assert.strictEqual(yield* toolsLists, 2)
      // A name of a server that does not exist lists nothing at all.
      assert.isUndefined(yield* lookup("nowhere__echo", asker, undefined))
      assert.strictEqual(yield* toolsLists, 2)
      // The upstream says its tools changed: the next lookup lists again.
      const changes = yield* gateway.changes
      yield* gateway.callTool({}, "beta__notify_changes", {})
      assert.strictEqual((yield* Queue.take(changes))._tag, "ToolsListChanged")
      const relisted = lookup("beta__echo", asker, undefined).pipe(Effect.zipRight(toolsLists), Effect.repeat({ until: (n) => n >= 3 }))
      assert.strictEqual(yield* relisted, 3)
    }).pipe(Effect.provide(gatewayFor({ beta: era("legacy-32601", { args: [...era("legacy-32601").args, "--log", logFile] }) }))))

  it.scopedLive("gateway/schemas/a tool the live listing has is read in place; one hidden by the filter never is", () =>
    Effect.gen(function*() {
      const gateway = yield* Gateway
      // Nothing is listed yet: it takes a lookup to say.
      assert.isUndefined(gateway.peekTool("beta__echo"))
      const lookup = yield* ToolSchemas.make(gateway)
      assert.deepInclude((yield* lookup("beta__echo", asker, undefined))?.inputSchema as object, { type: "object" })
      assert.strictEqual(gateway.peekTool("beta__echo")?.name, "echo")
      assert.strictEqual(gateway.peekTool("beta__echo")?.asked, "beta__echo")
      assert.deepInclude(gateway.peekTool("beta__echo")?.inputSchema as object, { type: "object" })
      assert.isUndefined(gateway.peekTool("beta__hello"))
      assert.isUndefined(yield* lookup("beta__hello", asker, undefined))
      assert.isUndefined(gateway.peekTool("nowhere__echo"))
    }).pipe(Effect.provide(gatewayFor({ beta: era("legacy-32601", { excludeTools: ["hello"] }) }))))

  it.scopedLive("gateway/isolation/a modern call's schema lookup answers for a healthy server while another is still starting", () =>
    Effect.gen(function*() {
      const gateway = yield* Gateway
      const pool = yield* Pool
      const lookup = yield* ToolSchemas.make(gateway)
      // Something starts the hung server and waits on it.
      const waiting = yield* Effect.fork(lookup("hung__anything", asker, undefined))
      const hungState = Effect.map(pool.snapshot, (all) => all.find((p) => p.server === "hung")?.instances[0]?.state)
      yield* hungState.pipe(Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (s) => s === "starting" }))
      // The healthy server's schema and its call are answered while hung is still starting.
      const schema = yield* lookup("healthy__echo", asker, undefined)
      assert.deepInclude(schema?.inputSchema as object, { type: "object" })
      const result = yield* gateway.callTool({}, "healthy__echo", { message: "still here" })
      assert.include(JSON.stringify(result.content), "still here")
      assert.strictEqual(yield* hungState, "starting")
      assert.isNull(waiting.unsafePoll())
      yield* Fiber.interrupt(waiting)
    }).pipe(Effect.provide(gatewayFor({ healthy: era("dual"), hung }))))
})
