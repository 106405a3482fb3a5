/**
 * The bounds both host transports hold a caller to (issue 10, "Resource bounds"): batch length,
 * a batch's requests taking turns without holding up anyone else's, nesting depth, and numeric ids
 * echoed exactly or refused. Each over stdio and over HTTP.
 */
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as TestClock from "effect/TestClock"
import { BatchConcurrency, DefaultMaxBatch } from "../src/Limits.js"
import { MaxBacklog } from "../src/internal/Backlog.js"
import { bodyOf, errorIn, harness, modernHeaders, modernRequest, objectOf, sse } from "./HttpHostHarness.js"
import { asObject, opened, request, settle, sleep, stdio, until } from "./StdioHostHarness.js"
import { req } from "./support.js"

const deep = (levels: number, id: JsonRpc.RequestId = "deep") =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call","params":{"name":"echo","arguments":{"a":${"[".repeat(levels)}${"]".repeat(levels)}}}}`

/** A -32600 answering the request it refuses: its id could be read, so the host's request completes. */
const ownId = (reply: JsonObject, id: JsonRpc.RequestId, mentions: string) => {
  assert.strictEqual(reply.id, id, JSON.stringify(reply))
  const error = asObject(reply.error)
  assert.strictEqual(error.code, -32600)
  assert.include(String(error.message), mentions)
}

const InexactIds = ["1e400", "1e-400", "9007199254740993"]

/** A refusal naming no request: HTTP leaves the id out, stdio writes it as null. */
const idless = (reply: JsonObject, code: number, mentions: string, where: "http" | "stdio") => {
  assert.isTrue(where === "http" ? !("id" in reply) : reply.id === null, JSON.stringify(reply))
  const error = asObject(reply.error)
  assert.strictEqual(error.code, code)
  assert.include(String(error.message), mentions)
}

describe("stdio bounds", () => {
  it.effect("2025-03-26/stdio/a batch over maxBatch is refused whole with -32600 naming the bound", () =>
    stdio(
      (h) =>
        Effect.gen(function*() {
          yield* opened(h, "2025-03-26")
          yield* h.send(Array.from({ length: 5 }, (_, i) => request(i, "ping")))
          idless(asObject(yield* h.next), -32600, "at most 4", "stdio")
          assert.strictEqual(h.callers.length, 0)
          yield* h.send(Array.from({ length: 4 }, (_, i) => request(i, "ping")))
          assert.strictEqual(((yield* h.next) as ReadonlyArray<unknown>).length, 4)
        }),
      "1 second",
      { maxBatch: 4 }
    ))

  it.effect("2025-03-26/stdio/the default bound is DefaultMaxBatch", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-03-26")
        yield* h.send(Array.from({ length: DefaultMaxBatch + 1 }, (_, i) => request(i, "ping")))
        idless(asObject(yield* h.next), -32600, `at most ${DefaultMaxBatch}`, "stdio")
      })
    ))

  it.effect("2025-03-26/stdio/a batch runs BatchConcurrency requests at a time, and a later request is answered before it", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-03-26")
        const width = BatchConcurrency * 3 + 1
        yield* h.send(Array.from({ length: width }, (_, i) => sleep(i, 1000, `b${i}`)))
        yield* h.send(sleep("solo", 10, "solo"))
        yield* until(() => h.callers.length === BatchConcurrency + 1)
        yield* settle
        // The batch holds its turns, the other request is not among the ones kept waiting.
        assert.strictEqual(h.callers.length, BatchConcurrency + 1)
        yield* TestClock.adjust(10)
        assert.strictEqual(asObject(yield* h.next).id, "solo")
        for (let round = 0; round < 4; round++) {
          yield* until(() => h.callers.length === Math.min(width, BatchConcurrency * (round + 1)) + 1)
          yield* TestClock.adjust(1000)
        }
        const reply = (yield* h.next) as ReadonlyArray<JsonObject>
        assert.deepStrictEqual(reply.map((r) => r.id), Array.from({ length: width }, (_, i) => i))
      })
    ))

  it.effect("2025-11-25/stdio/a frame nested past the bound is -32600 naming it under its own id, and the host goes on", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-11-25")
        yield* h.sendLine(deep(5_000))
        ownId(asObject(yield* h.next), "deep", `${JsonRpc.MaxDepth} levels`)
        yield* h.send(request("after", "ping"))
        assert.strictEqual(asObject(yield* h.next).id, "after")
      })
    ))

  it.effect("2025-11-25/stdio/an id a number cannot hold exactly is refused with -32600 and id null", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-11-25")
        for (const id of InexactIds) {
          yield* h.sendLine(`{"jsonrpc":"2.0","id":${id},"method":"ping"}`)
          idless(asObject(yield* h.next), -32600, id, "stdio")
        }
        yield* h.sendLine(`{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`)
        yield* h.next
        assert.include(h.lines.at(-1), `"id":9007199254740991`)
      })
    ))
})

const session = (h: Effect.Effect.Success<ReturnType<typeof harness>>, version = "2025-03-26") =>
  Effect.gen(function*() {
    const r = yield* h.post(req("initialize", { protocolVersion: version, capabilities: {}, clientInfo: { name: "c", version: "1" } }, 0))
    const id = r.headers.get("mcp-session-id")
    if (id === null) throw new Error("no session minted")
    assert.strictEqual((yield* h.post({ jsonrpc: "2.0", method: "notifications/initialized" }, { "mcp-session-id": id })).status, 202)
    return id
  })

const block = (id: JsonRpc.RequestId, tag: string) => req("tools/call", { name: "block", arguments: { tag } }, id)

describe("HTTP bounds", () => {
  it.scoped("2025-03-26/http/a batch over maxBatch is 400 -32600 naming the bound, whole", () =>
    Effect.gen(function*() {
      const h = yield* harness({ maxBatch: 4 })
      const r = yield* h.post(Array.from({ length: 5 }, (_, i) => req("ping", {}, i)))
      assert.strictEqual(r.status, 400)
      idless(yield* objectOf(r), -32600, "at most 4", "http")
      const ok = yield* h.post(Array.from({ length: 4 }, (_, i) => req("ping", {}, i)))
      assert.strictEqual(((yield* bodyOf(ok)) as ReadonlyArray<unknown>).length, 4)
    }))

  for (const where of ["in a session", "without a session"] as const) {
    it.scoped(`2025-03-26/http/a batch ${where} runs BatchConcurrency requests at a time while another caller is served`, () =>
      Effect.gen(function*() {
        const h = yield* harness()
        const headers = where === "in a session" ? { "mcp-session-id": yield* session(h) } : {}
        const abort = new AbortController()
        const width = BatchConcurrency * 3
        const batch = yield* Effect.fork(
          h.post(Array.from({ length: width }, (_, i) => block(i, `b${i}`)), headers, { signal: abort.signal })
        )
        for (let i = 0; i < BatchConcurrency; i++) yield* Queue.take(h.events.started)
        // Another caller, while the batch holds all its turns.
        const other = yield* h.post(req("tools/call", { name: "echo", arguments: { x: 1 } }, "other"))
        assert.strictEqual(other.status, 200)
        assert.strictEqual((yield* objectOf(other)).id, "other")
        yield* Effect.repeatN(Effect.yieldNow(), 50)
        assert.strictEqual(yield* Queue.size(h.events.started), 0, "more of the batch started than its turns allow")
        if (where === "in a session") {
          yield* h.del(headers)
        } else {
          abort.abort()
        }
        yield* Fiber.await(batch)
        const interrupted = yield* Queue.takeBetween(h.events.interrupted, BatchConcurrency, BatchConcurrency)
        assert.strictEqual(interrupted.length, BatchConcurrency)
      }))
  }

  it.scoped("2025-11-25/http/a body nested past the bound is 400 -32600 naming it under its own id, and the host goes on", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const r = yield* h.post(deep(5_000), { "mcp-protocol-version": "2025-11-25" })
      assert.strictEqual(r.status, 400)
      ownId(yield* objectOf(r), "deep", `${JsonRpc.MaxDepth} levels`)
      const after = yield* h.post(req("tools/call", { name: "echo", arguments: {} }, "after"), { "mcp-protocol-version": "2025-11-25" })
      assert.strictEqual((yield* objectOf(after)).id, "after")
    }))

  it.scoped("2025-11-25/http/an id a number cannot hold exactly is 400 -32600 with no id", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      for (const id of InexactIds) {
        const r = yield* h.post(`{"jsonrpc":"2.0","id":${id},"method":"ping"}`, { "mcp-protocol-version": "2025-11-25" })
        assert.strictEqual(r.status, 400, id)
        idless(yield* objectOf(r), -32600, id, "http")
      }
      const exact = yield* h.post(`{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`, { "mcp-protocol-version": "2025-11-25" })
      assert.include(yield* Effect.promise(() => exact.text()), `"id":9007199254740991`)
    }))

  it.scoped("2025-03-26/http/in a batch, only the element with an inexact id is refused", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const r = yield* h.post(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1e400,"method":"ping"}]`)
      const body = (yield* bodyOf(r)) as ReadonlyArray<JsonObject>
      assert.strictEqual(body.length, 2)
      assert.deepStrictEqual(body.filter((m) => "result" in m).map((m) => m.id), [1])
      const refused = body.find((m) => "error" in m)
      assert.isDefined(refused)
      if (refused !== undefined) {
        assert.isFalse("id" in refused)
        assert.strictEqual(errorIn(refused).code, -32600)
      }
    }))
})

describe("host stream backlog", () => {
  // Without a progress token the call runs in the request's fiber and says it all at its end;
  // with one, the POST turns into a stream at the first notification.
  it.scoped.each([false, true])(
    "2026-07-28/http/a host that does not read its stream (progress token: %s): notifications past the backlog are dropped, the result still comes",
    (token) =>
      Effect.gen(function*() {
        const h = yield* harness()
        const count = MaxBacklog * 16
        const body = modernRequest("tools/call", { name: "flood", arguments: { count } })
        const params = body.params as JsonObject
        const withToken = token ? { ...body, params: { ...params, _meta: { ...(params._meta as JsonObject), progressToken: "p" } } } : body
        const r = yield* h.post(withToken, modernHeaders("tools/call", "flood"))
        assert.strictEqual(r.headers.get("content-type"), "text/event-stream")
        // Nothing is read until the tool has said everything and ended.
        assert.strictEqual(yield* Queue.take(h.events.outcomes), "flooded")
        const stream = sse(r)
        let notes = 0
        let result: JsonObject | undefined
        for (;;) {
          const event = yield* stream.next
          if (event === undefined) break
          const data = event.data as JsonObject | undefined
          if (data === undefined) continue
          if (data.method === "notifications/progress") notes++
          else result = data
        }
        // Past the backlog itself, the stream's stages may each hold one chunk they took before the
        // test read anything (each at most a backlog): a bound, whatever the tool says.
        assert.isAtMost(notes, MaxBacklog * 3)
        assert.isAtLeast(notes, MaxBacklog - 1)
        assert.strictEqual(result?.id, 1)
        assert.deepStrictEqual((result?.result as JsonObject).content, [{ type: "text", text: "done" }])
      })
  )
})
