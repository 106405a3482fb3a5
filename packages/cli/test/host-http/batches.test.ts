/**
 * Seed 002, batches over the daemon's `/mcp`: they exist only in 2025-03-26 (a session that
 * negotiated it, or a sessionless POST with no header or a 2025-03-26 one) and are 400 -32600
 * otherwise; the reply is one JSON array; a batch of notifications and responses only is 202;
 * `initialize` inside a batch is refused as that element and mints nothing. One daemon.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { HttpDaemon } from "../support/HttpDaemon.js"
import { openSession, SessionHeader, versionHeaders } from "../support/HttpMcp.js"
import { error, firstText, result } from "../support/Replies.js"
import { clientInfo, type LegacyRevision } from "../support/Revisions.js"
import { era, type Message } from "../support/StdioServe.js"

const config = { servers: { alpha: era("dual") } }

const batch = [
  { jsonrpc: "2.0", id: "b1", method: "ping" },
  { jsonrpc: "2.0", id: "b2", method: "tools/call", params: { name: "alpha__echo", arguments: { message: "in a batch" } } },
  { jsonrpc: "2.0", method: "notifications/roots/list_changed" }
]

/** A batch reply: an array answering each request once, by id. */
const assertBatchReply = (body: unknown) => {
  assert.isArray(body, JSON.stringify(body))
  const replies = body as ReadonlyArray<Message>
  assert.sameMembers(replies.map((r) => r.id), ["b1", "b2"])
  assert.deepStrictEqual(result(replies.find((r) => r.id === "b1")!), {})
  assert.strictEqual(firstText(replies.find((r) => r.id === "b2")!), "in a batch")
}

const NoBatches: ReadonlyArray<LegacyRevision> = ["2024-11-05", "2025-06-18", "2025-11-25"]

describe.concurrent("batches over /mcp", () => {
  layer(HttpDaemon.layer(config), { timeout: 30_000 })("legacy http batches", (it) => {
    it.effect("2025-03-26/http/a session that negotiated 2025-03-26 takes a batch and answers one array", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const session = yield* openSession(http, "2025-03-26")
        const reply = yield* session.send(batch)
        assert.strictEqual(reply.status, 200, reply.text)
        assertBatchReply(reply.body)
      }))

    it.effect.each([["no header", {}], ["a 2025-03-26 header", { "mcp-protocol-version": "2025-03-26" }]] as const)(
      "2025-03-26/http/a sessionless batch with %s is taken",
      ([, headers]) =>
        Effect.gen(function*() {
          const { http } = yield* HttpDaemon
          const reply = yield* http.post(batch, { headers })
          assert.strictEqual(reply.status, 200, reply.text)
          assertBatchReply(reply.body)
        })
    )

    it.effect.each(NoBatches)("%s/http/a batch in a session of this revision is 400 -32600", (revision) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const session = yield* openSession(http, revision)
        const reply = yield* session.send(batch)
        assert.strictEqual(reply.status, 400, reply.text)
        assert.strictEqual(error(reply.body as Message).code, -32600)
      }))

    it.effect.each(["2025-06-18", "2025-11-25"] as const)(
      "%s/http/a sessionless batch whose header names this revision is 400 -32600",
      (revision) =>
        Effect.gen(function*() {
          const { http } = yield* HttpDaemon
          const reply = yield* http.post(batch, { headers: versionHeaders(revision) })
          assert.strictEqual(reply.status, 400, reply.text)
          assert.strictEqual(error(reply.body as Message).code, -32600)
        })
    )

    it.effect("2025-03-26/http/a batch of notifications and responses only is 202", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const session = yield* openSession(http, "2025-03-26")
        const reply = yield* session.send([
          { jsonrpc: "2.0", method: "notifications/roots/list_changed" },
          { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "nothing" } }
        ])
        assert.strictEqual(reply.status, 202, reply.text)
        assert.strictEqual(reply.text, "")
      }))

    it.effect("2025-03-26/http/initialize inside a batch is refused as that element and mints no session", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* http.post([
          { jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo } },
          { jsonrpc: "2.0", id: "p", method: "ping" }
        ])
        assert.strictEqual(reply.status, 200, reply.text)
        assert.isNull(reply.headers.get(SessionHeader))
        assert.isArray(reply.body)
        const replies = reply.body as ReadonlyArray<Message>
        assert.strictEqual(error(replies.find((r) => r.id === "init")!).code, -32600)
        assert.deepStrictEqual(result(replies.find((r) => r.id === "p")!), {})
      }))
  })
})
