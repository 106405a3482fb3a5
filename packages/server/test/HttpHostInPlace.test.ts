/**
 * A legacy session's lone request from a host that can be asked nothing, and that asked for no
 * progress, runs in its POST's own fiber when the adapter can detach it from its client: what the
 * call says comes before its reply on the stream, a cancellation or the session's end answers
 * the POST with the withheld reply, and other requests (a host that can be asked, a progress
 * token) are not run in place. Through the web handler, with requests made detachable.
 */
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import { type Detaching, type Harness, harness, objectOf, sse } from "./HttpHostHarness.js"
import { initialize, req } from "./support.js"

const Version = "2025-11-25"

const open = (h: Harness, capabilities: JsonObject = {}) =>
  Effect.gen(function*() {
    const r = yield* h.post(initialize(Version, capabilities))
    const id = r.headers.get("mcp-session-id")
    if (id === null) throw new Error("initialize minted no session")
    const done = yield* h.post({ jsonrpc: "2.0", method: "notifications/initialized" }, { "mcp-session-id": id })
    assert.strictEqual(done.status, 202)
    return { "mcp-session-id": id, "mcp-protocol-version": Version }
  })

const call = (name: string, id: number, args: JsonObject = {}, meta?: JsonObject) =>
  req("tools/call", { name, arguments: args, ...(meta !== undefined ? { _meta: meta } : {}) }, id)

const setup = (capabilities: JsonObject = {}) =>
  Effect.gen(function*() {
    const detaching: Detaching = { detached: { count: 0 } }
    const h = yield* harness({}, detaching)
    const headers = yield* open(h, capabilities)
    return { h, headers, detached: detaching.detached }
  })

describe("HttpHost: a legacy session's request in place", () => {
  it.scoped("2025-11-25/http/a call in place is detached, and what it says precedes its reply on the stream", () =>
    Effect.gen(function*() {
      const { detached, h, headers } = yield* setup()
      const plain = yield* h.post(call("echo", 1, { a: 1 }), headers)
      assert.strictEqual(plain.headers.get("content-type"), "application/json")
      assert.strictEqual((yield* objectOf(plain)).id, 1)
      const r = yield* h.post(call("say_first", 2), headers)
      assert.strictEqual(r.headers.get("content-type"), "text/event-stream")
      const stream = sse(r)
      assert.strictEqual(((yield* stream.next)?.data as JsonObject).method, "notifications/progress")
      assert.strictEqual(((yield* stream.next)?.data as JsonObject).id, 2)
      assert.isUndefined(yield* stream.next)
      assert.strictEqual(detached.count, 2)
    }))

  it.scoped("2025-11-25/http/notifications/cancelled ends a call in place with the withheld reply, and its id is free again", () =>
    Effect.gen(function*() {
      const { detached, h, headers } = yield* setup()
      const pending = yield* Effect.fork(h.post(call("block", 3, { tag: "in-place" }), headers))
      assert.strictEqual(yield* Queue.take(h.events.started), "in-place")
      const dup = yield* h.post(call("echo", 3), headers)
      assert.match(String(((yield* objectOf(dup)).error as JsonObject).message), /already in flight/)
      const cancel = yield* h.post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 3 } }, headers)
      assert.strictEqual(cancel.status, 202)
      assert.strictEqual(yield* Queue.take(h.events.interrupted), "in-place")
      const r = yield* Fiber.join(pending)
      assert.strictEqual(r.status, 200)
      assert.strictEqual(r.headers.get("content-type"), "text/event-stream")
      assert.strictEqual(yield* Effect.promise(() => r.text()), "")
      assert.strictEqual((yield* objectOf(yield* h.post(call("echo", 3), headers))).id, 3)
      assert.strictEqual(detached.count, 2)
    }))

  it.scoped("2025-11-25/http/ending the session ends its call in place with the withheld reply", () =>
    Effect.gen(function*() {
      const { h, headers } = yield* setup()
      const pending = yield* Effect.fork(h.post(call("block", 4, { tag: "ended" }), headers))
      assert.strictEqual(yield* Queue.take(h.events.started), "ended")
      assert.strictEqual((yield* h.del(headers)).status, 204)
      assert.strictEqual(yield* Queue.take(h.events.interrupted), "ended")
      const r = yield* Fiber.join(pending)
      assert.strictEqual(r.headers.get("content-type"), "text/event-stream")
      assert.strictEqual(yield* Effect.promise(() => r.text()), "")
    }))

  it.scoped("2025-11-25/http/a host that can be asked and a call with a progress token are not run in place", () =>
    Effect.gen(function*() {
      const asked = yield* setup({ elicitation: {} })
      const stream = sse(yield* asked.h.post(call("question", 5), asked.headers))
      assert.strictEqual(((yield* stream.next)?.data as JsonObject).method, "elicitation/create")
      yield* stream.cancel
      assert.strictEqual(asked.detached.count, 0)

      const { detached, h, headers } = yield* setup()
      const progress = yield* h.post(call("echo", 6, {}, { progressToken: "p" }), headers)
      assert.strictEqual(progress.status, 200)
      assert.strictEqual(detached.count, 0)
    }))
})
