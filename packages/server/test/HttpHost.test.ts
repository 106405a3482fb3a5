import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import { errorIn, harness, modernHeaders, modernRequest, objectOf, sse } from "./HttpHostHarness.js"
import { initialize } from "./support.js"

const discover = modernRequest("server/discover")
const discoverHeaders = modernHeaders("server/discover")

describe("HttpHost: Origin and the HTTP envelope", () => {
  it.scoped("all/http/a request without Origin is served", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const r = yield* h.post(discover, discoverHeaders)
      assert.strictEqual(r.status, 200)
    }))

  it.scoped("all/http/loopback origins are allowed at any port over http and https", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      for (const origin of ["http://localhost:5173", "http://127.0.0.1:1", "https://[::1]:8443", "https://localhost"]) {
        const r = yield* h.post(discover, { ...discoverHeaders, origin })
        assert.strictEqual(r.status, 200, origin)
      }
    }))

  it.scoped("all/http/the daemon's own origins and transport.allowedOrigins are allowed, nothing else", () =>
    Effect.gen(function*() {
      const h = yield* harness({ ownOrigins: ["http://10.0.0.5:7717"], allowedOrigins: ["https://app.example.com"] })
      assert.strictEqual((yield* h.post(discover, { ...discoverHeaders, origin: "http://10.0.0.5:7717" })).status, 200)
      assert.strictEqual((yield* h.post(discover, { ...discoverHeaders, origin: "https://app.example.com" })).status, 200)
      for (const origin of ["https://evil.example", "http://10.0.0.5:7718", "http://app.example.com", "file://x"]) {
        const r = yield* h.post(discover, { ...discoverHeaders, origin })
        assert.strictEqual(r.status, 403, origin)
        const body = yield* objectOf(r)
        assert.isFalse("id" in body, "the refusal carries no id")
        assert.strictEqual(errorIn(body).code, -32600)
      }
    }))

  it.scoped("all/http/Origin null is refused on every method", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      assert.strictEqual((yield* h.post(discover, { ...discoverHeaders, origin: "null" })).status, 403)
      assert.strictEqual((yield* h.get({ origin: "null", "mcp-session-id": "x" })).status, 403)
      assert.strictEqual((yield* h.del({ origin: "null", "mcp-session-id": "x" })).status, 403)
    }))

  it.scoped("all/http/a body that is not application/json is 415", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const r = yield* h.post(discover, { ...discoverHeaders, "content-type": "text/plain" })
      assert.strictEqual(r.status, 415)
      assert.strictEqual(errorIn(yield* objectOf(r)).code, -32600)
      const charset = yield* h.post(discover, { ...discoverHeaders, "content-type": "application/json; charset=utf-8" })
      assert.strictEqual(charset.status, 200)
    }))

  it.scoped("all/http/an Accept with neither JSON nor SSE is 406", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const r = yield* h.post(discover, { ...discoverHeaders, accept: "text/html" })
      assert.strictEqual(r.status, 406)
      assert.strictEqual(errorIn(yield* objectOf(r)).code, -32600)
    }))

  it.scoped("all/http/a body over the limit is 413", () =>
    Effect.gen(function*() {
      const h = yield* harness({ maxBodyBytes: 64 })
      const big = modernRequest("tools/call", { name: "echo", arguments: { text: "x".repeat(200) } })
      const r = yield* h.post(big, modernHeaders("tools/call", "echo"))
      assert.strictEqual(r.status, 413)
      assert.strictEqual(errorIn(yield* objectOf(r)).code, -32600)
      // Without a Content-Length the cap still holds while reading.
      const chunked = yield* h.fetch(
        new Request("http://127.0.0.1:7717/mcp", {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: new ReadableStream({
            start: (c) => {
              c.enqueue(new TextEncoder().encode(JSON.stringify(big)))
              c.close()
            }
          }),
          duplex: "half"
        } as RequestInit)
      )
      assert.strictEqual(chunked.status, 413)
    }))

  it.scoped("all/http/unparsable JSON is 400 with -32700", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const r = yield* h.post("{not json", discoverHeaders)
      assert.strictEqual(r.status, 400)
      const body = yield* objectOf(r)
      assert.strictEqual(errorIn(body).code, -32700)
      assert.isFalse("id" in body)
    }))

  it.scoped("all/http/methods other than GET, POST and DELETE are 405", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const r = yield* h.fetch(new Request("http://127.0.0.1:7717/mcp", { method: "PUT", body: "{}" }))
      assert.strictEqual(r.status, 405)
      assert.include(r.headers.get("allow") ?? "", "POST")
      assert.strictEqual(errorIn(yield* objectOf(r)).code, -32600)
    }))
})

describe("HttpHost: 2026-07-28", () => {
  it.scoped("2026-07-28/http/a request is answered as JSON, 200, with no session minted or echoed", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const r = yield* h.post(discover, { ...discoverHeaders, "mcp-session-id": "not-a-session" })
      assert.strictEqual(r.status, 200)
      assert.strictEqual(r.headers.get("content-type"), "application/json")
      assert.isNull(r.headers.get("mcp-session-id"))
      const body = yield* objectOf(r)
      assert.strictEqual(body.id, 1)
      assert.deepStrictEqual((body.result as { supportedVersions: unknown }).supportedVersions, ["2026-07-28"])
      assert.deepStrictEqual(yield* h.host.sessionIds, [])
    }))

  it.scoped("2026-07-28/http/a missing mirrored header is -32020 with the request's id", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const cases: ReadonlyArray<Record<string, string>> = [
        { "mcp-method": "tools/list" },
        { "mcp-protocol-version": "2026-07-28" },
        modernHeaders("tools/call")
      ]
      for (const headers of cases) {
        const method = headers["mcp-method"] === undefined || headers["mcp-method"] === "tools/list" ? "tools/list" : "tools/call"
        const body = method === "tools/list" ? modernRequest("tools/list", {}, 7) : modernRequest("tools/call", { name: "echo" }, 7)
        const r = yield* h.post(body, headers)
        assert.strictEqual(r.status, 400, JSON.stringify(headers))
        const reply = yield* objectOf(r)
        assert.strictEqual(reply.id, 7)
        assert.strictEqual(errorIn(reply).code, -32020)
      }
    }))

  it.scoped("2026-07-28/http/mirrored header mismatch is -32020", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const call = modernRequest("tools/call", { name: "echo", arguments: {} })
      const mismatches: ReadonlyArray<Record<string, string>> = [
        modernHeaders("tools/call", "echo_twice"),
        modernHeaders("tools/list", "echo"),
        { ...modernHeaders("tools/call", "echo"), "mcp-name": "=?base64?ZWNobw?=" },
        { ...modernHeaders("tools/call", "echo"), "mcp-protocol-version": "2026-08-01" }
      ]
      for (const headers of mismatches) {
        const r = yield* h.post(call, headers)
        assert.strictEqual(r.status, 400, JSON.stringify(headers))
        assert.strictEqual(errorIn(yield* objectOf(r)).code, -32020, JSON.stringify(headers))
      }
      // The sentinel form of the right name is the name.
      const ok = yield* h.post(call, { ...modernHeaders("tools/call"), "mcp-name": "=?base64?ZWNobw==?=" })
      assert.strictEqual(ok.status, 200)
    }))

  it.scoped("2026-07-28/http/Mcp-Param headers are checked against the tool's x-mcp-header annotations", () =>
    Effect.gen(function*() {
      const schema = { type: "object", properties: { region: { type: "string", "x-mcp-header": "Region" }, n: { type: "integer", "x-mcp-header": "N" } } }
      const h = yield* harness({ inputSchemaOf: (tool) => Effect.succeed(tool === "echo" ? { inputSchema: schema } : undefined) })
      const call = modernRequest("tools/call", { name: "echo", arguments: { region: "eu", n: 42 } })
      const headers = modernHeaders("tools/call", "echo")
      const good = yield* h.post(call, { ...headers, "mcp-param-region": "eu", "mcp-param-n": "42.0" })
      assert.strictEqual(good.status, 200)
      const cases: ReadonlyArray<Record<string, string>> = [
        { "mcp-param-region": "us", "mcp-param-n": "42" },
        { "mcp-param-n": "42" },
        { "mcp-param-region": "eu", "mcp-param-n": "41" }
      ]
      for (const params of cases) {
        const r = yield* h.post(call, { ...headers, ...params })
        assert.strictEqual(r.status, 400, JSON.stringify(params))
        const body = yield* objectOf(r)
        assert.strictEqual(body.id, 1)
        assert.strictEqual(errorIn(body).code, -32020)
      }
      // A value present in a header but absent from the body disagrees too.
      const absent = modernRequest("tools/call", { name: "echo", arguments: { n: 1 } })
      const r = yield* h.post(absent, { ...headers, "mcp-param-n": "1", "mcp-param-region": "eu" })
      assert.strictEqual(r.status, 400)
    }))

  it.scoped("2026-07-28/http/a tools/call whose _meta is refused looks up no tool schema (which could start an upstream)", () =>
    Effect.gen(function*() {
      let lookups = 0
      const schema = { type: "object", properties: { region: { type: "string", "x-mcp-header": "Region" } } }
      const h = yield* harness({ inputSchemaOf: () => Effect.sync(() => (lookups++, { inputSchema: schema })) })
      const headers = { ...modernHeaders("tools/call", "echo"), "mcp-param-region": "eu" }
      const complete = modernRequest("tools/call", { name: "echo", arguments: { region: "eu" } })
      const params = complete.params as Record<string, unknown>
      const meta = params._meta as Record<string, unknown>
      const { ["io.modelcontextprotocol/clientCapabilities"]: _dropped, ...withoutCapabilities } = meta
      const refused = yield* h.post({ ...complete, params: { ...params, _meta: withoutCapabilities } }, headers)
      assert.strictEqual(refused.status, 400)
      assert.strictEqual(errorIn(yield* objectOf(refused)).code, -32602)
      assert.strictEqual(lookups, 0)
      for (const wrong of [{ "io.modelcontextprotocol/clientCapabilities": "all" }, { "io.modelcontextprotocol/logLevel": "loud" }, { progressToken: {} }]) {
        const r = yield* h.post({ ...complete, params: { ...params, _meta: { ...meta, ...wrong } } }, headers)
        assert.strictEqual(errorIn(yield* objectOf(r)).code, -32602, JSON.stringify(wrong))
        assert.strictEqual(lookups, 0, JSON.stringify(wrong))
      }
      const unsupported = yield* h.post(
        { ...complete, params: { ...params, _meta: { ...meta, "io.modelcontextprotocol/protocolVersion": "2099-01-01" } } },
        { ...headers, "mcp-protocol-version": "2099-01-01" }
      )
      assert.strictEqual(errorIn(yield* objectOf(unsupported)).code, -32022)
      assert.strictEqual(lookups, 0)
      // The same call with its _meta whole is checked against the schema as before.
      const good = yield* h.post(complete, headers)
      assert.strictEqual(good.status, 200)
      assert.strictEqual(lookups, 1)
    }))

  it.scoped("2026-07-28/http/the status is modernStatus of the response", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const call = (name: string) => h.post(modernRequest("tools/call", { name, arguments: {} }), modernHeaders("tools/call", name))
      const expect = (r: Response, status: number, code: number | undefined) =>
        Effect.gen(function*() {
          assert.strictEqual(r.status, status)
          const body = yield* objectOf(r)
          if (code === undefined) assert.isTrue("result" in body)
          else assert.strictEqual(errorIn(body).code, code)
        })
      yield* expect(yield* call("echo"), 200, undefined)
      yield* expect(yield* call("needs_elicitation"), 400, -32021)
      yield* expect(yield* call("nope"), 400, -32602)
      yield* expect(yield* call("slow"), 200, -32603)
      yield* expect(yield* call("boom"), 200, -32050)
      yield* expect(yield* h.post(modernRequest("unknown/method"), modernHeaders("unknown/method")), 404, -32601)
      yield* expect(yield* h.post(modernRequest("initialize", initialize("2025-11-25").params ?? {}), modernHeaders("initialize")), 404, -32601)
      const v999 = {
        ...discover,
        params: { _meta: { ...(discover.params as { _meta: object })._meta, "io.modelcontextprotocol/protocolVersion": "2099-01-01" } }
      }
      yield* expect(yield* h.post(v999, modernHeaders("server/discover", undefined, "2099-01-01")), 400, -32022)
    }))

  it.scoped("2026-07-28/http/a client that takes only an event stream gets one event with the same status", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const r = yield* h.post(modernRequest("unknown/method"), { ...modernHeaders("unknown/method"), accept: "text/event-stream" })
      assert.strictEqual(r.status, 404)
      assert.strictEqual(r.headers.get("content-type"), "text/event-stream")
      const stream = sse(r)
      const event = (yield* stream.next)?.data
      assert.strictEqual(errorIn(event as JsonObject).code, -32601)
      assert.isUndefined(yield* stream.next)
    }))

  it.scoped("2026-07-28/http/a call that asked for nothing first still gets what it said before its response, on a stream", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      // No progress token and no log level: the request runs without a stream of its own, and
      // what the tool said anyway precedes the response once it is done.
      const r = yield* h.post(modernRequest("tools/call", { name: "say_first", arguments: {} }), modernHeaders("tools/call", "say_first"))
      assert.strictEqual(r.status, 200)
      assert.strictEqual(r.headers.get("content-type"), "text/event-stream")
      const stream = sse(r)
      const said = (yield* stream.next)?.data as JsonObject
      assert.strictEqual(said.method, "notifications/progress")
      const response = (yield* stream.next)?.data as JsonObject
      assert.strictEqual(response.id, 1)
      assert.deepStrictEqual((response.result as JsonObject).content, [{ type: "text", text: "done" }])
      assert.isUndefined(yield* stream.next)
    }))

  it.scoped("2026-07-28/http/a call that said nothing first is one JSON response", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const r = yield* h.post(modernRequest("tools/call", { name: "echo", arguments: { x: 1 } }), modernHeaders("tools/call", "echo"))
      assert.strictEqual(r.status, 200)
      assert.strictEqual(r.headers.get("content-type"), "application/json")
      assert.strictEqual((yield* objectOf(r)).id, 1)
    }))

  it.scoped("2026-07-28/http/a modern header on a body without _meta is -32602", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const r = yield* h.post({ jsonrpc: "2.0", id: 3, method: "server/discover" }, discoverHeaders)
      assert.strictEqual(r.status, 400)
      const body = yield* objectOf(r)
      assert.strictEqual(body.id, 3)
      assert.strictEqual(errorIn(body).code, -32602)
    }))

  it.scoped("2026-07-28/http/a batch is 400 -32600", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const r = yield* h.post([discover, { ...discover, id: 2 }], discoverHeaders)
      assert.strictEqual(r.status, 400)
      assert.strictEqual(errorIn(yield* objectOf(r)).code, -32600)
      // Modern elements without the header are refused as a batch too.
      const bare = yield* h.post([discover])
      assert.strictEqual(bare.status, 400)
      assert.strictEqual(errorIn(yield* objectOf(bare)).code, -32600)
    }))

  it.scoped("2026-07-28/http/notifications are 202 with no body, an unknown one included", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      for (const method of ["notifications/cancelled", "notifications/whatever"]) {
        const r = yield* h.post({ jsonrpc: "2.0", method, params: { requestId: 1 } }, { "mcp-protocol-version": "2026-07-28", "mcp-method": method })
        assert.strictEqual(r.status, 202, method)
        assert.strictEqual(yield* Effect.promise(() => r.text()), "")
      }
      const disagreeing = yield* h.post({ jsonrpc: "2.0", method: "notifications/x" }, {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "notifications/y"
      })
      assert.strictEqual(disagreeing.status, 400)
      const body = yield* objectOf(disagreeing)
      assert.isFalse("id" in body)
      assert.strictEqual(errorIn(body).code, -32020)
    }))

  it.scoped("2026-07-28/http/closing the response stream interrupts the request", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const controller = new AbortController()
      const pending = h.post(
        modernRequest("tools/call", { name: "block", arguments: { tag: "modern" } }),
        modernHeaders("tools/call", "block"),
        { signal: controller.signal }
      )
      yield* Effect.forkScoped(pending)
      assert.strictEqual(yield* Queue.take(h.events.started), "modern")
      controller.abort()
      assert.strictEqual(yield* Queue.take(h.events.interrupted), "modern")
    }))

  it.scoped("2026-07-28/http/GET and DELETE are 405", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const get = yield* h.get({ "mcp-protocol-version": "2026-07-28", "mcp-session-id": "x" })
      assert.strictEqual(get.status, 405)
      assert.strictEqual(errorIn(yield* objectOf(get)).code, -32600)
      const del = yield* h.del({ "mcp-protocol-version": "2026-07-28", "mcp-session-id": "x" })
      assert.strictEqual(del.status, 405)
    }))
})
