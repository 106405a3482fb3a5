import { assert, describe, it, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { type HttpFixture, startHttpFixture } from "../src/Fixtures.js"
import * as Http from "../src/era/client/HttpPeer.js"
import { resultOf, textOf } from "../src/era/client/Replies.js"
import * as Rq from "../src/era/client/Requests.js"
import { isObject } from "../src/era/Wire.js"

const start = (mode: string, ...args: ReadonlyArray<string>) => startHttpFixture("era-server", ["--mode", mode, ...args])

/** POSTs initialize and notifications/initialized; returns the session's headers for later requests. */
const openSession = (url: string, capabilities = {}) =>
  Effect.gen(function*() {
    const init = yield* Http.post(url, Rq.rpc("init", "initialize", Rq.initialize("2025-11-25", capabilities)))
    assert.strictEqual(init.status, 200)
    assert.strictEqual(resultOf(init.messages[0])["protocolVersion"], "2025-11-25")
    const sid = init.headers.get("mcp-session-id")
    if (sid === null) throw new Error("initialize minted no Mcp-Session-Id")
    const headers = { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" }
    assert.strictEqual((yield* Http.post(url, Rq.notification("notifications/initialized"), headers)).status, 202)
    return headers
  })

const discover = (url: string) => Http.post(url, Rq.rpc("probe", "server/discover", Rq.modern()), Rq.modernHeaders("server/discover"))

const carriesModernError = (r: Http.HttpReply): boolean => {
  const m = r.messages[0]
  return m !== undefined && "error" in m && ErrorCode.isModernErrorCode(m.error.code)
}

describe("era-server over Streamable HTTP, legacy", () => {
  const plainRefusals = [
    ["legacy-32601", 404],
    ["legacy-banner", 404],
    ["legacy-32602", 400],
    ["legacy-silent", 400],
    ["legacy-exit", 404]
  ] as const
  for (const [mode, status] of plainRefusals) {
    it.scoped(`${mode} answers a modern discover with a plain ${status}, then serves initialize`, () =>
      Effect.gen(function*() {
        const { url } = yield* start(mode)
        const probe = yield* discover(url)
        assert.strictEqual(probe.status, status)
        assert.isFalse(carriesModernError(probe), `must not look modern: ${probe.body}`)
        const headers = yield* openSession(url)
        const hello = yield* Http.post(url, Rq.rpc("h", "tools/call", Rq.call("hello")), headers)
        assert.strictEqual(textOf(resultOf(hello.messages[0])), `hello from ${mode} over legacy 2025-11-25`)
      }))
  }

  it.scoped("slow-discover answers initialize while a discover is still pending", () =>
    Effect.gen(function*() {
      const { url } = yield* start("slow-discover", "--discover-delay", "1000")
      const order: Array<string> = []
      const probe = yield* Effect.fork(discover(url).pipe(Effect.tap(() => Effect.sync(() => order.push("discover")))))
      yield* openSession(url)
      order.push("initialize")
      const d = yield* probe.await.pipe(Effect.flatten)
      assert.strictEqual(d.status, 200)
      assert.deepStrictEqual(order, ["initialize", "discover"])
    }))

  it.scoped("a legacy session refuses a header naming a version it does not serve", () =>
    Effect.gen(function*() {
      const { url } = yield* start("legacy-32601", "--versions", "2025-06-18,2025-11-25")
      const headers = yield* openSession(url)
      const r = yield* Http.post(url, Rq.rpc(1, "tools/list"), { ...headers, "mcp-protocol-version": "2025-03-26" })
      assert.strictEqual(r.status, 400)
      assert.isFalse(carriesModernError(r))
    }))
})

/** One dual server shared by tests whose sessions are their own and never meet. */
class Dual extends Context.Tag("era-test/Dual")<Dual, HttpFixture>() {}
const DualLive = Layer.scoped(Dual, start("dual"))

layer(DualLive)("era-server over Streamable HTTP, legacy sessions on a shared dual server", (it) => {
  it.effect("a session id is required after initialize, unknown ones are 404, DELETE ends it", () =>
    Effect.gen(function*() {
      const { url } = yield* Dual
      const headers = yield* openSession(url)
      const list = yield* Http.post(url, Rq.rpc(2, "tools/list"), headers)
      assert.strictEqual(list.contentType, "application/json")
      assert.isUndefined(resultOf(list.messages[0])["resultType"])
      assert.strictEqual((yield* Http.post(url, Rq.rpc(3, "tools/list"))).status, 400, "no session")
      const stranger = { ...headers, "mcp-session-id": "not-a-session" }
      assert.strictEqual((yield* Http.post(url, Rq.rpc(4, "tools/list"), stranger)).status, 404)
      assert.strictEqual((yield* Http.send(url, { method: "DELETE", headers })).status, 204)
      assert.strictEqual((yield* Http.post(url, Rq.rpc(5, "tools/list"), headers)).status, 404, "ended sessions are gone")
    }))

  it.scoped("GET opens one SSE stream per session, and DELETE closes it", () =>
    Effect.gen(function*() {
      const { url } = yield* Dual
      assert.strictEqual((yield* Http.send(url, { method: "GET" })).status, 405, "no session, no stream")
      const headers = yield* openSession(url)
      const stream = yield* Http.stream(url, { method: "GET", headers })
      assert.strictEqual(stream.status, 200)
      assert.strictEqual(stream.headers.get("content-type"), "text/event-stream")
      assert.strictEqual((yield* Http.send(url, { method: "GET", headers })).status, 409)
      assert.strictEqual((yield* Http.send(url, { method: "DELETE", headers })).status, 204)
      assert.isUndefined(yield* stream.next, "the stream ends with the session")
    }))

  it.scoped("ask_name asks on the POST's SSE stream and takes the answer as a POSTed response", () =>
    Effect.gen(function*() {
      const { url } = yield* Dual
      const headers = yield* openSession(url, { elicitation: {} })
      const call = yield* Http.stream(url, { body: Rq.rpc("ask", "tools/call", Rq.call("ask_name")), headers })
      assert.strictEqual(call.headers.get("content-type"), "text/event-stream")
      const question = yield* call.nextMessage
      if (!("method" in question) || question.method !== "elicitation/create" || !("id" in question)) {
        throw new Error(`expected elicitation/create, got ${JSON.stringify(question)}`)
      }
      assert.isTrue(isObject(question.params) && question.params["message"] === "What is your name?")
      const answer = { jsonrpc: "2.0", id: question.id, result: { action: "accept", content: { name: "Ada" } } }
      assert.strictEqual((yield* Http.post(url, answer, headers)).status, 202)
      assert.strictEqual(textOf(resultOf(yield* call.nextMessage)), "hello, Ada")
      assert.isUndefined(yield* call.next, "the stream ends after the response")
      const stray = { jsonrpc: "2.0", id: "nothing-asked", result: { action: "accept" } }
      assert.strictEqual((yield* Http.post(url, stray, headers)).status, 400)
    }))

  it.scoped("notifications/cancelled on the session withholds the reply: an empty event stream", () =>
    Effect.gen(function*() {
      const { url } = yield* Dual
      const headers = yield* openSession(url)
      const call = yield* Http.stream(url, { body: Rq.rpc("slow", "tools/call", Rq.call("slow", { ms: 60_000 })), headers })
      assert.strictEqual(call.status, 200)
      const cancel = Rq.notification("notifications/cancelled", { requestId: "slow", reason: "test" })
      assert.strictEqual((yield* Http.post(url, cancel, headers)).status, 202)
      assert.isUndefined(yield* call.next)
    }))

  it.effect("dual serves a modern discover and a legacy session side by side", () =>
    Effect.gen(function*() {
      const { url } = yield* Dual
      const d = yield* discover(url)
      assert.strictEqual(d.status, 200)
      assert.deepStrictEqual(resultOf(d.messages[0])["supportedVersions"], ["2026-07-28"])
      const headers = yield* openSession(url)
      const hello = yield* Http.post(url, Rq.rpc("h", "tools/call", Rq.call("hello")), headers)
      assert.strictEqual(textOf(resultOf(hello.messages[0])), "hello from dual over legacy 2025-11-25")
      const modern = yield* Http.post(
        url,
        Rq.rpc("m", "tools/call", Rq.modern(Rq.call("hello"))),
        { ...Rq.modernHeaders("tools/call", "hello"), "mcp-session-id": headers["mcp-session-id"] }
      )
      assert.strictEqual(textOf(resultOf(modern.messages[0])), "hello from dual over modern 2026-07-28")
    }))
})
