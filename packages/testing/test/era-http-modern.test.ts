import { assert, describe, it, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { type HttpFixture, startHttpFixture } from "../src/Fixtures.js"
import * as Http from "../src/era/client/HttpPeer.js"
import { errorOf, objectAt, resultOf, textOf } from "../src/era/client/Replies.js"
import * as Rq from "../src/era/client/Requests.js"
import type { JsonObject } from "../src/era/Wire.js"

const start = (mode: string, ...args: ReadonlyArray<string>) => startHttpFixture("era-server", ["--mode", mode, ...args])

/** A modern POST with matching headers; `name` goes in Mcp-Name for tools/call. */
const modernPost = (url: string, id: string, method: string, params: JsonObject, name?: string) =>
  Http.post(url, Rq.rpc(id, method, params), Rq.modernHeaders(method, name))

/** One modern-only server shared by the tests that only send it independent, stateless requests. */
class ModernOnly extends Context.Tag("era-test/ModernOnly")<ModernOnly, HttpFixture>() {}
const ModernOnlyLive = Layer.scoped(ModernOnly, start("modern-only"))

layer(ModernOnlyLive)("era-server over Streamable HTTP, modern-only", (it) => {
  it.effect("announces a 127.0.0.1 /mcp URL and serves discover as JSON", () =>
    Effect.gen(function*() {
      const { url } = yield* ModernOnly
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
      const r = yield* modernPost(url, "d", "server/discover", Rq.modern())
      assert.strictEqual(r.status, 200)
      assert.strictEqual(r.contentType, "application/json")
      const d = resultOf(r.messages[0])
      assert.deepStrictEqual(d["supportedVersions"], ["2026-07-28"])
      assert.strictEqual(d["resultType"], "complete")
      assert.strictEqual(d["cacheScope"], "public")
      assert.isNull(r.headers.get("mcp-session-id"), "modern servers mint no sessions")
    }))

  it.effect("checks the mirrored headers: missing or different is 400 -32020", () =>
    Effect.gen(function*() {
      const { url } = yield* ModernOnly
      const body = Rq.rpc("x", "tools/list", Rq.modern())
      const missing = yield* Http.post(url, body)
      assert.strictEqual(missing.status, 400)
      assert.strictEqual(errorOf(missing.messages[0]).code, ErrorCode.HeaderMismatch)
      const other = yield* Http.post(url, body, { ...Rq.modernHeaders("tools/list"), "mcp-protocol-version": "2099-01-01" })
      assert.strictEqual(other.status, 400)
      assert.strictEqual(errorOf(other.messages[0]).code, ErrorCode.HeaderMismatch)
      const method = yield* Http.post(url, body, Rq.modernHeaders("tools/call"))
      assert.strictEqual(errorOf(method.messages[0]).code, ErrorCode.HeaderMismatch)
      const name = yield* modernPost(url, "n", "tools/call", Rq.modern(Rq.call("hello")), "echo")
      assert.strictEqual(errorOf(name.messages[0]).code, ErrorCode.HeaderMismatch)
      // Mcp-Name may arrive in the base64 sentinel; it is decoded before the comparison.
      const sentinel = `=?base64?${Buffer.from("hello").toString("base64")}?=`
      const encoded = yield* modernPost(url, "s", "tools/call", Rq.modern(Rq.call("hello")), sentinel)
      assert.strictEqual(encoded.status, 200)
    }))

  it.effect("refuses bad _meta with 400 (-32602, -32022) and unknown methods with 404 -32601", () =>
    Effect.gen(function*() {
      const { url } = yield* ModernOnly
      const noMeta = yield* Http.post(url, Rq.rpc("a", "server/discover", {}), Rq.modernHeaders("server/discover"))
      assert.strictEqual(noMeta.status, 400)
      assert.strictEqual(errorOf(noMeta.messages[0]).code, ErrorCode.InvalidParams)
      const future = yield* Http.post(
        url,
        Rq.rpc("b", "server/discover", Rq.modern({}, {}, "2099-01-01")),
        Rq.modernHeaders("server/discover", undefined, "2099-01-01")
      )
      assert.strictEqual(future.status, 400)
      assert.deepStrictEqual(errorOf(future.messages[0]).data, { supported: ["2026-07-28"], requested: "2099-01-01" })
      const ping = yield* modernPost(url, "c", "ping", Rq.modern())
      assert.strictEqual(ping.status, 404)
      assert.strictEqual(errorOf(ping.messages[0]).code, ErrorCode.MethodNotFound)
      assert.strictEqual(ping.messages[0] && "id" in ping.messages[0] ? ping.messages[0].id : undefined, "c")
    }))

  it.effect("modern-only refuses initialize with 400 -32022, and GET/DELETE with 405", () =>
    Effect.gen(function*() {
      const { url } = yield* ModernOnly
      const init = yield* Http.post(url, Rq.rpc(1, "initialize", Rq.initialize()))
      assert.strictEqual(init.status, 400)
      const e = errorOf(init.messages[0])
      assert.strictEqual(e.code, ErrorCode.UnsupportedProtocolVersion)
      assert.deepStrictEqual(e.data, { supported: ["2026-07-28"], requested: "2025-11-25" })
      assert.strictEqual((yield* Http.send(url, { method: "GET" })).status, 405)
      assert.strictEqual((yield* Http.send(url, { method: "DELETE" })).status, 405)
      const note = yield* Http.post(url, Rq.notification("notifications/cancelled", { requestId: 1 }))
      assert.strictEqual(note.status, 202)
    }))

  it.effect("closing the response stream cancels a slow call", () =>
    Effect.gen(function*() {
      const fixture = yield* ModernOnly
      const cancelled = yield* Effect.fork(Http.stderrIncludes(fixture.process, "cancelled tools/call \"slow\""))
      yield* Effect.scoped(
        Effect.gen(function*() {
          const open = yield* Http.stream(fixture.url, {
            body: Rq.rpc("slow", "tools/call", Rq.modern(Rq.call("slow", { ms: 60_000 }))),
            headers: Rq.modernHeaders("tools/call", "slow")
          })
          assert.strictEqual(open.status, 200)
          assert.strictEqual(open.headers.get("content-type"), "text/event-stream")
        })
      )
      // Leaving the scope aborted the fetch; the server notices and stops the call.
      yield* Fiber.join(cancelled)
      assert.isNull(fixture.process.exitCode, "the server lives on after a cancelled request")
    }))

  it.effect("answers tools/call on an SSE stream by default", () =>
    Effect.gen(function*() {
      const { url } = yield* ModernOnly
      const hello = yield* modernPost(url, "h", "tools/call", Rq.modern(Rq.call("hello")), "hello")
      assert.strictEqual(hello.status, 200)
      assert.isTrue(hello.contentType.startsWith("text/event-stream"))
      assert.strictEqual(textOf(resultOf(hello.messages[0])), "hello from modern-only over modern 2026-07-28")
    }))
})

describe("era-server over Streamable HTTP, modern, own fixtures", () => {
  it.scoped("--reply sse streams every reply", () =>
    Effect.gen(function*() {
      const sse = yield* start("modern-only", "--reply", "sse")
      const list = yield* modernPost(sse.url, "l", "tools/list", Rq.modern())
      assert.isTrue(list.contentType.startsWith("text/event-stream"))
      assert.strictEqual(resultOf(list.messages[0])["resultType"], "complete")
    }))

  it.scoped("ask_name: 400 -32021 without elicitation, input_required and a retry with it", () =>
    Effect.gen(function*() {
      const { url } = yield* start("dual")
      const refused = yield* modernPost(url, "1", "tools/call", Rq.modern(Rq.call("ask_name")), "ask_name")
      assert.strictEqual(refused.status, 400)
      assert.deepStrictEqual(errorOf(refused.messages[0]).data, { requiredCapabilities: { elicitation: {} } })
      const caps = { elicitation: {} }
      const first = resultOf((yield* modernPost(url, "2", "tools/call", Rq.modern(Rq.call("ask_name"), caps), "ask_name")).messages[0])
      assert.strictEqual(first["resultType"], "input_required")
      assert.strictEqual(objectAt(objectAt(first, "inputRequests"), "name")["method"], "elicitation/create")
      const retry = Rq.modern(
        { ...Rq.call("ask_name"), inputResponses: { name: { action: "accept", content: { name: "Grace" } } }, requestState: first["requestState"] ?? null },
        caps
      )
      const done = yield* modernPost(url, "3", "tools/call", retry, "ask_name")
      assert.strictEqual(textOf(resultOf(done.messages[0])), "hello, Grace")
    }))
})
