import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import { asObject, type Harness, init, opened, request, settle, sleep, stdio, until } from "./StdioHostHarness.js"
import { meta } from "./support.js"

describe("stdio host", () => {
  it.effect("2025-11-25/stdio/requests-run-concurrently-and-replies-match-by-id", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-11-25")
        yield* h.send(sleep(1, 1000))
        yield* h.send(sleep(2, 10))
        yield* until(() => h.callers.length === 2)
        yield* TestClock.adjust(10)
        assert.strictEqual(asObject(yield* h.next).id, 2)
        yield* TestClock.adjust(1000)
        assert.strictEqual(asObject(yield* h.next).id, 1)
      })
    ))

  it.effect("2025-11-25/stdio/initialize-is-settled-before-the-request-that-follows-it", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* h.send(init("2025-06-18"))
        yield* h.send(sleep(1, 0))
        asObject(yield* h.next)
        asObject(yield* h.next)
        assert.strictEqual(h.callers[0]?.revision, "2025-06-18")
      })
    ))

  it.effect("2025-11-25/stdio/cancelled-interrupts-the-request-and-suppresses-its-reply", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-11-25")
        yield* h.send(sleep(5, 1000, "five"))
        yield* until(() => h.callers.length === 1)
        yield* h.send(JsonRpc.notification("notifications/cancelled", { requestId: 5, reason: "user" }))
        yield* until(() => h.interrupted.includes("five"))
        yield* TestClock.adjust(2000)
        yield* h.send(request(6, "ping"))
        assert.deepStrictEqual(yield* h.next, { jsonrpc: "2.0", id: 6, result: {} })
        assert.strictEqual(yield* h.pending, 0)
      })
    ))

  it.effect("2026-07-28/stdio/cancelled-interrupts-a-modern-request", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* h.send(request("m", "tools/call", { name: "sleep", arguments: { ms: 1000, label: "m" }, _meta: meta() }))
        yield* until(() => h.callers.length === 1)
        yield* h.send(JsonRpc.notification("notifications/cancelled", { requestId: "m" }))
        yield* until(() => h.interrupted.includes("m"))
        yield* h.eof
        yield* Fiber.join(h.served)
        assert.deepStrictEqual(h.lines, [])
      })
    ))

  it.effect("2025-11-25/stdio/notifications-are-never-answered", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* h.send(JsonRpc.notification("notifications/nobody/knows"))
        yield* h.send(JsonRpc.notification("notifications/cancelled", { requestId: 99 }))
        yield* opened(h, "2025-11-25")
        yield* h.send(JsonRpc.notification("notifications/roots/list_changed"))
        yield* h.send(request(1, "ping"))
        assert.deepStrictEqual(yield* h.next, { jsonrpc: "2.0", id: 1, result: {} })
        assert.strictEqual(yield* h.pending, 0)
      })
    ))

  it.effect("2024-11-05/stdio/requests-before-initialize-use-the-oldest-revisions-shapes", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* h.send(request(1, "ping"))
        assert.deepStrictEqual(yield* h.next, { jsonrpc: "2.0", id: 1, result: {} })
        yield* h.send(sleep(2, 0))
        const r = asObject(asObject(yield* h.next).result)
        assert.isUndefined(r.structuredContent)
        assert.strictEqual(h.callers[0]?.revision, "2024-11-05")
      })
    ))

  it.effect("2026-07-28/stdio/modern-requests-are-served", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* h.send(request("d", "server/discover", { _meta: meta() }))
        const r = asObject(asObject(yield* h.next).result)
        assert.deepStrictEqual(r.supportedVersions, ["2026-07-28"])
      })
    ))

  it.effect("2025-11-25/stdio/every-line-written-is-one-json-rpc-message", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-11-25")
        yield* h.send(request(1, "tools/list"))
        yield* h.send(sleep(2, 0))
        yield* h.send(request(3, "tools/call", { name: "nope" }))
        yield* h.send(request(4, "no/such/method"))
        yield* h.sendLine("{not json")
        for (let i = 0; i < 5; i++) yield* h.next
        for (const line of h.lines) {
          assert.notInclude(line, "\n")
          const frame = JsonRpc.decodeFrame(line)
          assert.isTrue(Either.isRight(frame) && frame.right._tag === "Single", line)
        }
        assert.include(h.lines.join(""), "slept 0\\nline two")
      })
    ))

  it.effect("2025-11-25/stdio/unparseable-line-is-a-parse-error-with-id-null", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* h.sendLine("{not json")
        const r = asObject(yield* h.next)
        // JSON-RPC 2.0: an error whose request id could not be read carries "id": null.
        assert.isTrue("id" in r)
        assert.isNull(r.id)
        assert.strictEqual(asObject(r.error).code, -32700)
        yield* h.sendLine("42")
        const notObject = asObject(yield* h.next)
        assert.isNull(notObject.id)
        assert.strictEqual(asObject(notObject.error).code, -32600)
        yield* h.sendLine(JSON.stringify({ jsonrpc: "1.0", id: 4, method: "ping" }))
        const bad = asObject(yield* h.next)
        assert.strictEqual(bad.id, 4)
        assert.strictEqual(asObject(bad.error).code, -32600)
      })
    ))

  it.effect("2025-11-25/stdio/blank-lines-are-ignored", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* h.sendLine("")
        yield* h.sendLine("   \r")
        yield* h.send(request(1, "ping"))
        assert.strictEqual(asObject(yield* h.next).id, 1)
        assert.strictEqual(yield* h.pending, 0)
      })
    ))

  it.effect("2025-11-25/stdio/an-id-already-in-flight-is-32600", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-11-25")
        yield* h.send(sleep(1, 100))
        yield* until(() => h.callers.length === 1)
        yield* h.send(sleep(1, 0))
        const dup = asObject(yield* h.next)
        assert.strictEqual(asObject(dup.error).code, -32600)
        yield* TestClock.adjust(100)
        assert.isDefined(asObject(yield* h.next).result)
      })
    ))
})

describe("stdio batches", () => {
  it.effect("2025-03-26/stdio/batch-reply-is-an-array", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-03-26")
        yield* h.send([request(1, "ping"), JsonRpc.notification("notifications/whatever"), request(2, "tools/list")])
        const reply = yield* h.next
        assert.isTrue(Array.isArray(reply))
        const ids = (reply as ReadonlyArray<JsonObject>).map((r) => r.id)
        assert.sameMembers(ids, [1, 2])
      })
    ))

  it.effect("2025-03-26/stdio/batch-elements-run-concurrently-and-can-be-cancelled-one-by-one", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-03-26")
        yield* h.send([sleep(1, 100, "one"), sleep(2, 1000, "two")])
        yield* until(() => h.callers.length === 2)
        yield* h.send(JsonRpc.notification("notifications/cancelled", { requestId: 2 }))
        yield* until(() => h.interrupted.includes("two"))
        yield* TestClock.adjust(100)
        const reply = (yield* h.next) as ReadonlyArray<JsonObject>
        assert.deepStrictEqual(reply.map((r) => r.id), [1])
      })
    ))

  it.effect("2025-03-26/stdio/initialize-in-a-batch-is-an-error-element", () =>
    stdio((h) =>
      Effect.gen(function*() {
        // Before any initialize the connection batches as 2025-03-26.
        yield* h.send([init("2025-03-26", 1), request(2, "ping")])
        const reply = (yield* h.next) as ReadonlyArray<JsonObject>
        const byId = new Map(reply.map((r) => [r.id, r]))
        assert.strictEqual(asObject(byId.get(1)?.error).code, -32600)
        assert.deepStrictEqual(byId.get(2)?.result, {})
        // Nothing was negotiated, so a real initialize still works.
        yield* opened(h, "2025-11-25")
      })
    ))

  it.effect("2025-03-26/stdio/a-batch-of-notifications-gets-no-reply", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-03-26")
        yield* h.send([JsonRpc.notification("notifications/a"), JsonRpc.notification("notifications/b")])
        yield* h.send(request(3, "ping"))
        assert.strictEqual(asObject(yield* h.next).id, 3)
        assert.strictEqual(yield* h.pending, 0)
      })
    ))

  it.effect("2025-03-26/stdio/invalid-batch-elements-are-error-elements", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-03-26")
        yield* h.send([{ jsonrpc: "2.0", id: 1 }, request(2, "ping")])
        const reply = (yield* h.next) as ReadonlyArray<JsonObject>
        assert.strictEqual(reply.length, 2)
        assert.isTrue(reply.some((r) => asObject(r.error ?? {}).code === -32600))
      })
    ))

  for (const version of ["2025-06-18", "2025-11-25", "2024-11-05"] as const) {
    it.effect(`${version}/stdio/batches-are-refused-outside-2025-03-26`, () =>
      stdio((h) =>
        Effect.gen(function*() {
          yield* opened(h, version)
          yield* h.send([request(1, "ping"), request(2, "ping")])
          const r = asObject(yield* h.next)
          assert.isTrue("id" in r)
          assert.isNull(r.id)
          assert.strictEqual(asObject(r.error).code, -32600)
          assert.strictEqual(yield* h.pending, 0)
        })
      ))
  }
})

describe("stdio end of input", () => {
  it.effect("2025-11-25/stdio/eof-lets-requests-in-flight-answer-within-the-drain", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-11-25")
        yield* h.send(sleep(1, 500))
        yield* until(() => h.callers.length === 1)
        yield* h.eof
        yield* settle
        yield* TestClock.adjust(500)
        assert.strictEqual(asObject(yield* h.next).id, 1)
        yield* Fiber.join(h.served)
      })
    ))

  it.effect("2025-11-25/stdio/eof-cancels-what-is-still-running-after-the-drain", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-11-25")
        yield* h.send(sleep(1, 10_000, "long"))
        yield* until(() => h.callers.length === 1)
        yield* h.eof
        yield* settle
        yield* TestClock.adjust(999)
        assert.isTrue((yield* Fiber.poll(h.served))._tag === "None")
        yield* TestClock.adjust(1)
        yield* Fiber.join(h.served)
        assert.deepStrictEqual(h.interrupted, ["long"])
        assert.strictEqual(yield* h.pending, 0)
      })
    ))

  it.effect("2025-11-25/stdio/eof-with-nothing-in-flight-ends-at-once", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* h.eof
        yield* Fiber.join(h.served)
      })
    ))
})

describe("stdio stop", () => {
  /** A stdio host with a 1 s drain that `stop` stops, as SIGTERM does. */
  const stoppable = <A, E>(f: (h: Harness, stop: Effect.Effect<boolean>) => Effect.Effect<A, E>) =>
    Effect.flatMap(Deferred.make<void>(), (stop) => stdio((h) => f(h, Deferred.succeed(stop, undefined)), "1 second", { stop: Deferred.await(stop) }))

  // A stop lets the drain run, then interrupts what still runs and answers each such request,
  // alone or in a batch, with the shutdown error; what answered within the drain keeps its answer.
  it.effect("2025-03-26/stdio/a-stop-answers-what-outlives-the-drain-with-the-shutdown-error-batches-too", () =>
    stoppable((h, stop) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-03-26")
        yield* h.send(sleep(1, 10_000, "single"))
        yield* h.send([sleep(2, 10_000, "batched"), sleep(3, 10, "quick")])
        yield* until(() => h.callers.length === 3)
        yield* stop
        yield* settle
        yield* TestClock.adjust(999)
        // Within the drain nothing is cut short: the quick element waits in its batch.
        assert.strictEqual(yield* h.pending, 0)
        assert.deepStrictEqual(h.interrupted, [])
        yield* TestClock.adjust(1)
        yield* Fiber.join(h.served)
        const replies = [yield* h.next, yield* h.next]
        const single = asObject(replies.find((r) => !Array.isArray(r)))
        const batch = replies.find(Array.isArray) as ReadonlyArray<JsonObject>
        const shutdown = (r: JsonObject) => asObject(asObject(r.error).data).reason
        assert.strictEqual(single.id, 1)
        assert.strictEqual(shutdown(single), "shutdown")
        assert.deepStrictEqual(batch.map((r) => r.id), [2, 3])
        assert.strictEqual(shutdown(batch[0]!), "shutdown")
        assert.isDefined(batch[1]!.result)
        assert.sameMembers([...h.interrupted], ["single", "batched"])
      })
    ))

  it.effect("2025-11-25/stdio/a-request-cancelled-before-the-stop-is-not-answered-by-it", () =>
    stoppable((h, stop) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-11-25")
        yield* h.send(sleep(1, 10_000, "cancelled"))
        yield* until(() => h.callers.length === 1)
        yield* h.send(JsonRpc.notification("notifications/cancelled", { requestId: 1 }))
        yield* until(() => h.interrupted.includes("cancelled"))
        yield* stop
        yield* Fiber.join(h.served)
        assert.strictEqual(yield* h.pending, 0)
      })
    ))
})

describe("stdio questions", () => {
  it.effect("2025-11-25/stdio/a-legacy-calls-question-goes-to-the-host-and-the-answer-comes-back", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-11-25")
        yield* h.send(request(1, "tools/call", { name: "ask" }))
        const q = asObject(yield* h.next)
        assert.strictEqual(q.method, "elicitation/create")
        assert.isString(q.id)
        yield* h.send({ jsonrpc: "2.0", id: q.id, result: { action: "accept", content: { name: "ann" } } })
        const r = asObject(yield* h.next)
        assert.strictEqual(r.id, 1)
        assert.include(JSON.stringify(r.result), "ann")
      })
    ))

  it.effect("2025-11-25/stdio/a-refused-question-reaches-the-backend-as-a-refusal", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-11-25")
        yield* h.send(request(1, "tools/call", { name: "ask" }))
        const q = asObject(yield* h.next)
        yield* h.send({ jsonrpc: "2.0", id: q.id, error: { code: -32601, message: "no" } })
        assert.include(JSON.stringify(asObject(yield* h.next).result), "refused -32601")
      })
    ))

  it.effect("2025-11-25/stdio/cancelling-a-call-withdraws-its-open-question", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-11-25")
        yield* h.send(request(1, "tools/call", { name: "ask" }))
        const q = asObject(yield* h.next)
        yield* h.send(JsonRpc.notification("notifications/cancelled", { requestId: 1 }))
        const n = asObject(yield* h.next)
        assert.strictEqual(n.method, "notifications/cancelled")
        assert.strictEqual(asObject(n.params).requestId, q.id)
        yield* h.send(request(2, "ping"))
        assert.strictEqual(asObject(yield* h.next).id, 2)
      })
    ))
})
