/**
 * Server core for 2026-07-28 hosts over the bundle's stdio: `server/discover`, the per-request
 * `_meta` rules (-32602 when a required field is missing, -32022 naming what is supported and what
 * was asked), -32021 with the capabilities an upstream needs, and the methods 2026-07-28 removed
 * answered -32601 when they arrive in the modern envelope. One shared `mcpx-fx serve`.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { error, result } from "../support/Replies.js"
import { clientInfo, modernMeta } from "../support/Revisions.js"
import { era, type Message, SharedServe } from "../support/StdioServe.js"

const config = { servers: { alpha: era("dual") }, settings: { "transport.stdioDrain": "5s" } }

describe.concurrent("2026-07-28", () => {
  layer(SharedServe.layer(config))("stdio server core", (it) => {
    it.effect("2026-07-28/stdio/server/discover answers supportedVersions, capabilities, caching hints and serverInfo in _meta", () =>
      Effect.gen(function*() {
        const serve = yield* SharedServe
        const r = result(yield* serve.request("discover", "server/discover", { _meta: modernMeta() }))
        assert.isArray(r.supportedVersions)
        assert.include(r.supportedVersions as ReadonlyArray<string>, "2026-07-28")
        assert.isTrue((r.supportedVersions as ReadonlyArray<unknown>).every((v) => typeof v === "string"))
        assert.isObject(r.capabilities)
        assert.isObject((r.capabilities as Message).tools)
        // 2026-07-28 moved tasks to an extension; the key is gone from ServerCapabilities.
        assert.notProperty(r.capabilities, "tasks")
        assert.strictEqual(r.resultType, "complete")
        assert.isNumber(r.ttlMs)
        assert.isAtLeast(r.ttlMs as number, 0)
        assert.include(["public", "private"], r.cacheScope)
        const serverInfo = (r._meta as Message | undefined)?.["io.modelcontextprotocol/serverInfo"] as Message | undefined
        assert.isString(serverInfo?.name)
        assert.isString(serverInfo?.version)
        assert.notProperty(r, "serverInfo")
        assert.notProperty(r, "protocolVersions")
      }))

    it.effect.each(
      [
        ["discover without _meta", "server/discover", {}],
        ["a call whose _meta lacks clientCapabilities", "tools/call", {
          name: "alpha__echo",
          arguments: { message: "x" },
          _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": clientInfo }
        }],
        ["a listing whose clientCapabilities is not an object", "tools/list", {
          _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": "all" }
        }]
      ] as const
    )("2026-07-28/stdio/missing _meta is -32602: %s", ([label, method, params]) =>
      Effect.gen(function*() {
        const serve = yield* SharedServe
        const reply = yield* serve.request(`missing-${label}`, method, params)
        assert.strictEqual(error(reply).code, -32602, JSON.stringify(reply))
      }))

    it.effect("2026-07-28/stdio/an unsupported version is -32022 with supported and requested", () =>
      Effect.gen(function*() {
        const serve = yield* SharedServe
        const meta = { ...modernMeta(), "io.modelcontextprotocol/protocolVersion": "2099-01-01" }
        const e = error(yield* serve.request("future", "tools/list", { _meta: meta }))
        assert.strictEqual(e.code, -32022)
        const data = e.data as Message
        assert.include(data.supported as ReadonlyArray<string>, "2026-07-28")
        assert.strictEqual(data.requested, "2099-01-01")
      }))

    it.effect("2026-07-28/stdio/a capability the upstream needs and the request lacks is -32021 with requiredCapabilities", () =>
      Effect.gen(function*() {
        const serve = yield* SharedServe
        const reply = yield* serve.request("ask", "tools/call", { name: "alpha__ask_name", arguments: {}, _meta: modernMeta() })
        const e = error(reply)
        assert.strictEqual(e.code, -32021, JSON.stringify(reply))
        const required = (e.data as Message | undefined)?.requiredCapabilities
        assert.isObject(required, JSON.stringify(reply))
        assert.property(required, "elicitation")
      }))

    it.effect.each(
      [
        ["initialize", { protocolVersion: "2026-07-28", capabilities: {}, clientInfo }],
        ["ping", {}],
        ["logging/setLevel", { level: "info" }],
        ["resources/subscribe", { uri: "era://readme" }]
      ] as const
    )("2026-07-28/stdio/%s in the modern envelope is -32601", ([method, params]) =>
      Effect.gen(function*() {
        const serve = yield* SharedServe
        const reply = yield* serve.request(`removed-${method}`, method, { ...params, _meta: modernMeta() })
        assert.strictEqual(error(reply).code, -32601, JSON.stringify(reply))
      }))
  })
})
