import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Server from "../src/Server.js"
import { errorOf, initialize, Legacy, legacySession, meta, Modern, req, resultOf, withServer } from "./support.js"

const richServer: Server.ServerOptions = {
  ...Server.DefaultOptions,
  serverInfo: { name: "mcpx-fx", version: "0.1.0", title: "mcpx-fx gateway", description: "d", icons: [{ src: "https://x/i.png" }] },
  instructions: "use the tools",
  capabilities: { tools: { listChanged: true }, prompts: {}, resources: {}, completions: {}, extensions: { "x.y/z": {} }, tasks: {} }
}

describe("initialize", () => {
  for (const revision of Legacy) {
    it.effect(`${revision}/lifecycle/initialize-echoes-a-supported-version`, () =>
      withServer((t) =>
        Effect.gen(function*() {
          const r = resultOf(yield* t.handle(initialize(revision)))
          assert.strictEqual(r.protocolVersion, revision)
          assert.deepStrictEqual(r.serverInfo, { name: "mcpx-fx", version: "0.1.0" })
          assert.isUndefined(r.resultType)
          assert.strictEqual(yield* Server.negotiatedRevision(t.connection), revision)
        })
      ))

    it.effect(`${revision}/lifecycle/ping-answered-with-an-empty-result`, () =>
      legacySession(revision, (t) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(resultOf(yield* t.handle(req("ping", undefined, 7))), {})
        })))
  }

  it.effect("2025-11-25/lifecycle/unknown-version-gets-the-newest-legacy-counter-offer", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(initialize("2024-01-01")))
        assert.strictEqual(r.protocolVersion, "2025-11-25")
        assert.strictEqual(yield* Server.negotiatedRevision(t.connection), "2025-11-25")
      })
    ))

  it.effect("2025-11-25/lifecycle/modern-version-in-initialize-gets-the-newest-legacy-counter-offer", () =>
    withServer((t) =>
      Effect.gen(function*() {
        // initialize is a legacy handshake: a modern version named there is still answered with a
        // legacy one, since the client evidently wants the legacy lifecycle.
        const r = resultOf(yield* t.handle(initialize(Modern)))
        assert.strictEqual(r.protocolVersion, "2025-11-25")
      })
    ))

  it.effect("2024-11-05/lifecycle/capabilities-and-serverInfo-projected-onto-the-oldest-revision", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(initialize("2024-11-05")))
        assert.deepStrictEqual(r.capabilities, { prompts: {}, resources: {}, tools: { listChanged: true } })
        assert.deepStrictEqual(r.serverInfo, { name: "mcpx-fx", version: "0.1.0" })
        assert.strictEqual(r.instructions, "use the tools")
      }), { server: richServer }))

  it.effect("2025-03-26/lifecycle/completions-capability-declared-from-2025-03-26", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(initialize("2025-03-26")))
        assert.deepStrictEqual(r.capabilities, { prompts: {}, resources: {}, tools: { listChanged: true }, completions: {} })
      }), { server: richServer }))

  it.effect("2025-06-18/lifecycle/serverInfo-title-from-2025-06-18", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(initialize("2025-06-18")))
        assert.deepStrictEqual(r.serverInfo, { name: "mcpx-fx", version: "0.1.0", title: "mcpx-fx gateway" })
      }), { server: richServer }))

  it.effect("2025-11-25/lifecycle/tasks-capability-and-full-serverInfo-only-in-2025-11-25", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(initialize("2025-11-25")))
        assert.deepStrictEqual(r.capabilities, {
          prompts: {},
          resources: {},
          tools: { listChanged: true },
          completions: {},
          tasks: {}
        })
        assert.deepStrictEqual(r.serverInfo, richServer.serverInfo)
      }), { server: richServer }))

  it.effect("2025-06-18/lifecycle/negotiated-revision-and-client-capabilities-recorded-per-connection", () =>
    legacySession("2025-06-18", (t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(req("tools/list")))
        const caller = t.received[0]?.caller
        assert.strictEqual(caller?.revision, "2025-06-18")
        assert.strictEqual(caller?.era, "legacy")
        assert.deepStrictEqual(caller?.clientCapabilities, { elicitation: {} })
        assert.deepStrictEqual(caller?.clientInfo, { name: "legacy-client", version: "1.0.0" })
      }), { elicitation: {} }))

  it.effect("2025-11-25/lifecycle/second-initialize-is-refused-and-keeps-the-first-negotiation", () =>
    legacySession("2025-03-26", (t) =>
      Effect.gen(function*() {
        const e = errorOf(yield* t.handle(initialize("2025-11-25", {}, 9)))
        assert.strictEqual(e.code, -32600)
        assert.strictEqual(yield* Server.negotiatedRevision(t.connection), "2025-03-26")
      })))

  it.effect("2025-11-25/lifecycle/malformed-initialize-is-32602", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const e = errorOf(yield* t.handle(req("initialize", { protocolVersion: "2025-11-25" })))
        assert.strictEqual(e.code, -32602)
        assert.isUndefined(yield* Server.negotiatedRevision(t.connection))
      })
    ))

  it.effect("2025-11-25/lifecycle/notifications-are-never-answered", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(initialize("2025-11-25")))
        assert.isUndefined(yield* t.handle(JsonRpc.notification("notifications/initialized")))
        assert.isUndefined(yield* t.handle(JsonRpc.notification("notifications/unknown/thing", { a: 1 })))
        assert.isUndefined(yield* t.handle(JsonRpc.notification("notifications/cancelled", { requestId: 1 })))
        assert.isUndefined(yield* t.handle(JsonRpc.success(3, {})))
      })
    ))

  it.effect("2025-11-25/lifecycle/initialized-notification-marks-the-connection", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(initialize("2025-11-25")))
        yield* t.handle(JsonRpc.notification("notifications/initialized"))
        const n = yield* t.connection.negotiated
        assert.isTrue(n._tag === "Some" && n.value.initialized)
      })
    ))
})

describe("before initialize", () => {
  it.effect("2024-11-05/lifecycle/ping-before-initialize-is-answered", () =>
    withServer((t) =>
      Effect.gen(function*() {
        assert.deepStrictEqual(resultOf(yield* t.handle(req("ping"))), {})
      })
    ))

  it.effect("2024-11-05/lifecycle/anything-before-initialize-is-shaped-for-the-oldest-revision", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const list = resultOf(yield* t.handle(req("tools/list")))
        const tools = list.tools as ReadonlyArray<Record<string, unknown>>
        assert.deepStrictEqual(tools[0], { name: "echo", description: "says it back", inputSchema: { type: "object" } })
        const call = resultOf(yield* t.handle(req("tools/call", { name: "echo", arguments: { x: 1 } })))
        assert.isUndefined(call.structuredContent)
        assert.strictEqual(t.received[1]?.caller.revision, "2024-11-05")
      })
    ))

  it.effect("2025-03-26/lifecycle/sessionless-request-uses-the-transports-revision", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(req("tools/list"), { legacyRevision: "2025-03-26" }))
        assert.strictEqual(t.received[0]?.caller.revision, "2025-03-26")
      })
    ))

  it.effect("2025-11-25/lifecycle/negotiated-revision-governs-over-the-transports-revision", () =>
    legacySession("2025-11-25", (t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(req("tools/list"), { legacyRevision: "2025-03-26" }))
        assert.strictEqual(t.received[0]?.caller.revision, "2025-11-25")
      })))
})

describe("both eras on one connection", () => {
  it.effect("2026-07-28/dual-era/modern-request-on-a-legacy-connection-is-served-as-modern", () =>
    legacySession("2025-06-18", (t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(req("tools/list", { _meta: meta({ [`io.modelcontextprotocol/clientCapabilities`]: { roots: {} } }) })))
        assert.strictEqual(r.resultType, "complete")
        const caller = t.received[0]?.caller
        assert.strictEqual(caller?.revision, Modern)
        assert.strictEqual(caller?.era, "modern")
        assert.deepStrictEqual(caller?.clientCapabilities, { roots: {} })
        // The legacy negotiation stays as it was for the legacy requests that follow.
        assert.strictEqual(yield* Server.negotiatedRevision(t.connection), "2025-06-18")
      })))

  it.effect("2026-07-28/dual-era/discover-does-not-negotiate-so-initialize-may-follow", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(req("server/discover", { _meta: meta() })))
        assert.isUndefined(yield* Server.negotiatedRevision(t.connection))
        const r = resultOf(yield* t.handle(initialize("2025-11-25")))
        assert.strictEqual(r.protocolVersion, "2025-11-25")
      })
    ))
})
