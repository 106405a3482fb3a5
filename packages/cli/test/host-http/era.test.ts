/**
 * Seed 002 "Which era a POST belongs to", over the daemon's `/mcp`: a POST is modern if its body
 * carries `_meta["io.modelcontextprotocol/protocolVersion"]` or its MCP-Protocol-Version names a
 * revision at or after 2026-07-28 (an unimplemented later date included); everything else is
 * legacy. A modern header on a body without `_meta` is refused as the modern request it claims to
 * be (-32602, the spec's code for the missing field), never served as legacy; `initialize`
 * without the modern envelope is legacy whatever its header says. One daemon.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { HttpDaemon } from "../support/HttpDaemon.js"
import { modernBody, SessionHeader, versionHeaders } from "../support/HttpMcp.js"
import { error, result } from "../support/Replies.js"
import { initializeParams, Legacy } from "../support/Revisions.js"
import { era, type Message } from "../support/StdioServe.js"

const config = { servers: { alpha: era("dual") } }

const asMessage = (body: unknown): Message => {
  assert.isObject(body, JSON.stringify(body))
  return body as Message
}

describe.concurrent("which era a POST belongs to", () => {
  layer(HttpDaemon.layer(config), { timeout: 30_000 })("http era classification", (it) => {
    it.effect("2026-07-28/http/a body with _meta protocolVersion is modern even without headers, so its missing headers are -32020", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* http.post(modernBody("bare-modern", "tools/list"))
        assert.strictEqual(reply.status, 400, reply.text)
        const body = asMessage(reply.body)
        assert.strictEqual(error(body).code, -32020)
        assert.strictEqual(body.id, "bare-modern")
      }))

    it.effect.each(
      [
        ["2026-07-28", "ping"],
        ["2026-07-28", "tools/list"],
        ["2031-01-01", "tools/list"]
      ] as const
    )(
      "2026-07-28/http/an MCP-Protocol-Version of %s on a %s body without _meta is modern: 400 -32602, not legacy",
      ([version, method]) =>
        Effect.gen(function*() {
          const { http } = yield* HttpDaemon
          const reply = yield* http.post({ jsonrpc: "2.0", id: "claimed", method, params: {} }, {
            headers: { "mcp-protocol-version": version, "mcp-method": method }
          })
          assert.strictEqual(reply.status, 400, reply.text)
          assert.strictEqual(error(asMessage(reply.body)).code, -32602)
        })
    )

    it.effect("2026-07-28/http/an unimplemented later date in the body and header is -32022, not legacy", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const body = modernBody("later", "tools/list")
        const params = body.params as Message
        const reply = yield* http.post(
          { ...body, params: { ...params, _meta: { ...(params._meta as Message), "io.modelcontextprotocol/protocolVersion": "2031-01-01" } } },
          { headers: { "mcp-protocol-version": "2031-01-01", "mcp-method": "tools/list" } }
        )
        assert.strictEqual(reply.status, 400, reply.text)
        const e = error(asMessage(reply.body))
        assert.strictEqual(e.code, -32022)
        assert.include((e.data as Message).supported as ReadonlyArray<string>, "2026-07-28")
      }))

    it.effect.each(Legacy)("%s/http/a POST with neither _meta nor a modern header is legacy", (revision) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* http.post({ jsonrpc: "2.0", id: "plain", method: "tools/list", params: {} }, { headers: versionHeaders(revision) })
        assert.strictEqual(reply.status, 200, reply.text)
        const r = result(asMessage(reply.body))
        assert.isArray(r.tools)
        assert.notProperty(r, "resultType")
      }))

    it.effect("2025-11-25/http/initialize without the modern envelope is legacy whatever MCP-Protocol-Version says", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* http.post(
          { jsonrpc: "2.0", id: "init", method: "initialize", params: initializeParams("2025-11-25") },
          { headers: { "mcp-protocol-version": "2026-07-28" } }
        )
        assert.strictEqual(reply.status, 200, reply.text)
        assert.strictEqual(result(asMessage(reply.body)).protocolVersion, "2025-11-25")
        assert.isString(reply.headers.get(SessionHeader))
      }))
  })
})
