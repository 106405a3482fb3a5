import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Backend from "@mcpx-fx/server/Backend"
import { PoolError } from "@mcpx-fx/upstream/pool/PoolEvents"
import { UpstreamRpcError } from "@mcpx-fx/upstream/session/SessionErrors"
import { TransportClosed } from "@mcpx-fx/upstream/transport/Transport"
import * as Effect from "effect/Effect"
import { CallTimedOut, UnknownName } from "../src/GatewayModel.js"
import { fitQuestion, retryParams, toBackendError, toGatewayCaller } from "../src/GatewayBackend.js"

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
        clientCapabilities: { elicitation: {}, roots: {}, sampling: {} },
        sessionId: "s1",
        questions: (q) =>
          q.method === "roots/list"
            ? Effect.succeed({ roots: [] })
            : Effect.fail(new Backend.QuestionRefused({ code: -32601, message: "no" }))
      })
      assert.strictEqual(caller.revision, "2025-11-25")
      assert.strictEqual(caller.sessionId, "s1")
      assert.deepStrictEqual(caller.clientCapabilities, { elicitation: {}, roots: {}, sampling: {} })
      const ask = caller.questions
      assert.isDefined(ask)
      if (ask === undefined) return
      assert.deepStrictEqual(yield* ask({ method: "ping", params: {} }), {})
      assert.deepStrictEqual(yield* ask({ method: "roots/list", params: {} }), { roots: [] })
      const refused = yield* Effect.flip(ask({ method: "sampling/createMessage", params: {} }))
      assert.strictEqual(refused.code, -32601)
      assert.isUndefined(toGatewayCaller({ revision: "2026-07-28", era: "modern", clientCapabilities: {} }).questions)
    }))

  it("2025-11-25/questions/an elicitation the host did not declare is cancelled on its behalf", () => {
    const q = { method: "elicitation/create", params: { mode: "form", message: "name?", requestedSchema: {} } }
    const fit = (revision: "2025-03-26" | "2025-06-18" | "2025-11-25", clientCapabilities: JsonObject) =>
      fitQuestion({ revision, era: "legacy", clientCapabilities }, q)
    assert.deepStrictEqual(fit("2025-11-25", {}), { _tag: "Answer", result: { action: "cancel" } })
    assert.deepStrictEqual(fit("2025-11-25", { elicitation: {} }), { _tag: "Ask", question: q })
  })

  it("2025-03-26/questions/a revision without elicitation is never asked one, whatever it declared", () => {
    const q = { method: "elicitation/create", params: { message: "name?", requestedSchema: {} } }
    assert.deepStrictEqual(
      fitQuestion({ revision: "2025-03-26", era: "legacy", clientCapabilities: { elicitation: {} } }, q),
      { _tag: "Answer", result: { action: "cancel" } }
    )
  })

  it("2025-06-18/questions/an elicitation loses the mode 2025-06-18 does not have; a URL one is cancelled", () => {
    const caller = { revision: "2025-06-18" as const, era: "legacy" as const, clientCapabilities: { elicitation: {} } }
    const form = fitQuestion(caller, { method: "elicitation/create", params: { mode: "form", message: "m", requestedSchema: {} } })
    assert.deepStrictEqual(form, { _tag: "Ask", question: { method: "elicitation/create", params: { message: "m", requestedSchema: {} } } })
    const url = fitQuestion(caller, { method: "elicitation/create", params: { mode: "url", message: "m", url: "https://x", elicitationId: "e" } })
    assert.deepStrictEqual(url, { _tag: "Answer", result: { action: "cancel" } })
  })

  it("2025-11-25/questions/sampling a host did not declare is refused with -32601; roots it did not declare are answered with none", () => {
    const caller = { revision: "2025-11-25" as const, era: "legacy" as const, clientCapabilities: {} }
    const fit = fitQuestion(caller, { method: "sampling/createMessage", params: {} })
    assert.strictEqual(fit._tag, "Refuse")
    if (fit._tag === "Refuse") assert.strictEqual(fit.code, -32601)
    assert.deepStrictEqual(fitQuestion(caller, { method: "roots/list", params: {} }), { _tag: "Answer", result: { roots: [] } })
  })

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
