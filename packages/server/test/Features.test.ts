import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Effect from "effect/Effect"
import * as Server from "../src/Server.js"
import { errorOf, legacySession, meta, Modern, req, resultOf, S, tool, withServer } from "./support.js"

const firstTool = (r: JsonObject): JsonObject => (r.tools as ReadonlyArray<JsonObject>)[0] ?? {}
const modern = (params: JsonObject = {}): JsonObject => ({ ...params, _meta: meta() })

describe("tools/list", () => {
  const expected: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
    ["2024-11-05", ["name", "description", "inputSchema"]],
    ["2025-03-26", ["name", "description", "inputSchema", "annotations"]],
    ["2025-06-18", ["name", "description", "inputSchema", "annotations", "title", "outputSchema"]],
    ["2025-11-25", ["name", "description", "inputSchema", "annotations", "title", "outputSchema", "icons", "execution"]]
  ]
  for (const [revision, keys] of expected) {
    it.effect(`${revision}/tools/list-carries-only-the-tool-fields-of-the-revision`, () =>
      legacySession(revision, (t) =>
        Effect.gen(function*() {
          const r = resultOf(yield* t.handle(req("tools/list")))
          assert.sameMembers(Object.keys(firstTool(r)), [...keys])
          assert.deepStrictEqual(Object.keys(r), ["tools"])
        })))
  }

  it.effect("2026-07-28/tools/list-has-the-modern-envelope", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(req("tools/list", modern())))
        assert.deepStrictEqual(firstTool(r), tool)
        assert.strictEqual(r.resultType, "complete")
        assert.strictEqual(r.ttlMs, 0)
        assert.strictEqual(r.cacheScope, "private")
        assert.deepStrictEqual(r._meta, { [S]: Server.DefaultOptions.serverInfo })
      })
    ))

  it.effect("2026-07-28/tools/list-caching-hints-come-from-the-options", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(req("tools/list", modern())))
        assert.strictEqual(r.ttlMs, 30_000)
        assert.strictEqual(r.cacheScope, "public")
      }), { server: { ...Server.DefaultOptions, listTtlMs: 30_000, listCacheScope: "public" } }))

  it.effect("2026-07-28/tools/listing-failures-reported-in-result-meta", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(req("tools/list", modern())))
        assert.strictEqual((r.tools as ReadonlyArray<unknown>).length, 2)
        assert.deepStrictEqual(r._meta, {
          [Server.ListingFailuresKey]: [{ server: "broken", message: "did not start" }],
          [S]: Server.DefaultOptions.serverInfo
        })
      }), { failingServer: "broken" }))

  it.effect("2025-11-25/tools/listing-failures-reported-in-result-meta", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(req("tools/list")))
        assert.deepStrictEqual(r._meta, { [Server.ListingFailuresKey]: [{ server: "broken", message: "did not start" }] })
      }), { failingServer: "broken" }))

  it.effect("2026-07-28/tools/a-cursor-mcpx-fx-never-issued-is-32602", () =>
    withServer((t) =>
      Effect.gen(function*() {
        assert.strictEqual(errorOf(yield* t.handle(req("tools/list", modern({ cursor: "x" })))).code, -32602)
      })
    ))
})

describe("tools/call", () => {
  const call = (params: JsonObject) => req("tools/call", params, "c")

  for (const revision of ["2024-11-05", "2025-03-26"] as const) {
    it.effect(`${revision}/tools/structured-content-becomes-text-before-2025-06-18`, () =>
      legacySession(revision, (t) =>
        Effect.gen(function*() {
          const r = resultOf(yield* t.handle(call({ name: "echo", arguments: { x: 1 } })))
          assert.isUndefined(r.structuredContent)
          assert.deepStrictEqual(r.content, [
            { type: "text", text: `echo {"x":1}` },
            { type: "text", text: `{"said":{"x":1}}` }
          ])
        })))
  }

  for (const revision of ["2025-06-18", "2025-11-25"] as const) {
    it.effect(`${revision}/tools/structured-content-kept-from-2025-06-18`, () =>
      legacySession(revision, (t) =>
        Effect.gen(function*() {
          const r = resultOf(yield* t.handle(call({ name: "echo", arguments: { x: 1 } })))
          assert.deepStrictEqual(r.structuredContent, { said: { x: 1 } })
          assert.isUndefined(r.resultType)
        })))
  }

  it.effect("2026-07-28/tools/call-result-has-resultType-and-no-caching-hints", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(call(modern({ name: "echo", arguments: { x: 1 } }))))
        assert.strictEqual(r.resultType, "complete")
        assert.isUndefined(r.ttlMs)
        assert.isUndefined(r.cacheScope)
        assert.deepStrictEqual(r.structuredContent, { said: { x: 1 } })
        assert.strictEqual(t.received[0]?.name, "echo")
        assert.deepStrictEqual(t.received[0]?.args, { x: 1 })
      })
    ))

  it.effect("2024-11-05/tools/audio-becomes-text", () =>
    legacySession("2024-11-05", (t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(call({ name: "audio" })))
        const block = (r.content as ReadonlyArray<JsonObject>)[0]
        assert.strictEqual(block?.type, "text")
      })))

  it.effect("2025-03-26/tools/audio-kept-from-2025-03-26", () =>
    legacySession("2025-03-26", (t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(call({ name: "audio" })))
        assert.strictEqual((r.content as ReadonlyArray<JsonObject>)[0]?.type, "audio")
      })))

  it.effect("2026-07-28/tools/missing-arguments-default-to-an-empty-object", () =>
    withServer((t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(call(modern({ name: "echo" }))))
        assert.deepStrictEqual(t.received[0]?.args, {})
      })
    ))

  it.effect("2026-07-28/tools/call-without-a-name-is-32602", () =>
    withServer((t) =>
      Effect.gen(function*() {
        assert.strictEqual(errorOf(yield* t.handle(call(modern({ arguments: {} })))).code, -32602)
        assert.strictEqual(t.received.length, 0)
      })
    ))

  for (const [revision, params] of [["2025-11-25", {}], [Modern, { _meta: meta() }]] as const) {
    it.effect(`${revision}/tools/unknown-tool-is-32602-naming-close-matches`, () =>
      withServer((t) =>
        Effect.gen(function*() {
          const e = errorOf(yield* t.handle(call({ name: "ech", ...params })))
          assert.strictEqual(e.code, -32602)
          assert.match(e.message, /did you mean echo, echo_twice\?/)
          assert.deepStrictEqual(e.data, { kind: "tool", name: "ech", suggestions: ["echo", "echo_twice"] })
        })
      ))
  }

  it.effect("2025-11-25/tools/upstream-error-passes-its-code-message-and-data", () =>
    legacySession("2025-11-25", (t) =>
      Effect.gen(function*() {
        const e = errorOf(yield* t.handle(call({ name: "boom" })))
        assert.deepStrictEqual(e, { code: -32050, message: "upstream blew up", data: { why: "x" } })
      })))

  it.effect("2026-07-28/tools/upstream-error-passes-its-code-message-and-data", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const e = errorOf(yield* t.handle(call(modern({ name: "boom" }))))
        assert.deepStrictEqual(e, { code: -32050, message: "upstream blew up", data: { why: "x" } })
      })
    ))

  it.effect("2026-07-28/tools/timeout-is-32603-with-reason", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const e = errorOf(yield* t.handle(call(modern({ name: "slow" }))))
        assert.strictEqual(e.code, -32603)
        assert.deepStrictEqual(e.data, { reason: "timeout", server: "fx", method: "tools/call", timeoutMs: 5000 })
      })
    ))

  it.effect("2025-11-25/tools/unreachable-upstream-is-32603-with-reason", () =>
    legacySession("2025-11-25", (t) =>
      Effect.gen(function*() {
        const e = errorOf(yield* t.handle(call({ name: "down" })))
        assert.strictEqual(e.code, -32603)
        assert.deepStrictEqual(e.data, { reason: "unavailable", server: "fx" })
      })))

  it.effect("2026-07-28/tools/missing-client-capability-is-32021-with-requiredCapabilities", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const e = errorOf(yield* t.handle(call(modern({ name: "needs_elicitation" }))))
        assert.strictEqual(e.code, -32021)
        assert.deepStrictEqual(e.data, { requiredCapabilities: { elicitation: {} } })
      })
    ))

  it.effect("2025-11-25/tools/missing-client-capability-is-32603-for-a-legacy-caller", () =>
    legacySession("2025-11-25", (t) =>
      Effect.gen(function*() {
        assert.strictEqual(errorOf(yield* t.handle(call({ name: "needs_elicitation" }))).code, -32603)
      })))

  it.effect("2026-07-28/tools/input-required-passes-through-without-caching-hints", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(call(modern({ name: "ask" }))))
        assert.strictEqual(r.resultType, "input_required")
        assert.deepStrictEqual(Object.keys(r.inputRequests as JsonObject), ["q1"])
        // The upstream's state leaves only inside mcpx-fx's own signed one.
        assert.isString(r.requestState)
        assert.notStrictEqual(r.requestState, "opaque")
        assert.isUndefined(r.ttlMs)
      })
    ))

  it.effect("2026-07-28/tools/a-retry-hands-inputResponses-and-requestState-to-the-backend", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const inputResponses = { q1: { action: "accept", content: { name: "ann" } } }
        const first = resultOf(yield* t.handle(call(modern({ name: "ask" }))))
        resultOf(yield* t.handle(call(modern({ name: "ask", inputResponses, requestState: first.requestState as string }))))
        assert.deepStrictEqual(t.received[1]?.caller.retry, { inputResponses, requestState: "opaque" })
        resultOf(yield* t.handle(call(modern({ name: "echo" }))))
        assert.isUndefined(t.received[2]?.caller.retry)
      })
    ))

  it.effect("2026-07-28/tools/a-malformed-requestState-is-32602", () =>
    withServer((t) =>
      Effect.gen(function*() {
        assert.strictEqual(errorOf(yield* t.handle(call(modern({ name: "echo", requestState: 7 })))).code, -32602)
      })
    ))

  it.effect("2025-11-25/tools/legacy-callers-never-carry-a-retry", () =>
    legacySession("2025-11-25", (t) =>
      Effect.gen(function*() {
        resultOf(yield* t.handle(call({ name: "echo", requestState: "x" })))
        assert.isUndefined(t.received[0]?.caller.retry)
      })))

  it.effect("2025-11-25/tools/input-required-cannot-reach-a-legacy-caller", () =>
    legacySession("2025-11-25", (t) =>
      Effect.gen(function*() {
        assert.strictEqual(errorOf(yield* t.handle(call({ name: "ask" }))).code, -32603)
      })))

  it.effect("2025-11-25/tools/a-backend-defect-is-32603-and-the-server-keeps-serving", () =>
    legacySession("2025-11-25", (t) =>
      Effect.gen(function*() {
        const r = yield* t.handle(call({ name: "crash" }))
        assert.strictEqual(r?.id, "c")
        assert.strictEqual(errorOf(r).code, -32603)
        resultOf(yield* t.handle(req("ping")))
      })))
})

describe("prompts", () => {
  it.effect("2025-03-26/prompts/list-drops-titles-before-2025-06-18", () =>
    legacySession("2025-03-26", (t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(req("prompts/list")))
        assert.deepStrictEqual(r.prompts, [{ name: "greet", arguments: [{ name: "who", required: true }] }])
      })))

  it.effect("2026-07-28/prompts/list-is-cacheable", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(req("prompts/list", modern())))
        assert.strictEqual(r.resultType, "complete")
        assert.strictEqual(r.ttlMs, 0)
        assert.deepStrictEqual(r.prompts, [{ name: "greet", title: "Greet", arguments: [{ name: "who", title: "Who", required: true }] }])
      })
    ))

  it.effect("2025-03-26/prompts/get-turns-resource-links-into-text-before-2025-06-18", () =>
    legacySession("2025-03-26", (t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(req("prompts/get", { name: "greet", arguments: { who: "ann" } })))
        const messages = r.messages as ReadonlyArray<JsonObject>
        assert.deepStrictEqual(messages[0]?.content, { type: "text", text: "hello ann" })
        assert.strictEqual((messages[1]?.content as JsonObject).type, "text")
      })))

  it.effect("2025-06-18/prompts/get-keeps-resource-links", () =>
    legacySession("2025-06-18", (t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(req("prompts/get", { name: "greet", arguments: { who: "ann" } })))
        assert.strictEqual(((r.messages as ReadonlyArray<JsonObject>)[1]?.content as JsonObject).type, "resource_link")
      })))

  it.effect("2026-07-28/prompts/get-is-complete-and-not-cacheable", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(req("prompts/get", modern({ name: "greet" }))))
        assert.strictEqual(r.resultType, "complete")
        assert.isUndefined(r.ttlMs)
      })
    ))

  it.effect("2026-07-28/prompts/non-string-arguments-are-32602", () =>
    withServer((t) =>
      Effect.gen(function*() {
        assert.strictEqual(errorOf(yield* t.handle(req("prompts/get", modern({ name: "greet", arguments: { who: 1 } })))).code, -32602)
      })
    ))

  it.effect("2025-11-25/prompts/unknown-prompt-is-32602", () =>
    legacySession("2025-11-25", (t) =>
      Effect.gen(function*() {
        const e = errorOf(yield* t.handle(req("prompts/get", { name: "gret" })))
        assert.strictEqual(e.code, -32602)
        assert.match(e.message, /greet/)
      })))
})

describe("resources", () => {
  it.effect("2025-03-26/resources/list-drops-fields-the-revision-lacks", () =>
    legacySession("2025-03-26", (t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(req("resources/list")))
        assert.deepStrictEqual(r.resources, [{ uri: "file:///a.txt", name: "a", annotations: {} }])
      })))

  it.effect("2026-07-28/resources/list-templates-and-read-are-cacheable", () =>
    withServer((t) =>
      Effect.gen(function*() {
        for (const [method, params] of [["resources/list", {}], ["resources/templates/list", {}], ["resources/read", { uri: "file:///a.txt" }]] as const) {
          const r = resultOf(yield* t.handle(req(method, modern(params))))
          assert.strictEqual(r.resultType, "complete", method)
          assert.strictEqual(r.ttlMs, 0, method)
          assert.strictEqual(r.cacheScope, "private", method)
        }
      })
    ))

  it.effect("2025-03-26/resources/read-drops-content-meta-before-2025-06-18", () =>
    legacySession("2025-03-26", (t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(req("resources/read", { uri: "file:///a.txt" })))
        assert.deepStrictEqual(r.contents, [{ uri: "file:///a.txt", text: "A" }])
      })))

  it.effect("2025-11-25/resources/unknown-resource-is-32002", () =>
    legacySession("2025-11-25", (t) =>
      Effect.gen(function*() {
        const e = errorOf(yield* t.handle(req("resources/read", { uri: "file:///b.txt" })))
        assert.strictEqual(e.code, -32002)
        assert.deepStrictEqual(e.data, { uri: "file:///b.txt", suggestions: ["file:///a.txt"] })
      })))

  it.effect("2026-07-28/resources/unknown-resource-is-32602", () =>
    withServer((t) =>
      Effect.gen(function*() {
        assert.strictEqual(errorOf(yield* t.handle(req("resources/read", modern({ uri: "file:///b.txt" })))).code, -32602)
      })
    ))

  it.effect("2025-11-25/resources/upstream-32002-passes-through", () =>
    legacySession("2025-11-25", (t) =>
      Effect.gen(function*() {
        assert.strictEqual(errorOf(yield* t.handle(req("resources/read", { uri: "file:///gone.txt" }))).code, -32002)
      })))

  it.effect("2026-07-28/resources/upstream-32002-becomes-32602", () =>
    withServer((t) =>
      Effect.gen(function*() {
        assert.strictEqual(errorOf(yield* t.handle(req("resources/read", modern({ uri: "file:///gone.txt" })))).code, -32602)
      })
    ))

  it.effect("2026-07-28/resources/read-without-uri-is-32602", () =>
    withServer((t) =>
      Effect.gen(function*() {
        assert.strictEqual(errorOf(yield* t.handle(req("resources/read", modern()))).code, -32602)
      })
    ))
})

describe("completion/complete", () => {
  const params = { ref: { type: "ref/prompt", name: "greet" }, argument: { name: "who", value: "a" } }

  for (const revision of ["2024-11-05", "2025-11-25"] as const) {
    it.effect(`${revision}/completion/dispatched-with-its-params`, () =>
      legacySession(revision, (t) =>
        Effect.gen(function*() {
          const r = resultOf(yield* t.handle(req("completion/complete", params)))
          assert.deepStrictEqual(r, { completion: { values: ["alice", "bob"], total: 2, hasMore: false } })
          assert.deepStrictEqual(t.received[0]?.args, params)
        })))
  }

  it.effect("2026-07-28/completion/complete-has-resultType-and-no-meta-in-params", () =>
    withServer((t) =>
      Effect.gen(function*() {
        const r = resultOf(yield* t.handle(req("completion/complete", modern(params))))
        assert.strictEqual(r.resultType, "complete")
        assert.isUndefined(r.ttlMs)
        assert.deepStrictEqual(t.received[0]?.args, params)
      })
    ))

  it.effect("2026-07-28/completion/missing-argument-is-32602", () =>
    withServer((t) =>
      Effect.gen(function*() {
        assert.strictEqual(errorOf(yield* t.handle(req("completion/complete", modern({ ref: params.ref })))).code, -32602)
      })
    ))
})
