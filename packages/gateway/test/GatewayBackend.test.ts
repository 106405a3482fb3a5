import { assert, describe, it } from "@effect/vitest"
import * as Backend from "@mcpx-fx/server/Backend"
import { PoolError } from "@mcpx-fx/upstream/Pool"
import { UpstreamRpcError } from "@mcpx-fx/upstream/Session"
import { TransportClosed } from "@mcpx-fx/upstream/Transport"
import * as Effect from "effect/Effect"
import { CallTimedOut, UnknownName } from "../src/Gateway.js"
import { retryParams, toBackendError, toGatewayCaller } from "../src/GatewayBackend.js"

describe("GatewayBackend", () => {
  it("gateway/backend/errors-keep-their-kind-for-the-server", () => {
    const unknown = toBackendError(new UnknownName({ kind: "tool", name: "a__x", suggestions: ["a__y"] }))
    assert.instanceOf(unknown, Backend.UnknownName)
    assert.deepStrictEqual(unknown._tag === "UnknownName" && unknown.suggestions, ["a__y"])
    assert.instanceOf(toBackendError(new CallTimedOut({ server: "a", method: "tools/call", timeoutMs: 5 })), Backend.CallTimedOut)
    const rpc = toBackendError(
      new UpstreamRpcError({ server: "a", method: "tools/call", code: -32000, rpcMessage: "nope", data: { why: 1 } })
    )
    assert.instanceOf(rpc, Backend.UpstreamError)
    assert.deepStrictEqual(rpc._tag === "UpstreamError" && [rpc.code, rpc.rpcMessage, rpc.data], [-32000, "nope", { why: 1 }])
    const pool = toBackendError(new PoolError({ server: "a", lane: "modern", reason: "start-failed", detail: "missing API key" }))
    assert.instanceOf(pool, Backend.BackendUnavailable)
    assert.include(pool.message, "missing API key")
    const closed = toBackendError(new TransportClosed({ reason: "the process exited" }))
    assert.instanceOf(closed, Backend.BackendUnavailable)
    assert.include(closed.message, "the process exited")
  })

  it.effect("gateway/backend/caller-identity-and-questions-reach-the-upstream-side", () =>
    Effect.gen(function*() {
      const caller = toGatewayCaller({
        revision: "2025-11-25",
        era: "legacy",
        clientCapabilities: { elicitation: {} },
        sessionId: "s1",
        questions: (q) =>
          q.method === "roots/list"
            ? Effect.succeed({ roots: [] })
            : Effect.fail(new Backend.QuestionRefused({ code: -32601, message: "no" }))
      })
      assert.strictEqual(caller.revision, "2025-11-25")
      assert.strictEqual(caller.sessionId, "s1")
      assert.deepStrictEqual(caller.clientCapabilities, { elicitation: {} })
      const ask = caller.questions
      assert.isDefined(ask)
      if (ask === undefined) return
      assert.deepStrictEqual(yield* ask({ method: "ping", params: {} }), {})
      assert.deepStrictEqual(yield* ask({ method: "roots/list", params: {} }), { roots: [] })
      const refused = yield* Effect.flip(ask({ method: "sampling/createMessage", params: {} }))
      assert.strictEqual(refused.code, -32601)
      assert.isUndefined(toGatewayCaller({ revision: "2026-07-28", era: "modern", clientCapabilities: {} }).questions)
    }))

  it("2026-07-28/mrtr/a modern host gets input_required back and a legacy host is asked", () => {
    assert.strictEqual(toGatewayCaller({ revision: "2026-07-28", era: "modern", clientCapabilities: {} }).inputRequired, "return")
    assert.strictEqual(toGatewayCaller({ revision: "2025-06-18", era: "legacy", clientCapabilities: {} }).inputRequired, "resolve")
  })

  it("2026-07-28/mrtr/a retry sends the host's answers and the upstream's own state", () => {
    const inputResponses = { name: { action: "decline" } }
    assert.deepStrictEqual(retryParams({ inputResponses, requestState: "upstream" }), { inputResponses, requestState: "upstream" })
    assert.deepStrictEqual(retryParams({ inputResponses }), { inputResponses })
    assert.deepStrictEqual(retryParams(undefined), {})
  })
})
