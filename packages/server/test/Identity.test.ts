import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { QuestionRefused } from "../src/Backend.js"
import * as Server from "../src/Server.js"
import { C, I, legacySession, meta, req, resultOf, V, withServer } from "./support.js"

describe("caller identity", () => {
  it.effect("2026-07-28/identity/dev-mcpx-session-names-the-callers-scope", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(req("tools/call", { name: "echo", _meta: meta({ [Server.SessionKey]: "s-1" }) })))
        assert.strictEqual(t.received[0]?.caller.sessionId, "s-1")
      })
    ))

  it.effect("2026-07-28/identity/opencode-session-id-names-the-callers-scope", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(req("tools/call", { name: "echo", _meta: meta({ [Server.OpencodeSessionKey]: "oc-9" }) })))
        assert.strictEqual(t.received[0]?.caller.sessionId, "oc-9")
      })
    ))

  it.effect("2026-07-28/identity/dev-mcpx-session-wins-over-a-host-session-id", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(req("tools/list", { _meta: meta({ [Server.OpencodeSessionKey]: "oc", [Server.SessionKey]: "mine" }) })))
        assert.strictEqual(t.received[0]?.caller.sessionId, "mine")
      })
    ))

  it.effect("2026-07-28/identity/a-request-naming-no-session-is-its-own-call-scope", () =>
    legacySession("2025-11-25", (t) =>
      Effect.gen(function*() {
        // Even on a connection that has a legacy session, a modern request never inherits it.
        resultOf(yield* t.handle(req("tools/list", { _meta: meta() })))
        assert.isUndefined(t.received[0]?.caller.sessionId)
        assert.isUndefined(t.received[0]?.caller.questions)
      })))

  it.effect("2025-11-25/identity/legacy-caller-falls-back-to-the-connections-session-id", () =>
    legacySession("2025-11-25", (t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(req("tools/list")))
        assert.strictEqual(t.received[0]?.caller.sessionId, "conn-1")
      })))

  it.effect("2024-11-05/identity/legacy-caller-naming-a-session-uses-it", () =>
    legacySession("2024-11-05", (t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(req("tools/call", { name: "echo", _meta: { [Server.SessionKey]: "named" } })))
        assert.strictEqual(t.received[0]?.caller.sessionId, "named")
      })))

  it.effect("2025-11-25/identity/legacy-caller-gets-the-transports-question-channel", () =>
    legacySession("2025-11-25", (t) =>
      Effect.gen(function*() {
        const questions = () => Effect.fail(new QuestionRefused({ code: -32601, message: "no" }))
        resultOf(yield* t.handle(req("tools/call", { name: "echo" }), { questions }))
        assert.strictEqual(t.received[0]?.caller.questions, questions)
      })))

  it.effect("2026-07-28/identity/client-info-comes-from-the-request", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(req("tools/list", { _meta: meta() })))
        assert.deepStrictEqual(t.received[0]?.caller.clientInfo, { name: "test-client", version: "1.0.0" })
      })
    ))
})

describe("forwarded _meta", () => {
  it.effect("2026-07-28/meta/protocol-keys-stay-on-this-hop-the-rest-travels-on", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(req("tools/call", { name: "echo", _meta: meta({ progressToken: 4, [Server.SessionKey]: "s", "com.example/x": 1 }) })))
        assert.deepStrictEqual(t.received[0]?.meta, { progressToken: 4, [Server.SessionKey]: "s", "com.example/x": 1 })
      })
    ))

  it.effect("2026-07-28/meta/nothing-forwarded-when-only-protocol-keys-were-sent", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(req("tools/call", { name: "echo", _meta: { [V]: "2026-07-28", [C]: {}, [I]: { name: "c", version: "1" } } })))
        assert.isUndefined(t.received[0]?.meta)
      })
    ))

  it.effect("2025-06-18/meta/legacy-progress-token-travels-on", () =>
    legacySession("2025-06-18", (t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(req("prompts/get", { name: "greet", _meta: { progressToken: "p" } })))
        assert.deepStrictEqual(t.received[0]?.meta, { progressToken: "p" })
      })))
})
