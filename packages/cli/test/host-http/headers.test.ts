/**
 * Seed 002 "Streamable HTTP, 2026-07-28", mirrored headers, over the daemon's `/mcp`:
 * `MCP-Protocol-Version` and `Mcp-Method` on every request, `Mcp-Name` on tools/call, prompts/get
 * and resources/read; missing, different from the body, or carrying bytes a header may not is
 * 400 -32020 with the request's id. `Mcp-Name` in the `=?base64?…?=` sentinel is decoded (strict
 * Base64) before comparing; names match case-insensitively, values case-sensitively.
 * `Mcp-Param-*`: the `x-mcp-header` annotations of the called tool's upstream inputSchema (the
 * conformance fixture's `test_custom_headers` mirrors `region` into `Mcp-Param-Region`).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import { request as httpRequest } from "node:http"
import { connect } from "node:net"
import { HttpDaemon } from "../support/HttpDaemon.js"
import { type Endpoint, modernBody, modernHeaders, type Reply } from "../support/HttpMcp.js"
import { error, firstText, result } from "../support/Replies.js"
import { era, type Message } from "../support/StdioServe.js"

const config = {
  servers: { alpha: era("dual"), conf: Fixtures.stdioCommand("conformance-fixture") }
}

const asMessage = (body: unknown): Message => {
  assert.isObject(body, JSON.stringify(body))
  return body as Message
}

const sentinel = (value: string) => `=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`

/** A refusal of a header check: 400, -32020, and the request's id. */
const assertMismatch = (reply: Reply, id: string) => {
  assert.strictEqual(reply.status, 400, reply.text)
  const body = asMessage(reply.body)
  assert.strictEqual(error(body).code, -32020, reply.text)
  assert.strictEqual(body.id, id)
}

const call = (http: Endpoint, id: string, name: string, args: Message, headers: Record<string, string>) =>
  http.post(modernBody(id, "tools/call", { name, arguments: args }), { headers })

/**
 * A POST through node:http, which sends header names exactly as written and lets bytes through
 * that fetch would refuse to send.
 */
const rawPost = (url: string, headers: Record<string, string>, body: unknown): Effect.Effect<Reply> =>
  Effect.async<Reply>((resume) => {
    const req = httpRequest(url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json", ...headers } }, (res) => {
      let text = ""
      res.setEncoding("utf8").on("data", (d: string) => (text += d)).on("end", () => {
        const h = new Headers()
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") h.set(k, v)
        resume(Effect.succeed({ status: res.statusCode ?? 0, headers: h, text, body: text.length > 0 ? JSON.parse(text) as unknown : undefined }))
      })
    })
    req.end(JSON.stringify(body))
    return Effect.sync(() => req.destroy())
  })

/** Writes one HTTP/1.1 request byte for byte on a socket; resolves with everything the server wrote. */
const rawExchange = (url: string, headerLines: ReadonlyArray<string>, body: string): Effect.Effect<string> =>
  Effect.async<string>((resume) => {
    const { hostname, port, pathname } = new URL(url)
    const socket = connect(Number(port), hostname, () => {
      const bytes = Buffer.byteLength(body)
      socket.write(
        [`POST ${pathname} HTTP/1.1`, `Host: ${hostname}:${port}`, ...headerLines, `Content-Length: ${bytes}`, "Connection: close", "", body].join("\r\n"),
        "latin1"
      )
    })
    let received = ""
    socket.setEncoding("latin1").on("data", (d: string) => (received += d)).on("close", () => resume(Effect.succeed(received)))
    return Effect.sync(() => socket.destroy())
  })

describe.concurrent("2026-07-28 mirrored headers over /mcp", () => {
  layer(HttpDaemon.layer(config), { timeout: 30_000 })("modern http headers", (it) => {
    it.effect.each(
      [
        ["MCP-Protocol-Version is missing", { "mcp-method": "tools/call", "mcp-name": "alpha__echo" }],
        ["Mcp-Method is missing", { "mcp-protocol-version": "2026-07-28", "mcp-name": "alpha__echo" }],
        ["Mcp-Name is missing on tools/call", { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call" }],
        ["Mcp-Method differs from the body", modernHeaders("tools/list", "alpha__echo")],
        ["Mcp-Name differs from the body", modernHeaders("tools/call", "alpha__hello")],
        ["MCP-Protocol-Version differs from _meta", { ...modernHeaders("tools/call", "alpha__echo"), "mcp-protocol-version": "2099-01-01" }],
        ["Mcp-Method differs only in case (values are case-sensitive)", modernHeaders("TOOLS/CALL", "alpha__echo")],
        ["Mcp-Name carries a byte outside visible ASCII", modernHeaders("tools/call", "alpha__ech\u00e9")],
        ["Mcp-Name's Base64 lacks its padding", modernHeaders("tools/call", "=?base64?YWxwaGFfX2VjaG8?=")],
        ["Mcp-Name's Base64 has characters outside the alphabet", modernHeaders("tools/call", "=?base64?YWxwaGFfX2Vja*8=?=")]
      ] as const
    )("2026-07-28/http/tools/call is 400 -32020 with its id when %s", ([label, headers]) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        assertMismatch(yield* call(http, label, "alpha__echo", { message: "x" }, headers), label)
      }))

    it.effect.each(
      [
        ["prompts/get", { name: "alpha__anything" }],
        ["resources/read", { uri: "mcpx://alpha/era://readme" }]
      ] as const
    )("2026-07-28/http/%s without Mcp-Name is 400 -32020", ([method, params]) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        assertMismatch(yield* http.post(modernBody(method, method, params), { headers: modernHeaders(method) }), method)
      }))

    it.effect.each(
      [
        ["tools/list", modernHeaders("tools/list")],
        ["server/discover", modernHeaders("server/discover")]
      ] as const
    )("2026-07-28/http/%s needs no Mcp-Name and is served with the two headers", ([method, headers]) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* http.post(modernBody(method, method), { headers })
        assert.strictEqual(reply.status, 200, reply.text)
        assert.strictEqual(result(asMessage(reply.body)).resultType, "complete")
      }))

    it.effect("2026-07-28/http/Mcp-Name in the base64 sentinel is decoded before comparing", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* call(http, "encoded", "alpha__echo", { message: "s" }, modernHeaders("tools/call", sentinel("alpha__echo")))
        assert.strictEqual(reply.status, 200, reply.text)
        assert.strictEqual(firstText(asMessage(reply.body)), "s")
      }))

    it.effect("2026-07-28/http/header names match whatever their case", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const reply = yield* rawPost(daemon.info.mcp, {
          "MCP-PROTOCOL-VERSION": "2026-07-28",
          "mcp-METHOD": "tools/call",
          "MCP-Name": "alpha__echo"
        }, modernBody("cased", "tools/call", { name: "alpha__echo", arguments: { message: "case" } }))
        assert.strictEqual(reply.status, 200, reply.text)
        assert.strictEqual(firstText(asMessage(reply.body)), "case")
      }))

    // Node's HTTP parser refuses a control character in any header value with a bare 400 before
    // the request reaches /mcp, so the refusal has no JSON-RPC body; it is still a refusal.
    it.effect("2026-07-28/http/Mcp-Name with a control character is refused with 400", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const body = JSON.stringify(modernBody("control", "tools/call", { name: "alpha__\u0001echo", arguments: {} }))
        const head = yield* rawExchange(daemon.info.mcp, [
          "Content-Type: application/json",
          "MCP-Protocol-Version: 2026-07-28",
          "Mcp-Method: tools/call",
          "Mcp-Name: alpha__\u0001echo"
        ], body)
        assert.match(head, /^HTTP\/1\.1 400 /, head)
      }))

    // ---- Mcp-Param-*

    const region = "conf__test_custom_headers"

    it.effect("2026-07-28/http/Mcp-Param-* matching the body is served", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* call(http, "param-ok", region, { region: "eu-west" }, {
          ...modernHeaders("tools/call", region),
          "mcp-param-region": "eu-west"
        })
        assert.strictEqual(reply.status, 200, reply.text)
        assert.strictEqual(firstText(asMessage(reply.body)), "region=eu-west")
      }))

    it.effect("2026-07-28/http/Mcp-Param-* in the base64 sentinel is decoded before comparing", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* call(http, "param-encoded", region, { region: "Zürich" }, {
          ...modernHeaders("tools/call", region),
          "mcp-param-region": sentinel("Zürich")
        })
        assert.strictEqual(reply.status, 200, reply.text)
        assert.strictEqual(firstText(asMessage(reply.body)), "region=Zürich")
      }))

    it.effect.each(
      [
        ["differs from the body", { region: "eu-west" }, { "mcp-param-region": "us-east" }],
        ["is missing while the body has a value", { region: "eu-west" }, {}],
        ["is present while the body has none", {}, { "mcp-param-region": "eu-west" }],
        ["carries a byte outside visible ASCII", { region: "eu-west" }, { "mcp-param-region": "eu-w\u00e9st" }],
        ["fails to decode", { region: "eu-west" }, { "mcp-param-region": "=?base64?ZXUtd2VzdA?=" }]
      ] as const
    )("2026-07-28/http/tools/call is 400 -32020 when Mcp-Param-Region %s", ([label, args, extra]) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        assertMismatch(yield* call(http, label, region, args, { ...modernHeaders("tools/call", region), ...extra }), label)
      }))
  })
})
