import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { errorOf, objectAt, resultOf, textOf } from "../src/era/client/Replies.js"
import * as Rq from "../src/era/client/Requests.js"
import { spawnStdio, type StdioPeer } from "../src/era/client/StdioPeer.js"
import { isObject, type Message } from "../src/era/Wire.js"

const legacySession = (capabilities = {}, version = "2025-11-25") =>
  Effect.gen(function*() {
    const peer = yield* spawnStdio("era-server", ["--mode", "dual"])
    resultOf(yield* peer.request("initialize", Rq.initialize(version, capabilities)))
    yield* peer.send(Rq.notification("notifications/initialized"))
    return peer
  })

const callTool = (peer: StdioPeer, name: string, args = {}) => peer.request("tools/call", Rq.call(name, args))

const isElicitation = (m: Message): boolean => "method" in m && m.method === "elicitation/create" && "id" in m

describe("era-server tools over a legacy stdio session", () => {
  it.scoped("echo returns its message, boom is a tool error, an unknown tool is -32602", () =>
    Effect.gen(function*() {
      const peer = yield* legacySession()
      assert.strictEqual(textOf(resultOf(yield* callTool(peer, "echo", { message: "line one\nline two" }))), "line one\nline two")
      const boom = resultOf(yield* callTool(peer, "boom"))
      assert.isTrue(boom["isError"])
      assert.strictEqual(errorOf(yield* callTool(peer, "nope")).code, ErrorCode.InvalidParams)
    }))

  it.scoped("structured carries structuredContent, a resource_link and an audio block", () =>
    Effect.gen(function*() {
      const peer = yield* legacySession()
      const result = resultOf(yield* callTool(peer, "structured"))
      assert.deepStrictEqual(objectAt(result, "structuredContent"), {
        mode: "dual",
        era: "legacy",
        version: "2025-11-25",
        items: [1, 2, 3]
      })
      const types = (result["content"] as ReadonlyArray<{ type: string }>).map((c) => c.type)
      assert.deepStrictEqual(types, ["text", "resource_link", "audio"])
      const link = (result["content"] as ReadonlyArray<{ uri?: string }>)[1]
      const read = resultOf(yield* peer.request("resources/read", { uri: link?.uri ?? "" }))
      assert.lengthOf(read["contents"] as ReadonlyArray<unknown>, 1)
      assert.strictEqual(errorOf(yield* peer.request("resources/read", { uri: "era://missing" })).code, ErrorCode.ResourceNotFound)
    }))

  it.scoped("slow stops on notifications/cancelled and never answers", () =>
    Effect.gen(function*() {
      const peer = yield* legacySession()
      yield* peer.send(Rq.rpc("doomed", "tools/call", Rq.call("slow", { ms: 150 })))
      yield* peer.send(Rq.notification("notifications/cancelled", { requestId: "doomed", reason: "test" }))
      // A later, longer call answers; had the first kept running its reply would have come first.
      assert.strictEqual(textOf(resultOf(yield* callTool(peer, "slow", { ms: 300 }))), "slept 300ms")
      assert.isFalse(peer.frames().some((m) => "id" in m && m.id === "doomed"))
    }))

  it.scoped("ask_name sends elicitation/create and answers with the accepted name", () =>
    Effect.gen(function*() {
      const peer = yield* legacySession({ elicitation: {} })
      yield* peer.send(Rq.rpc("ask", "tools/call", Rq.call("ask_name")))
      const question = yield* peer.next("elicitation/create", isElicitation)
      assert.isTrue("params" in question && isObject(question.params) && question.params["mode"] === "form")
      if (!("id" in question)) throw new Error("elicitation/create must be a request")
      yield* peer.send({ jsonrpc: "2.0", id: question.id, result: { action: "accept", content: { name: "Ada" } } })
      assert.strictEqual(textOf(resultOf(yield* peer.reply("ask"))), "hello, Ada")
    }))

  it.scoped("ask_name reports a declined question, and omits mode before 2025-11-25", () =>
    Effect.gen(function*() {
      const peer = yield* legacySession({ elicitation: {} }, "2025-06-18")
      yield* peer.send(Rq.rpc("ask", "tools/call", Rq.call("ask_name")))
      const question = yield* peer.next("elicitation/create", isElicitation)
      if (!("id" in question) || !("params" in question)) throw new Error("elicitation/create must be a request")
      assert.isUndefined(question.params?.["mode"])
      yield* peer.send({ jsonrpc: "2.0", id: question.id, result: { action: "decline" } })
      assert.strictEqual(textOf(resultOf(yield* peer.reply("ask"))), "no name (decline)")
    }))

  it.scoped("ask_name does not ask a client that declared no elicitation", () =>
    Effect.gen(function*() {
      const peer = yield* legacySession()
      const result = resultOf(yield* callTool(peer, "ask_name"))
      assert.isTrue(result["isError"])
      assert.strictEqual(textOf(result), "no name (elicitation not declared)")
      assert.isFalse(peer.frames().some(isElicitation))
    }))
})
