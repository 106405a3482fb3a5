/**
 * Seed 002 "Streamable HTTP, 2026-07-28" and the server core over the daemon's `/mcp`, with the
 * digest's corrections: the mirrored headers checked (-32020 with the request's id), the status a
 * function of the response alone, no sessions minted or echoed, no batches, notifications 202;
 * `server/discover`, -32602 for a missing `_meta` field, -32022 naming what is supported and what
 * was asked, methods 2026-07-28 removed answered 404 -32601 in the modern envelope. One daemon.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { HttpDaemon } from "../support/HttpDaemon.js"
import { modernBody, modernHeaders, modernRequest, SessionHeader } from "../support/HttpMcp.js"
import { error, firstText, result } from "../support/Replies.js"
import { clientInfo, modernMeta } from "../support/Revisions.js"
import { assertStructuredCall, assertToolsList } from "../support/Shapes.js"
import { era, type Message } from "../support/StdioServe.js"

const config = { servers: { alpha: era("dual") } }

const asMessage = (body: unknown): Message => {
  assert.isObject(body, JSON.stringify(body))
  return body as Message
}

describe.concurrent("2026-07-28 over /mcp", () => {
  layer(HttpDaemon.layer(config), { timeout: 30_000 })("modern http", (it) => {
    it.effect("2026-07-28/http/server/discover answers supportedVersions, capabilities, caching hints and serverInfo in _meta", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* modernRequest(http, "discover", "server/discover")
        assert.strictEqual(reply.status, 200, reply.text)
        const r = result(asMessage(reply.body))
        assert.include(r.supportedVersions as ReadonlyArray<string>, "2026-07-28")
        assert.isObject((r.capabilities as Message).tools)
        assert.notProperty(r.capabilities, "tasks")
        assert.strictEqual(r.resultType, "complete")
        assert.isAtLeast(r.ttlMs as number, 0)
        assert.include(["public", "private"], r.cacheScope)
        const serverInfo = (r._meta as Message | undefined)?.["io.modelcontextprotocol/serverInfo"] as Message | undefined
        assert.isString(serverInfo?.name)
        assert.notProperty(r, "serverInfo")
      }))

    it.effect.each(
      [
        ["discover without _meta", "server/discover", {}],
        ["a call whose _meta lacks clientCapabilities", "tools/call", {
          name: "alpha__echo",
          arguments: { message: "x" },
          _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": clientInfo }
        }],
        ["a listing whose _meta lacks protocolVersion", "tools/list", {
          _meta: { "io.modelcontextprotocol/clientCapabilities": {} }
        }]
      ] as const
    )("2026-07-28/http/a modern header on a request missing a required _meta field is 400 -32602: %s", ([label, method, params]) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const name = "name" in params ? params.name : undefined
        const reply = yield* http.post({ jsonrpc: "2.0", id: label, method, params }, { headers: modernHeaders(method, name) })
        assert.strictEqual(reply.status, 400, reply.text)
        const body = asMessage(reply.body)
        assert.strictEqual(error(body).code, -32602)
        assert.strictEqual(body.id, label)
      }))

    it.effect("2026-07-28/http/an unimplemented version is 400 -32022 with supported and requested, not served as legacy", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const body = { ...modernBody("future", "tools/list"), params: { _meta: { ...modernMeta(), "io.modelcontextprotocol/protocolVersion": "2099-01-01" } } }
        const reply = yield* http.post(body, { headers: modernHeaders("tools/list", undefined, "2099-01-01") })
        assert.strictEqual(reply.status, 400, reply.text)
        const e = error(asMessage(reply.body))
        assert.strictEqual(e.code, -32022)
        assert.include((e.data as Message).supported as ReadonlyArray<string>, "2026-07-28")
        assert.strictEqual((e.data as Message).requested, "2099-01-01")
        assert.strictEqual(asMessage(reply.body).id, "future")
      }))

    it.effect("2026-07-28/http/a capability the upstream needs and the request lacks is 400 -32021 with requiredCapabilities", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* modernRequest(http, "ask", "tools/call", { name: "alpha__ask_name", arguments: {} })
        assert.strictEqual(reply.status, 400, reply.text)
        const e = error(asMessage(reply.body))
        assert.strictEqual(e.code, -32021)
        assert.property((e.data as Message).requiredCapabilities, "elicitation")
      }))

    it.effect.each(
      [
        ["initialize", { protocolVersion: "2026-07-28", capabilities: {}, clientInfo }],
        ["ping", {}],
        ["logging/setLevel", { level: "info" }],
        ["resources/subscribe", { uri: "era://readme" }],
        ["unknown/method", {}]
      ] as const
    )("2026-07-28/http/%s in the modern envelope is 404 -32601", ([method, params]) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* modernRequest(http, `removed-${method}`, method, params)
        assert.strictEqual(reply.status, 404, reply.text)
        const body = asMessage(reply.body)
        assert.strictEqual(error(body).code, -32601)
        assert.strictEqual(body.id, `removed-${method}`)
      }))

    it.effect("2026-07-28/http/results carry resultType, caching hints and serverInfo in the 2026-07-28 shape", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const list = yield* modernRequest(http, "list", "tools/list")
        assert.strictEqual(list.status, 200, list.text)
        assertToolsList("2026-07-28", asMessage(list.body), "alpha")
        const call = yield* modernRequest(http, "structured", "tools/call", { name: "alpha__structured", arguments: {} })
        assert.strictEqual(call.status, 200, call.text)
        assertStructuredCall("2026-07-28", asMessage(call.body))
      }))

    it.effect("2026-07-28/http/a tool error and a success are both 200: the status follows the JSON-RPC response, not the tool", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const boom = yield* modernRequest(http, "boom", "tools/call", { name: "alpha__boom", arguments: {} })
        assert.strictEqual(boom.status, 200, boom.text)
        assert.isTrue(result(asMessage(boom.body)).isError)
        const echo = yield* modernRequest(http, "echo", "tools/call", { name: "alpha__echo", arguments: { message: "hi" } })
        assert.strictEqual(echo.status, 200, echo.text)
        assert.strictEqual(firstText(asMessage(echo.body)), "hi")
      }))

    it.effect("2026-07-28/http/every -32602 is 400, whichever handler raised it", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* modernRequest(http, "nowhere", "tools/call", { name: "alpha__no_such_tool", arguments: {} })
        const body = asMessage(reply.body)
        assert.strictEqual(error(body).code, -32602, reply.text)
        assert.strictEqual(reply.status, 400)
      }))

    it.effect("2026-07-28/http/an unparseable body is 400 -32700", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* http.post("{not json", { headers: modernHeaders("tools/list") })
        assert.strictEqual(reply.status, 400, reply.text)
        assert.strictEqual(error(asMessage(reply.body)).code, -32700)
      }))

    it.effect("2026-07-28/http/an Mcp-Session-Id on a modern request is ignored, and no session is minted or echoed", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const discover = yield* modernRequest(http, "fresh", "server/discover")
        assert.strictEqual(discover.status, 200, discover.text)
        assert.isNull(discover.headers.get(SessionHeader))
        const unknown = yield* http.post(modernBody("stranger", "tools/list"), {
          headers: { ...modernHeaders("tools/list"), [SessionHeader]: "no-such-session" }
        })
        assert.strictEqual(unknown.status, 200, unknown.text)
        assert.isNull(unknown.headers.get(SessionHeader))
        assert.isArray(result(asMessage(unknown.body)).tools)
      }))

    it.effect("2026-07-28/http/a batch is 400 -32600", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* http.post([modernBody(1, "tools/list"), modernBody(2, "server/discover")], { headers: modernHeaders("tools/list") })
        assert.strictEqual(reply.status, 400, reply.text)
        assert.strictEqual(error(asMessage(reply.body)).code, -32600)
      }))

    it.effect("2026-07-28/http/a batch of modern bodies without a modern header is 400 -32600 too", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* http.post([modernBody(1, "tools/list"), modernBody(2, "server/discover")])
        assert.strictEqual(reply.status, 400, reply.text)
        assert.strictEqual(error(asMessage(reply.body)).code, -32600)
      }))

    it.effect.each(
      [
        ["with no headers (none are required of a notification)", {}],
        ["with agreeing headers", modernHeaders("notifications/cancelled")]
      ] as const
    )("2026-07-28/http/a notification is 202 with no body, %s", ([, headers]) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* http.post({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: "nothing-running", _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } }
        }, { headers })
        assert.strictEqual(reply.status, 202, reply.text)
        assert.strictEqual(reply.text, "")
      }))

    it.effect("2026-07-28/http/an unknown notification is ignored with 202", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* http.post({
          jsonrpc: "2.0",
          method: "notifications/no_such_thing",
          params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } }
        }, { headers: modernHeaders("notifications/no_such_thing") })
        assert.strictEqual(reply.status, 202, reply.text)
        assert.strictEqual(reply.text, "")
      }))

    it.effect("2026-07-28/http/a notification whose headers disagree with its body is 400 -32020 without an id", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* http.post({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: "x", _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } }
        }, { headers: modernHeaders("notifications/progress") })
        assert.strictEqual(reply.status, 400, reply.text)
        const body = asMessage(reply.body)
        assert.strictEqual(error(body).code, -32020)
        assert.notProperty(body, "id")
      }))

    it.effect("2026-07-28/http/a POSTed response is 400 -32600", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* http.post({ jsonrpc: "2.0", id: "q", result: {} }, { headers: { "mcp-protocol-version": "2026-07-28" } })
        assert.strictEqual(reply.status, 400, reply.text)
        assert.strictEqual(error(asMessage(reply.body)).code, -32600)
      }))

    it.effect("2026-07-28/http/a reply taken as an event stream has no SSE event ids", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* http.post(modernBody("sse", "tools/list"), { headers: modernHeaders("tools/list"), accept: "text/event-stream" })
        assert.strictEqual(reply.status, 200, reply.text)
        assert.match(reply.headers.get("content-type") ?? "", /^text\/event-stream/)
        assert.notMatch(reply.text, /^id:/m)
        assert.isArray(result(asMessage(reply.body)).tools)
      }))

    it.effect.each([["GET", "no GET stream"], ["DELETE", "no sessions"]] as const)(
      "2026-07-28/http/%s with a modern header is 405 (%s)",
      ([method]) =>
        Effect.gen(function*() {
          const { http } = yield* HttpDaemon
          const reply = yield* http.raw(method, { "mcp-protocol-version": "2026-07-28", accept: "text/event-stream" })
          assert.strictEqual(reply.status, 405, reply.text)
          assert.isString(reply.headers.get("allow"))
        })
    )
  })
})
