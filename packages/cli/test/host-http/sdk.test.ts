/**
 * The official SDK clients against the daemon's `/mcp` — peers nobody here wrote: the 1.x
 * `StreamableHTTPClientTransport` (legacy, 2025-11-25, with a session) and the 2.x client pinned
 * to 2026-07-28 or probing (`auto`). Each lists and calls tools through the daemon and answers
 * the question an upstream of its own era asks (elicitation on the POST's stream for 1.x,
 * `input_required` retried with `inputResponses` for 2.x). One daemon; each test asks through an
 * upstream of its own.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client"
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import { HttpDaemon } from "../support/HttpDaemon.js"
import { overHttp } from "../support/ModernHost.js"
import { era } from "../support/StdioServe.js"

const config = {
  servers: {
    alpha: era("dual"),
    leg: era("legacy-32601"),
    mod: era("modern-only"),
    modauto: era("modern-only"),
    // The official SDK 1.x server, as in examples/mcpx.json.
    legacy: Fixtures.stdioCommand("sdk-v1-legacy"),
    // Shared (the default pool) by a host that abandons its round and the SDK 1.x client after it.
    shared: Fixtures.stdioCommand("sdk-v1-legacy")
  }
}

const clientInfo = { name: "host-http-sdk-test", version: "1.0.0" }

/** A call's first text block. */
const textOf = (result: unknown): string => {
  const content = (result as { content?: ReadonlyArray<{ type: string; text?: string }> }).content
  assert.isArray(content, JSON.stringify(result))
  assert.strictEqual(content?.[0]?.type, "text", JSON.stringify(result))
  return String(content?.[0]?.text)
}

const legacyClient = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new LegacyClient(clientInfo, { capabilities: { elicitation: {} } })
      client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Ada" } }))
      const transport = new LegacyTransport(new URL(url))
      await client.connect(transport)
      return { client, transport }
    }),
    ({ client }) => Effect.promise(() => client.close())
  )

const modernClient = (url: string, mode: "auto" | { readonly pin: "2026-07-28" }) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new ModernClient(clientInfo, { capabilities: { elicitation: {}, sampling: {} }, versionNegotiation: { mode } })
      // A person filling in whichever fields the form asks for.
      client.setRequestHandler("elicitation/create", (request) => {
        const schema = request.params.mode === "url" ? undefined : request.params.requestedSchema
        const fields = Object.keys(schema?.properties ?? {})
        return { action: "accept", content: Object.fromEntries(fields.map((f) => [f, f === "color" ? "teal" : "Grace"])) }
      })
      client.setRequestHandler("sampling/createMessage", () => ({
        role: "assistant",
        content: { type: "text", text: "Hi there" },
        model: "test-model",
        stopReason: "endTurn"
      }))
      await client.connect(new ModernTransport(new URL(url)))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

describe.concurrent("official SDK clients over /mcp", () => {
  layer(HttpDaemon.layer(config), { timeout: 30_000 })("http sdk clients", (it) => {
    it.effect("2025-11-25/http/the SDK 1.x Streamable HTTP client opens a session, lists and calls a tool through the daemon", () =>
      Effect.scoped(Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const { client, transport } = yield* legacyClient(daemon.info.mcp)
        assert.isString(transport.sessionId)
        assert.strictEqual(client.getServerVersion()?.name, "mcpx-fx")
        const tools = yield* Effect.promise(() => client.listTools())
        assert.include(tools.tools.map((t) => t.name), "alpha__echo")
        const echoed = yield* Effect.promise(() => client.callTool({ name: "alpha__echo", arguments: { message: "from sdk 1.x" } }))
        assert.strictEqual(textOf(echoed), "from sdk 1.x")
      })))

    it.effect("2025-11-25/http/the SDK 1.x client answers a legacy upstream's elicitation through the daemon", () =>
      Effect.scoped(Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const { client } = yield* legacyClient(daemon.info.mcp)
        const asked = yield* Effect.promise(() => client.callTool({ name: "leg__ask_name", arguments: {} }))
        assert.strictEqual(textOf(asked), "hello, Ada")
      })))

    // Issue 24: the abandoned call stays parked upstream for questions.ttl, and the next caller's
    // question on the same process was held as unattributable, its handler never called.
    it.effect("2025-11-25/questions/abandoned-round [http]: after a 2026-07-28 host walks away from its round on a shared stdio server, the SDK 1.x client is still asked", () =>
      Effect.scoped(Effect.gen(function*() {
        const { daemon, http } = yield* HttpDaemon
        const walkedAway = yield* overHttp(http).request("walked-away", "tools/call", { name: "shared__ask_name", arguments: {} }, {
          elicitation: {}
        })
        assert.strictEqual((walkedAway.result as { resultType?: unknown } | undefined)?.resultType, "input_required", JSON.stringify(walkedAway))
        const { client } = yield* legacyClient(daemon.info.mcp)
        const asked = yield* Effect.promise(() => client.callTool({ name: "shared__ask_name", arguments: {} }))
        assert.strictEqual(textOf(asked), "Hello, Ada!")
      })))

    it.effect("2026-07-28/http/the SDK 2.x client pinned to 2026-07-28 calls a tool and answers input_required through the daemon", () =>
      Effect.scoped(Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const client = yield* modernClient(daemon.info.mcp, { pin: "2026-07-28" })
        assert.strictEqual(client.getNegotiatedProtocolVersion(), "2026-07-28")
        const echoed = yield* Effect.promise(() => client.callTool({ name: "alpha__echo", arguments: { message: "from sdk 2.x" } }))
        assert.strictEqual(textOf(echoed), "from sdk 2.x")
        const asked = yield* Effect.promise(() => client.callTool({ name: "mod__ask_name", arguments: {} }))
        assert.strictEqual(textOf(asked), "hello, Grace")
      })))

    // The flow issue 9 reports broken: the client's handler was never called, and the tool said
    // "No name given (cancel)". Also two questions at once and two rounds, all by the SDK's own
    // input_required driver.
    it.effect("2026-07-28/questions/sdk-client [http]: the SDK 2.x client pinned to 2026-07-28 answers a legacy SDK 1.x server's questions through the daemon", () =>
      Effect.scoped(Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const client = yield* modernClient(daemon.info.mcp, { pin: "2026-07-28" })
        assert.strictEqual(textOf(yield* Effect.promise(() => client.callTool({ name: "legacy__ask_name", arguments: {} }))), "Hello, Grace!")
        assert.strictEqual(
          textOf(yield* Effect.promise(() => client.callTool({ name: "legacy__ask_two", arguments: {} }))),
          "name: Grace; the model (test-model) said: Hi there"
        )
        assert.strictEqual(textOf(yield* Effect.promise(() => client.callTool({ name: "legacy__ask_twice", arguments: {} }))), "Grace likes teal")
      })))

    it.effect("2026-07-28/http/the SDK 2.x client probing with auto finds the daemon modern and calls a tool", () =>
      Effect.scoped(Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const client = yield* modernClient(daemon.info.mcp, "auto")
        assert.strictEqual(client.getProtocolEra(), "modern")
        assert.strictEqual(client.getNegotiatedProtocolVersion(), "2026-07-28")
        assert.include(client.getDiscoverResult()?.supportedVersions ?? [], "2026-07-28")
        const hello = yield* Effect.promise(() => client.callTool({ name: "modauto__hello", arguments: {} }))
        assert.strictEqual(textOf(hello), "hello from modern-only over modern 2026-07-28")
      })))
  })
})
