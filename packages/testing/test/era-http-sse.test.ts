import { assert, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { type HttpFixture, startHttpFixture } from "../src/Fixtures.js"
import * as Http from "../src/era/client/HttpPeer.js"
import { errorOf, resultOf, textOf } from "../src/era/client/Replies.js"
import * as Rq from "../src/era/client/Requests.js"
import type { PeerError } from "../src/era/client/StdioPeer.js"
import type { Message } from "../src/era/Wire.js"

/** Opens the 2024-11-05 SSE stream at `path` and resolves the endpoint it names. */
const connect = (url: string, path: string) =>
  Effect.gen(function*() {
    const stream = yield* Http.stream(new URL(path, url).href, { method: "GET" })
    assert.strictEqual(stream.status, 200)
    const first = yield* stream.next
    assert.strictEqual(first?.event, "endpoint", "the first event names the POST endpoint")
    return { stream, endpoint: new URL(first?.data ?? "", url).href }
  })

/** One server: every GET opens a session of its own, so the tests share it without meeting. */
class LegacySse extends Context.Tag("era-test/LegacySse")<LegacySse, HttpFixture>() {}
const LegacySseLive = Layer.scoped(LegacySse, startHttpFixture("era-server", ["--mode", "legacy-sse"]))

layer(LegacySseLive)("era-server legacy-sse: the deprecated 2024-11-05 HTTP+SSE transport", (it) => {
  it.effect("POST to /mcp is 405, which sends a client to the GET fallback", () =>
    Effect.gen(function*() {
      const { url } = yield* LegacySse
      const probe = yield* Http.post(url, Rq.rpc("probe", "server/discover", Rq.modern()), Rq.modernHeaders("server/discover"))
      assert.strictEqual(probe.status, 405)
      assert.lengthOf(probe.messages, 0)
    }))

  for (const path of ["/sse", "/mcp"]) {
    it.scoped(`GET ${path} opens the stream; requests POSTed to the endpoint are answered as message events`, () =>
      Effect.gen(function*() {
        const { url } = yield* LegacySse
        const { stream, endpoint } = yield* connect(url, path)
        const postOk = (m: unknown) => Http.post(endpoint, m).pipe(Effect.tap((r) => assert.strictEqual(r.status, 202)))
        const answer = (m: unknown): Effect.Effect<Message, PeerError> => postOk(m).pipe(Effect.zipRight(stream.nextMessage))
        // Before initialize it behaves like legacy-32601.
        assert.strictEqual(errorOf(yield* answer(Rq.rpc(1, "server/discover", Rq.modern()))).code, ErrorCode.MethodNotFound)
        const init = resultOf(yield* answer(Rq.rpc(2, "initialize", Rq.initialize("2024-11-05"))))
        assert.strictEqual(init["protocolVersion"], "2024-11-05")
        yield* postOk(Rq.notification("notifications/initialized"))
        const hello = yield* answer(Rq.rpc(3, "tools/call", Rq.call("hello")))
        assert.strictEqual(textOf(resultOf(hello)), "hello from legacy-sse over legacy 2024-11-05")
      }))
  }

  it.scoped("ask_name's question and answer travel over the stream and the endpoint", () =>
    Effect.gen(function*() {
      const { url } = yield* LegacySse
      const { stream, endpoint } = yield* connect(url, "/sse")
      yield* Http.post(endpoint, Rq.rpc(1, "initialize", Rq.initialize("2025-06-18", { elicitation: {} })))
      resultOf(yield* stream.nextMessage)
      yield* Http.post(endpoint, Rq.rpc("ask", "tools/call", Rq.call("ask_name")))
      const question = yield* stream.nextMessage
      if (!("method" in question) || question.method !== "elicitation/create" || !("id" in question)) {
        throw new Error(`expected elicitation/create, got ${JSON.stringify(question)}`)
      }
      yield* Http.post(endpoint, { jsonrpc: "2.0", id: question.id, result: { action: "decline" } })
      assert.strictEqual(textOf(resultOf(yield* stream.nextMessage)), "no name (decline)")
    }))

  it.effect("an unknown endpoint session is 404", () =>
    Effect.gen(function*() {
      const { url } = yield* LegacySse
      const r = yield* Http.post(new URL("/messages?sessionId=nope", url).href, Rq.rpc(1, "ping"))
      assert.strictEqual(r.status, 404)
    }))
})
