/**
 * MRTR through the whole in-process path: Server → GatewayBackend → Gateway → Pool → the era
 * fixture's `ask_name`, which a modern session answers with `input_required` and a legacy one
 * with an `elicitation/create` request.
 */
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import type { Question, QuestionChannel } from "@mcpx-fx/server/Backend"
import { RequestState } from "@mcpx-fx/server/RequestState"
import * as Server from "@mcpx-fx/server/Server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as GatewayBackend from "../src/GatewayBackend.js"
import { era, layer as gateway } from "@mcpx-fx/testing/gateway/TestGateway"
import * as TestTasks from "@mcpx-fx/testing/server/TestTasks"

const key = new Uint8Array(32).fill(9)

/** The host-facing Server over the in-process gateway. */
const serverFor = (mcpServers: Record<string, unknown>) =>
  Server.Server.layer.pipe(
    Layer.provide(TestTasks.layer),
    Layer.provide(GatewayBackend.layer),
    Layer.provide(gateway(mcpServers)),
    Layer.provideMerge(RequestState.layerWithKey(key))
  )

const modernMeta = (capabilities: JsonObject = { elicitation: {} }): JsonObject => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": capabilities,
  "io.modelcontextprotocol/clientInfo": { name: "mrtr-test", version: "1.0.0" }
})

const askName = (extra: JsonObject = {}, id = 1) => JsonRpc.request(id, "tools/call", { name: "alpha__ask_name", arguments: {}, ...extra, _meta: modernMeta() })

const accept = (name: string) => ({ name: { action: "accept", content: { name } } })

/** Sends one message on a fresh connection (a modern request needs none, which is the point). */
const send = (message: JsonRpc.Message, context: Partial<Server.RequestContext> = {}) =>
  Effect.gen(function*() {
    const server = yield* Server.Server
    const connection = yield* Server.makeConnection(`c-${String(Math.random()).slice(2)}`)
    return yield* server.handle(message, { connection, ...context })
  })

const resultOf = (r: JsonRpc.Response | undefined): JsonObject => {
  if (r === undefined || !JsonRpc.isSuccess(r)) throw new Error(`expected a result, got ${JSON.stringify(r)}`)
  return r.result
}
const errorOf = (r: JsonRpc.Response | undefined): JsonRpc.ErrorObject => {
  if (r === undefined || !JsonRpc.isErrorResponse(r)) throw new Error(`expected an error, got ${JSON.stringify(r)}`)
  return r.error
}
const textOf = (result: JsonObject): string => JSON.stringify(result.content)

/** The first round: an `input_required` whose state is mcpx-fx's own. */
const firstRound = Effect.gen(function*() {
  const first = resultOf(yield* send(askName()))
  assert.strictEqual(first.resultType, "input_required")
  assert.deepStrictEqual(Object.keys(first.inputRequests as JsonObject), ["name"])
  assert.isString(first.requestState)
  return String(first.requestState)
})

/** A legacy connection at 2025-11-25 whose host answers elicitations with `name` and records them. */
const legacyHost = (name: string) =>
  Effect.gen(function*() {
    const server = yield* Server.Server
    const connection = yield* Server.makeConnection("legacy-host")
    const asked: Array<Question> = []
    const questions: QuestionChannel = (q) =>
      Effect.sync(() => {
        asked.push(q)
        return { action: "accept", content: { name } }
      })
    const init = JsonRpc.request(0, "initialize", {
      protocolVersion: "2025-11-25",
      capabilities: { elicitation: {} },
      clientInfo: { name: "legacy-host", version: "1.0.0" }
    })
    resultOf(yield* server.handle(init, { connection }))
    yield* server.handle(JsonRpc.notification("notifications/initialized"), { connection })
    const call = (tool: string, id: number) => server.handle(JsonRpc.request(id, "tools/call", { name: tool, arguments: {} }), { connection, questions })
    return { call, asked }
  })

describe("GatewayBackend MRTR", () => {
  it.scopedLive("2026-07-28/mrtr/upstream input_required reaches the host wrapped and the retry's answers go upstream", () =>
    Effect.gen(function*() {
      const state = yield* firstRound
      // The upstream's own state travels inside mcpx-fx's, signed and bound to this request.
      const opened = yield* (yield* RequestState).open(state, {
        method: "tools/call",
        params: { name: "alpha__ask_name", arguments: {} }
      })
      assert.isString(opened.inner)
      assert.notStrictEqual(opened.inner, state)
      const upstreamBody = JSON.parse(Buffer.from(String(opened.inner).split(".")[0]!, "base64url").toString("utf8"))
      assert.deepStrictEqual(upstreamBody, { tool: "ask_name", round: 1 })

      // The retry may arrive on any connection: nothing is kept per connection or session.
      const done = resultOf(yield* send(askName({ inputResponses: accept("Ann"), requestState: state }, 2)))
      assert.strictEqual(done.resultType, "complete")
      assert.include(textOf(done), "hello, Ann")

      // A retry that lacks the answer is asked again, with a fresh state of mcpx-fx's own.
      const again = resultOf(yield* send(askName({ inputResponses: {}, requestState: state }, 3)))
      assert.strictEqual(again.resultType, "input_required")
      assert.notStrictEqual(again.requestState, state)
    }).pipe(Effect.provide(serverFor({ alpha: era("dual") }))))

  // An excluded tool is as unknown to a retry as to a first call: inputResponses without
  // mcpx-fx's state once ran it, and a signed state bound to its name cannot route around the filter.
  it.scopedLive("2026-07-28/mrtr/a retry reaches no tool the filters hide, signed or not", () =>
    Effect.gen(function*() {
      const echo = (extra: JsonObject, id: number) =>
        JsonRpc.request(id, "tools/call", { name: "odd__echo", arguments: { message: "hi" }, ...extra, _meta: modernMeta() })
      const plain = errorOf(yield* send(echo({}, 1)))
      assert.strictEqual(plain.code, -32602)
      assert.include(plain.message, "Unknown tool")
      const unsigned = errorOf(yield* send(echo({ inputResponses: {} }, 2)))
      assert.strictEqual(unsigned.code, -32602)
      assert.include(unsigned.message, "Unknown tool")
      const sealed = yield* (yield* RequestState).seal({
        method: "tools/call",
        params: { name: "odd__echo", arguments: { message: "hi" } },
        inner: "made-up"
      })
      const signed = errorOf(yield* send(echo({ inputResponses: {}, requestState: sealed }, 3)))
      assert.strictEqual(signed.code, -32602)
      assert.include(signed.message, "Unknown tool")
      // The tool the filter lets through still answers, first call or unsigned "retry".
      assert.include(
        textOf(resultOf(
          yield* send(JsonRpc.request(4, "tools/call", {
            name: "odd__hello",
            arguments: {},
            inputResponses: {},
            _meta: modernMeta()
          }))
        )),
        "hello from dual"
      )
    }).pipe(Effect.provide(serverFor({ odd: era("dual", { excludeTools: ["echo"] }) }))))

  it.scopedLive("2026-07-28/mrtr/requestState tampered is refused", () =>
    Effect.gen(function*() {
      const state = yield* firstRound
      const at = 10
      const tampered = state.slice(0, at) + (state[at] === "Q" ? "R" : "Q") + state.slice(at + 1)
      const e = errorOf(yield* send(askName({ inputResponses: accept("Ann"), requestState: tampered }, 2)))
      assert.strictEqual(e.code, -32602)
      assert.deepStrictEqual(e.data, { reason: "tampered" })
      // The upstream's raw state is not mcpx-fx's either.
      const opened = yield* (yield* RequestState).open(state, { method: "tools/call", params: { name: "alpha__ask_name", arguments: {} } })
      const raw = errorOf(yield* send(askName({ inputResponses: accept("Ann"), requestState: String(opened.inner) }, 3)))
      assert.strictEqual(raw.code, -32602)
    }).pipe(Effect.provide(serverFor({ alpha: era("dual") }))))

  it.scopedLive("2026-07-28/mrtr/requestState replayed on other arguments is refused", () =>
    Effect.gen(function*() {
      const state = yield* firstRound
      const other = errorOf(yield* send(askName({ arguments: { who: "someone else" }, inputResponses: accept("Ann"), requestState: state }, 2)))
      assert.strictEqual(other.code, -32602)
      assert.deepStrictEqual(other.data, { reason: "other-params" })
      const tool = errorOf(yield* send(askName({ name: "alpha__hello", inputResponses: accept("Ann"), requestState: state }, 3)))
      assert.deepStrictEqual(tool.data, { reason: "other-params" })
    }).pipe(Effect.provide(serverFor({ alpha: era("dual") }))))

  it.scoped("2026-07-28/mrtr/requestState expired is refused", () =>
    Effect.gen(function*() {
      const state = yield* firstRound
      yield* TestClock.adjust("10 minutes")
      const e = errorOf(yield* send(askName({ inputResponses: accept("Ann"), requestState: state }, 2)))
      assert.strictEqual(e.code, -32602)
      assert.deepStrictEqual(e.data, { reason: "expired" })
    }).pipe(Effect.provide(serverFor({ alpha: era("dual") }))))

  it.scopedLive("2026-07-28/mrtr/with protocol follow each host era meets an upstream session of its own era", () =>
    Effect.gen(function*() {
      const modern = resultOf(yield* send(JsonRpc.request(1, "tools/call", { name: "alpha__hello", arguments: {}, _meta: modernMeta() })))
      assert.include(textOf(modern), "over modern")
      const legacy = yield* legacyHost("Lee")
      assert.include(textOf(resultOf(yield* legacy.call("alpha__hello", 1))), "over legacy")

      // The modern host is asked by input_required and retries; the legacy host by a request.
      const state = yield* firstRound
      const done = resultOf(yield* send(askName({ inputResponses: accept("Mo"), requestState: state }, 2)))
      assert.include(textOf(done), "hello, Mo")
      assert.include(textOf(resultOf(yield* legacy.call("alpha__ask_name", 2))), "hello, Lee")
      assert.deepStrictEqual(legacy.asked.map((q) => q.method), ["elicitation/create"])
    }).pipe(Effect.provide(serverFor({ alpha: era("dual", { protocol: "follow" }) }))))

  it.scopedLive("2025-11-25/mrtr/a modern upstream's input_required is asked of a legacy host and answered upstream", () =>
    Effect.gen(function*() {
      const legacy = yield* legacyHost("Lea")
      // Without follow the legacy host shares the server's modern session.
      assert.include(textOf(resultOf(yield* legacy.call("alpha__hello", 1))), "over modern")
      const r = resultOf(yield* legacy.call("alpha__ask_name", 2))
      assert.include(textOf(r), "hello, Lea")
      assert.isUndefined(r.resultType)
      assert.deepStrictEqual(legacy.asked.map((q) => q.method), ["elicitation/create"])
    }).pipe(Effect.provide(serverFor({ alpha: era("dual") }))))
})
