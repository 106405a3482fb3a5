import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Effect from "effect/Effect"
import * as Server from "../src/Server.js"
import { C, errorOf, I, initialize, meta, Modern, req, resultOf, S, V, withServer } from "./support.js"

const options: Server.ServerOptions = {
  ...Server.DefaultOptions,
  instructions: "ask for tools",
  capabilities: { tools: { listChanged: true }, completions: {}, extensions: { "io.modelcontextprotocol/tasks": {} }, tasks: {} }
}

describe("server/discover", () => {
  it.effect("2026-07-28/discover/supportedVersions-and-serverInfo-in-meta", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(req("server/discover", { _meta: meta() })))
        assert.deepStrictEqual(r.supportedVersions, ["2026-07-28"])
        assert.deepStrictEqual(r._meta, { [S]: { name: "mcpx-fx", version: "0.1.0" } })
        assert.isUndefined(r.serverInfo)
        assert.isUndefined(r.protocolVersions)
      })
    ))

  it.effect("2026-07-28/discover/resultType-ttlMs-and-cacheScope", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(req("server/discover", { _meta: meta() })))
        assert.strictEqual(r.resultType, "complete")
        assert.strictEqual(r.ttlMs, 60_000)
        assert.strictEqual(r.cacheScope, "public")
      })
    ))

  it.effect("2026-07-28/discover/capabilities-for-the-modern-revision-and-instructions", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(req("server/discover", { _meta: meta() })))
        // tasks is an extension in 2026-07-28, never a capability key of its own.
        assert.deepStrictEqual(r.capabilities, {
          tools: { listChanged: true },
          completions: {},
          extensions: { "io.modelcontextprotocol/tasks": {} }
        })
        assert.strictEqual(r.instructions, "ask for tools")
      }), { server: options }))

  it.effect("2026-07-28/discover/without-meta-is-32602", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const e = errorOf(yield* t.handle(req("server/discover")))
        assert.strictEqual(e.code, -32602)
        assert.deepStrictEqual(e.data, { missing: ["_meta"] })
      })
    ))

  it.effect("2026-07-28/discover/answered-on-a-connection-that-ran-initialize", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(initialize("2025-11-25")))
        const r = resultOf(yield* t.handle(req("server/discover", { _meta: meta() })))
        assert.deepStrictEqual(r.supportedVersions, ["2026-07-28"])
      })
    ))
})

describe("per-request _meta", () => {
  it.effect("2026-07-28/meta/missing-clientCapabilities-is-32602", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const e = errorOf(yield* t.handle(req("tools/list", { _meta: { [V]: Modern } }, "a")))
        assert.strictEqual(e.code, -32602)
        assert.deepStrictEqual(e.data, { missing: [C] })
        assert.strictEqual(t.received.length, 0)
      })
    ))

  it.effect("2026-07-28/meta/malformed-protocolVersion-is-32602", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const e = errorOf(yield* t.handle(req("tools/list", { _meta: { [V]: 2026, [C]: {} } })))
        assert.strictEqual(e.code, -32602)
      })
    ))

  it.effect("2026-07-28/meta/malformed-clientInfo-is-32602", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const e = errorOf(yield* t.handle(req("tools/list", { _meta: meta({ [I]: "me" }) })))
        assert.strictEqual(e.code, -32602)
      })
    ))

  it.effect("2026-07-28/meta/clientInfo-is-optional", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(req("tools/list", { _meta: { [V]: Modern, [C]: {} } })))
        assert.isUndefined(t.received[0]?.caller.clientInfo)
      })
    ))

  it.effect("2026-07-28/meta/unsupported-version-is-32022-with-supported-and-requested", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = yield* t.handle(req("tools/list", { _meta: meta({}, "2099-01-01") }, 5))
        assert.strictEqual(r?.id, 5)
        const e = errorOf(r)
        assert.strictEqual(e.code, -32022)
        assert.deepStrictEqual(e.data, { supported: ["2026-07-28"], requested: "2099-01-01" })
      })
    ))

  it.effect("2026-07-28/meta/legacy-version-in-meta-is-32022", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const e = errorOf(yield* t.handle(req("server/discover", { _meta: meta({}, "2025-11-25") })))
        assert.strictEqual(e.code, -32022)
        assert.deepStrictEqual(e.data, { supported: ["2026-07-28"], requested: "2025-11-25" })
      })
    ))

  it.effect("2026-07-28/meta/validated-on-every-request-never-inferred-from-earlier-ones", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(req("tools/list", { _meta: meta() })))
        const e = errorOf(yield* t.handle(req("tools/list", { _meta: { [V]: Modern } }, 2)))
        assert.strictEqual(e.code, -32602)
      })
    ))

  it.effect("2026-07-28/meta/capabilities-come-from-each-request", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(req("tools/list", { _meta: meta({ [C]: { elicitation: {} } }) })))
        resultOf(yield* t.handle(req("tools/list", { _meta: meta() }, 2)))
        assert.deepStrictEqual(t.received[0]?.caller.clientCapabilities, { elicitation: {} })
        assert.deepStrictEqual(t.received[1]?.caller.clientCapabilities, {})
      })
    ))
})

describe("methods a 2026 peer no longer has", () => {
  const removed: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
    ["initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "c", version: "1" } }],
    ["ping", {}],
    ["logging/setLevel", { level: "info" }],
    ["resources/subscribe", { uri: "file:///a.txt" }],
    ["resources/unsubscribe", { uri: "file:///a.txt" }]
  ]
  for (const [method, params] of removed) {
    it.effect(`2026-07-28/removed/${method.replace("/", "-")}-with-a-modern-envelope-is-32601`, () =>
      withServer((t) =>
        Effect.gen(function*() {
          const e = errorOf(yield* t.handle(req(method, { ...params, _meta: meta() })))
          assert.strictEqual(e.code, -32601)
          // A modern initialize must not start a legacy negotiation.
          assert.isUndefined(yield* Server.negotiatedRevision(t.connection))
        })
      ))
  }

  it.effect("2026-07-28/removed/unknown-method-is-32601", () =>
    withServer((t) =>
      Effect.gen(function*() {
        assert.strictEqual(errorOf(yield* t.handle(req("tools/frobnicate", { _meta: meta() }))).code, -32601)
        // The tasks extension's methods are there, but only for a request that declared it.
        assert.strictEqual(errorOf(yield* t.handle(req("tasks/get", { taskId: "t", _meta: meta() }))).code, -32021)
        assert.strictEqual(errorOf(yield* t.handle(req("tasks/list", { _meta: meta() }))).code, -32601)
      })
    ))
})

describe("legacy-only method handling", () => {
  it.effect("2025-11-25/methods/unknown-method-is-32601", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(initialize("2025-11-25")))
        const e = errorOf(yield* t.handle(req("tools/frobnicate")))
        assert.strictEqual(e.code, -32601)
      })
    ))

  it.effect("2025-11-25/methods/resources-subscribe-is-32601-while-subscribe-is-not-declared", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(initialize("2025-11-25")))
        assert.strictEqual(errorOf(yield* t.handle(req("resources/subscribe", { uri: "file:///a.txt" }))).code, -32601)
      })
    ))

  it.effect("2025-11-25/methods/logging-setLevel-is-accepted-and-recorded", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(initialize("2025-11-25")))
        assert.deepStrictEqual(resultOf(yield* t.handle(req("logging/setLevel", { level: "warning" }))), {})
        const n = yield* t.connection.negotiated
        assert.isTrue(n._tag === "Some" && n.value.logLevel === "warning")
        assert.strictEqual(errorOf(yield* t.handle(req("logging/setLevel", { level: "loud" }))).code, -32602)
      })
    ))

  it.effect("2025-11-25/methods/core-tasks-are-served-and-declared", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const init = resultOf(yield* t.handle(initialize("2025-11-25")))
        assert.isDefined((init.capabilities as JsonObject).tasks)
        assert.deepStrictEqual(resultOf(yield* t.handle(req("tasks/list"))), { tasks: [] })
      })
    ))

  it.effect("2025-06-18/methods/tasks-do-not-exist-before-2025-11-25", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(initialize("2025-06-18")))
        const e = errorOf(yield* t.handle(req("tasks/list")))
        assert.strictEqual(e.code, -32601)
        assert.match(e.message, /not part of 2025-06-18/)
      })
    ))
})
