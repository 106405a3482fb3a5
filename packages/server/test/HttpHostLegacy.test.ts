import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as TestClock from "effect/TestClock"
import { bodyOf, errorIn, type Harness, harness, objectOf, sse } from "./HttpHostHarness.js"
import { initialize, req } from "./support.js"

/** Opens a session at `version` and returns its id. */
const open = (h: Harness, version: string, capabilities: JsonObject = {}) =>
  Effect.gen(function*() {
    const r = yield* h.post(initialize(version, capabilities))
    assert.strictEqual(r.status, 200)
    const id = r.headers.get("mcp-session-id")
    if (id === null) throw new Error("initialize minted no session")
    const body = yield* objectOf(r)
    assert.strictEqual((body.result as { protocolVersion: unknown }).protocolVersion, version)
    const done = yield* h.post({ jsonrpc: "2.0", method: "notifications/initialized" }, { "mcp-session-id": id })
    assert.strictEqual(done.status, 202)
    return id
  })

const inSession = (id: string, version?: string): Record<string, string> => ({
  "mcp-session-id": id,
  ...(version !== undefined ? { "mcp-protocol-version": version } : {})
})

const call = (name: string, id: number | string = 1, args: JsonObject = {}) => req("tools/call", { name, arguments: args }, id)

/** Waits until the host's live sessions satisfy `p`, letting its fibers run in between. */
const until = (h: Harness, p: (ids: ReadonlyArray<string>) => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1000; i++) {
      if (p(yield* h.host.sessionIds)) return
      yield* Effect.yieldNow()
    }
    assert.fail("the sessions never reached the expected state")
  })

describe("HttpHost: legacy sessions", () => {
  it.scoped("2025-11-25/http/initialize mints a cryptographically random session id", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const a = yield* open(h, "2025-11-25")
      const b = yield* open(h, "2025-11-25")
      assert.notStrictEqual(a, b)
      for (const id of [a, b]) {
        assert.match(id, /^[\x21-\x7e]{32,}$/)
      }
      assert.sameMembers([...(yield* h.host.sessionIds)], [a, b])
    }))

  it.scoped("2025-11-25/http/with sessionIdPrefix (a fleet's instance), every session id minted begins with it and is served", () =>
    Effect.gen(function*() {
      const h = yield* harness({ sessionIdPrefix: "gw-1." })
      const id = yield* open(h, "2025-11-25")
      assert.match(id, /^gw-1\.[\x21-\x7e]{32,}$/)
      const r = yield* h.post(call("echo", 2, { a: 1 }), inSession(id))
      assert.strictEqual(r.status, 200)
    }))

  it.scoped("2025-06-18/http/a session's requests are served under the negotiated revision, whatever the header says", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const id = yield* open(h, "2025-06-18")
      const r = yield* h.post(call("echo", 2, { a: 1 }), inSession(id, "2025-11-25"))
      assert.strictEqual(r.status, 200)
      const body = yield* objectOf(r)
      assert.strictEqual(body.id, 2)
      assert.isUndefined((body.result as JsonObject).resultType)
    }))

  it.scoped("2025-11-25/http/a failed initialize mints nothing", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const r = yield* h.post(req("initialize", { protocolVersion: "2025-11-25" }, 0))
      assert.strictEqual(r.status, 200)
      assert.isNull(r.headers.get("mcp-session-id"))
      assert.strictEqual(errorIn(yield* objectOf(r)).code, -32602)
      assert.deepStrictEqual(yield* h.host.sessionIds, [])
    }))

  it.scoped("2025-11-25/http/an unknown or ended session is 404; DELETE ends one with 204", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const unknown = yield* h.post(call("echo"), inSession("nope"))
      assert.strictEqual(unknown.status, 404)
      assert.strictEqual(errorIn(yield* objectOf(unknown)).code, -32600)
      const id = yield* open(h, "2025-11-25")
      const del = yield* h.del(inSession(id))
      assert.strictEqual(del.status, 204)
      assert.strictEqual((yield* h.post(call("echo"), inSession(id))).status, 404)
      assert.strictEqual((yield* h.del(inSession(id))).status, 404)
      assert.strictEqual((yield* h.get(inSession(id))).status, 404)
      // initialize naming an unknown session is told to start over without one.
      assert.strictEqual((yield* h.post(initialize("2025-11-25"), inSession(id))).status, 404)
    }))

  it.scoped("2025-11-25/http/DELETE without a session is 400", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const r = yield* h.del()
      assert.strictEqual(r.status, 400)
      assert.strictEqual(errorIn(yield* objectOf(r)).code, -32600)
    }))

  it.scoped("2025-11-25/http/an unsupported MCP-Protocol-Version is 400 -32022 with the legacy list", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const r = yield* h.post(req("tools/list", {}, 4), { "mcp-protocol-version": "2024-10-07" })
      assert.strictEqual(r.status, 400)
      const body = yield* objectOf(r)
      assert.strictEqual(body.id, 4)
      const error = body.error as { code: unknown; data: { supported: unknown; requested: unknown } }
      assert.strictEqual(error.code, -32022)
      assert.deepStrictEqual(error.data.supported, ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
      assert.strictEqual(error.data.requested, "2024-10-07")
    }))

  it.scoped("2025-03-26/http/a request without a session is served statelessly under its header's revision", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const bare = yield* h.post(req("ping", {}, 5))
      assert.strictEqual(bare.status, 200)
      assert.deepStrictEqual(yield* objectOf(bare), { jsonrpc: "2.0", id: 5, result: {} })
      // 2025-06-18 has no tasks/list; the header's revision governs a sessionless request.
      const r = yield* h.post(req("tasks/list", {}, 6), { "mcp-protocol-version": "2025-06-18" })
      assert.strictEqual(errorIn(yield* objectOf(r)).code, -32601)
      assert.deepStrictEqual(yield* h.host.sessionIds, [])
    }))

  it.scoped("2025-11-25/http/with sessions required, a request without one is 400", () =>
    Effect.gen(function*() {
      const h = yield* harness({ sessionless: "refuse" })
      const r = yield* h.post(req("ping", {}, 5))
      assert.strictEqual(r.status, 400)
      assert.strictEqual(errorIn(yield* objectOf(r)).code, -32600)
      yield* open(h, "2025-11-25")
    }))

  it.scoped("2025-11-25/http/the idle timeout ends a quiet session", () =>
    Effect.gen(function*() {
      const h = yield* harness({ sessionIdleTimeout: "1 minute" })
      const id = yield* open(h, "2025-11-25")
      yield* TestClock.adjust("40 seconds")
      assert.strictEqual((yield* h.post(req("ping", {}, 1), inSession(id))).status, 200)
      yield* TestClock.adjust("40 seconds")
      assert.deepStrictEqual(yield* h.host.sessionIds, [id], "activity restarted the idle clock")
      yield* TestClock.adjust("30 seconds")
      yield* until(h, (ids) => ids.length === 0)
      assert.strictEqual((yield* h.post(req("ping", {}, 2), inSession(id))).status, 404)
    }))

  it.scoped("2025-11-25/http/an open GET stream does not keep an abandoned session: it expires and the stream closes", () =>
    Effect.gen(function*() {
      const h = yield* harness({ sessionIdleTimeout: "1 minute" })
      const id = yield* open(h, "2025-11-25")
      const stream = sse(yield* h.get(inSession(id)))
      assert.strictEqual((yield* stream.next)?.comment, "keep-alive")
      yield* TestClock.adjust("61 seconds")
      yield* until(h, (ids) => ids.length === 0)
      // Keep-alive comments may come first; the stream then ends.
      let event = yield* stream.next
      for (let i = 0; i < 10 && event !== undefined; i++) event = yield* stream.next
      assert.isUndefined(event, "the expired session's GET stream stayed open")
      assert.strictEqual((yield* h.post(req("ping", {}, 2), inSession(id))).status, 404)
    }))

  it.scoped("2025-11-25/http/a session with a request in flight does not expire", () =>
    Effect.gen(function*() {
      const h = yield* harness({ sessionIdleTimeout: "1 minute" })
      const id = yield* open(h, "2025-11-25")
      const abort = new AbortController()
      yield* Effect.fork(h.post(call("block", 3, { tag: "long" }), inSession(id), { signal: abort.signal }))
      assert.strictEqual(yield* Queue.take(h.events.started), "long")
      yield* TestClock.adjust("5 minutes")
      assert.deepStrictEqual(yield* h.host.sessionIds, [id])
    }))

  it.scoped("2025-11-25/http/past maxSessions the least recently used idle session makes room", () =>
    Effect.gen(function*() {
      const h = yield* harness({ maxSessions: 2 })
      const a = yield* open(h, "2025-11-25")
      const b = yield* open(h, "2025-11-25")
      assert.strictEqual((yield* h.post(req("ping", {}, 1), inSession(a))).status, 200)
      const c = yield* open(h, "2025-11-25")
      assert.sameMembers([...(yield* h.host.sessionIds)], [a, c])
      assert.strictEqual((yield* h.post(req("ping", {}, 2), inSession(b))).status, 404)
    }))

  it.scoped("2025-11-25/http/past maxSessions with every session busy, initialize is 503 and nothing is ended", () =>
    Effect.gen(function*() {
      const h = yield* harness({ maxSessions: 2 })
      const ids = [yield* open(h, "2025-11-25"), yield* open(h, "2025-11-25")]
      for (const id of ids) {
        yield* Effect.fork(h.post(call("block", 9, { tag: id }), inSession(id)))
        yield* Queue.take(h.events.started)
      }
      const r = yield* h.post(initialize("2025-11-25"))
      assert.strictEqual(r.status, 503)
      assert.isNotNull(r.headers.get("retry-after"))
      const body = yield* objectOf(r)
      assert.include(String(errorIn(body).message), "transport.maxSessions")
      assert.isNull(r.headers.get("mcp-session-id"))
      assert.sameMembers([...(yield* h.host.sessionIds)], ids)
    }))

  it.scoped("all/http/endSessions ends every session", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const a = yield* open(h, "2025-11-25")
      const b = yield* open(h, "2025-03-26")
      yield* h.host.endSessions
      assert.deepStrictEqual(yield* h.host.sessionIds, [])
      for (const id of [a, b]) assert.strictEqual((yield* h.post(req("ping"), inSession(id))).status, 404)
    }))
})

describe("HttpHost: the GET stream", () => {
  it.scoped("2025-11-25/http/GET without a session or with a modern header is 405", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const bare = yield* h.get()
      assert.strictEqual(bare.status, 405)
      assert.strictEqual(errorIn(yield* objectOf(bare)).code, -32600)
      const id = yield* open(h, "2025-11-25")
      assert.strictEqual((yield* h.get({ ...inSession(id), "mcp-protocol-version": "2026-07-28" })).status, 405)
    }))

  it.scoped("2025-11-25/http/one GET stream per session: a second is 409", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const id = yield* open(h, "2025-11-25")
      const first = yield* h.get(inSession(id))
      assert.strictEqual(first.status, 200)
      assert.strictEqual(first.headers.get("content-type"), "text/event-stream")
      assert.strictEqual(first.headers.get("x-accel-buffering"), "no")
      const second = yield* h.get(inSession(id))
      assert.strictEqual(second.status, 409)
      assert.strictEqual(errorIn(yield* objectOf(second)).code, -32600)
      // Another session has its own.
      const other = yield* open(h, "2025-11-25")
      assert.strictEqual((yield* h.get(inSession(other))).status, 200)
      // Once the first is closed, the session may open one again.
      yield* sse(first).cancel
      const third = yield* Effect.gen(function*() {
        for (let i = 0; i < 1000; i++) {
          const r = yield* h.get(inSession(id))
          if (r.status !== 409) return r
          yield* Effect.yieldNow()
        }
        return assert.fail("the stream slot was never freed")
      })
      assert.strictEqual(third.status, 200)
    }))

  it.scoped("2025-11-25/http/the GET stream carries keep-alive comments and notifications, and closes on DELETE", () =>
    Effect.gen(function*() {
      const h = yield* harness({ sseKeepAlive: "10 seconds" })
      const id = yield* open(h, "2025-11-25")
      const other = yield* open(h, "2025-11-25")
      const stream = sse(yield* h.get(inSession(id)))
      // One comment at once, so the status and headers reach the client before any event.
      assert.deepStrictEqual(yield* stream.next, { comment: "keep-alive" })
      const changed = { jsonrpc: "2.0" as const, method: "notifications/tools/list_changed" }
      // Only sessions with a stream open take it; the other drops it.
      assert.strictEqual(yield* h.host.notify(id, changed), 1)
      assert.strictEqual(yield* h.host.notify(other, changed), 0)
      assert.deepStrictEqual(yield* stream.next, { data: changed })
      const updated = { jsonrpc: "2.0" as const, method: "notifications/resources/updated", params: { uri: "file:///a.txt" } }
      assert.strictEqual(yield* h.host.notify("all", updated), 1)
      assert.deepStrictEqual(yield* stream.next, { data: updated })
      yield* TestClock.adjust("10 seconds")
      assert.deepStrictEqual(yield* stream.next, { comment: "keep-alive" })
      yield* TestClock.adjust("10 seconds")
      assert.deepStrictEqual(yield* stream.next, { comment: "keep-alive" })
      assert.strictEqual((yield* h.del(inSession(id))).status, 204)
      assert.isUndefined(yield* stream.next)
    }))

  it.scoped("2025-11-25/http/a GET that does not accept an event stream is 406", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const id = yield* open(h, "2025-11-25")
      const r = yield* h.get({ ...inSession(id), accept: "application/json" })
      assert.strictEqual(r.status, 406)
    }))
})

describe("HttpHost: legacy batches, cancellation, questions", () => {
  it.scoped("2025-03-26/http/a batch is answered with an array; initialize inside is an error element", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const id = yield* open(h, "2025-03-26")
      const r = yield* h.post(
        [call("echo", 1), { jsonrpc: "2.0", method: "notifications/whatever" }, initialize("2025-03-26", {}, 2), req("ping", {}, 3), { bad: true }],
        inSession(id)
      )
      assert.strictEqual(r.status, 200)
      const body = yield* bodyOf(r)
      if (!Array.isArray(body)) return assert.fail(`expected an array, got ${JSON.stringify(body)}`)
      const byId = new Map(body.map((m: JsonObject) => [m.id, m]))
      assert.isTrue("result" in (byId.get(1) ?? {}))
      assert.strictEqual(errorIn(byId.get(2) ?? {}).code, -32600)
      assert.deepStrictEqual(byId.get(3), { jsonrpc: "2.0", id: 3, result: {} })
      assert.strictEqual(body.length, 4, "one reply per request and one for the invalid element")
      // Sessionless with no header (2025-03-26 by default) has batches too.
      const sessionless = yield* h.post([req("ping", {}, 9)])
      assert.deepStrictEqual(yield* bodyOf(sessionless), [{ jsonrpc: "2.0", id: 9, result: {} }])
      // A batch of notifications only is 202.
      const notes = yield* h.post([{ jsonrpc: "2.0", method: "notifications/whatever" }], inSession(id))
      assert.strictEqual(notes.status, 202)
      // The initialize in the batch minted nothing.
      assert.deepStrictEqual(yield* h.host.sessionIds, [id])
    }))

  it.scoped("2025-06-18/http/a batch outside 2025-03-26 is 400 -32600", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const id = yield* open(h, "2025-06-18")
      const r = yield* h.post([req("ping", {}, 1)], inSession(id))
      assert.strictEqual(r.status, 400)
      assert.strictEqual(errorIn(yield* objectOf(r)).code, -32600)
      const sessionless = yield* h.post([req("ping", {}, 1)], { "mcp-protocol-version": "2025-11-25" })
      assert.strictEqual(sessionless.status, 400)
    }))

  it.scoped("2025-11-25/http/notifications/cancelled interrupts the request and withholds its reply", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const id = yield* open(h, "2025-11-25")
      const pending = yield* Effect.fork(h.post(call("block", 10, { tag: "cancel-me" }), inSession(id)))
      assert.strictEqual(yield* Queue.take(h.events.started), "cancel-me")
      const cancel = yield* h.post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 10 } }, inSession(id))
      assert.strictEqual(cancel.status, 202)
      assert.strictEqual(yield* Queue.take(h.events.interrupted), "cancel-me")
      const r = yield* pending.await.pipe(Effect.flatten)
      assert.strictEqual(r.headers.get("content-type"), "text/event-stream")
      assert.strictEqual(yield* Effect.promise(() => r.text()), "")
    }))

  it.scoped("2025-11-25/http/in a session a dropped POST is not a cancellation", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const id = yield* open(h, "2025-11-25")
      const controller = new AbortController()
      yield* Effect.forkScoped(h.post(call("block", 11, { tag: "kept" }), inSession(id), { signal: controller.signal }))
      assert.strictEqual(yield* Queue.take(h.events.started), "kept")
      controller.abort()
      // Still running: a duplicate id is refused, and only the cancellation stops it.
      const dup = yield* h.post(call("echo", 11), inSession(id))
      assert.strictEqual(errorIn(yield* objectOf(dup)).code, -32600)
      assert.strictEqual(yield* Queue.size(h.events.interrupted), 0)
      yield* h.post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 11 } }, inSession(id))
      assert.strictEqual(yield* Queue.take(h.events.interrupted), "kept")
    }))

  it.scoped("2025-03-26/http/without a session a dropped POST cancels its request", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const controller = new AbortController()
      yield* Effect.forkScoped(h.post(call("block", 12, { tag: "sessionless" }), {}, { signal: controller.signal }))
      assert.strictEqual(yield* Queue.take(h.events.started), "sessionless")
      controller.abort()
      assert.strictEqual(yield* Queue.take(h.events.interrupted), "sessionless")
    }))

  it.scoped("2025-11-25/http/a question goes out on the POST's SSE stream and its answer comes back in a later POST", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const id = yield* open(h, "2025-11-25", { elicitation: {} })
      const r = yield* h.post(call("question", 20), inSession(id))
      assert.strictEqual(r.status, 200)
      assert.strictEqual(r.headers.get("content-type"), "text/event-stream")
      const stream = sse(r)
      const asked = (yield* stream.next)?.data as JsonObject
      assert.strictEqual(asked.method, "elicitation/create")
      assert.isString(asked.id)
      // An answer from another session does not count.
      const other = yield* open(h, "2025-11-25")
      const stray = yield* h.post({ jsonrpc: "2.0", id: asked.id, result: { action: "decline" } }, inSession(other))
      assert.strictEqual(stray.status, 400)
      const answer = yield* h.post({ jsonrpc: "2.0", id: asked.id, result: { action: "accept", content: { name: "ada" } } }, inSession(id))
      assert.strictEqual(answer.status, 202)
      const final = (yield* stream.next)?.data as JsonObject
      assert.strictEqual(final.id, 20)
      const text = ((final.result as JsonObject).content as ReadonlyArray<JsonObject>)[0]?.text
      assert.deepStrictEqual(JSON.parse(String(text)), { action: "accept", content: { name: "ada" } })
      assert.isUndefined(yield* stream.next)
    }))

  it.scoped("2025-11-25/http/a question after the POST's stream closed is refused, not left waiting", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const id = yield* open(h, "2025-11-25", { elicitation: {} })
      const stream = sse(yield* h.post(call("ask_twice", 22), inSession(id)))
      const first = (yield* stream.next)?.data as JsonObject
      assert.strictEqual((first.params as JsonObject).message, "first?")
      // The client goes away; in a session that does not cancel the call, and the question it
      // already saw can still be answered.
      yield* stream.cancel
      const answer = yield* h.post({ jsonrpc: "2.0", id: first.id, result: { action: "accept", content: {} } }, inSession(id))
      assert.strictEqual(answer.status, 202)
      assert.strictEqual(yield* Queue.take(h.events.outcomes), "refused -32603")
    }))

  it.scoped("2025-11-25/http/a client that takes no event stream is not asked", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const id = yield* open(h, "2025-11-25", { elicitation: {} })
      const r = yield* h.post(call("question", 21), { ...inSession(id), accept: "application/json" })
      assert.strictEqual(r.headers.get("content-type"), "application/json")
      const body = yield* objectOf(r)
      assert.strictEqual(((body.result as JsonObject).content as ReadonlyArray<JsonObject>)[0]?.text, "nobody to ask")
    }))

  it.scoped("2025-11-25/http/a response nothing is waiting for is 400", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const id = yield* open(h, "2025-11-25")
      const r = yield* h.post({ jsonrpc: "2.0", id: "mcpx-fx-q-nothing", result: {} }, inSession(id))
      assert.strictEqual(r.status, 400)
      assert.strictEqual(errorIn(yield* objectOf(r)).code, -32600)
    }))
})
