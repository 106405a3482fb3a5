/**
 * Seed 002 "Streamable HTTP, 2025-03-26 … 2025-11-25" over the daemon's `/mcp`, and 2024-11-05,
 * which the daemon serves over Streamable HTTP too: `initialize` mints a session (and counter-offers
 * a version it does not speak), 404 for an unknown or ended session, DELETE, sessionless requests
 * served statelessly, `MCP-Protocol-Version` checked (-32022 with the legacy list) but the
 * negotiated version governing a session, results in each revision's shape, 202 for notifications
 * and responses and 400 for a response nothing waits for. One daemon.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { HttpDaemon } from "../support/HttpDaemon.js"
import { openSession, SessionHeader, sessionless, versionHeaders } from "../support/HttpMcp.js"
import { error, firstText, result } from "../support/Replies.js"
import { clientInfo, Legacy, type LegacyRevision } from "../support/Revisions.js"
import { assertStructuredCall, assertToolsList } from "../support/Shapes.js"
import { era, type Message } from "../support/StdioServe.js"

const config = { servers: { alpha: era("dual") } }

const asMessage = (body: unknown): Message => {
  assert.isObject(body, JSON.stringify(body))
  return body as Message
}

/** Another supported legacy revision than `revision`, with a different result shape. */
const otherThan = (revision: LegacyRevision): LegacyRevision => (revision >= "2025-06-18" ? "2025-03-26" : "2025-11-25")

describe.concurrent("legacy Streamable HTTP over /mcp", () => {
  layer(HttpDaemon.layer(config), { timeout: 30_000 })("legacy http", (it) => {
    it.effect.each(Legacy)("%s/http/initialize answers the offered version and mints a session of visible ASCII", (revision) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const session = yield* openSession(http, revision)
        assert.match(session.id, /^[\x21-\x7e]+$/)
        const r = result(session.initialize)
        assert.strictEqual(r.protocolVersion, revision)
        assert.isObject(r.serverInfo)
        assert.isObject(r.capabilities)
        for (const key of ["resultType", "ttlMs", "cacheScope"]) assert.notProperty(r, key)
      }))

    it.effect.each([["an unknown date", "1999-01-01"], ["the modern revision, without the modern envelope", "2026-07-28"]] as const)(
      "2025-11-25/http/initialize offering %s is counter-offered the newest legacy revision",
      ([, offered]) =>
        Effect.gen(function*() {
          const { http } = yield* HttpDaemon
          const reply = yield* http.post({
            jsonrpc: "2.0",
            id: "offer",
            method: "initialize",
            params: { protocolVersion: offered, capabilities: {}, clientInfo }
          })
          assert.strictEqual(reply.status, 200, reply.text)
          assert.strictEqual(result(asMessage(reply.body)).protocolVersion, "2025-11-25")
          assert.isString(reply.headers.get(SessionHeader))
        })
    )

    it.effect.each(Legacy)("%s/http/results in the session have the negotiated revision's shape", (revision) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const session = yield* openSession(http, revision)
        const list = yield* session.request("list", "tools/list")
        assert.strictEqual(list.status, 200, list.text)
        assertToolsList(revision, asMessage(list.body), "alpha")
        const call = yield* session.request("structured", "tools/call", { name: "alpha__structured", arguments: {} })
        assert.strictEqual(call.status, 200, call.text)
        assertStructuredCall(revision, asMessage(call.body))
      }))

    it.effect.each(Legacy)("%s/http/the negotiated version governs a session whose header names another supported one", (revision) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const session = yield* openSession(http, revision)
        const reply = yield* http.post(
          { jsonrpc: "2.0", id: "quirk", method: "tools/call", params: { name: "alpha__structured", arguments: {} } },
          { headers: { [SessionHeader]: session.id, "mcp-protocol-version": otherThan(revision) } }
        )
        assert.strictEqual(reply.status, 200, reply.text)
        assertStructuredCall(revision, asMessage(reply.body))
      }))

    it.effect.each(Legacy)(
      "%s/http/an MCP-Protocol-Version mcpx-fx does not implement is 400 -32022 with the legacy list",
      (revision) =>
        Effect.gen(function*() {
          const { http } = yield* HttpDaemon
          const session = yield* openSession(http, revision)
          const reply = yield* http.post(
            { jsonrpc: "2.0", id: "odd", method: "tools/list", params: {} },
            { headers: { [SessionHeader]: session.id, "mcp-protocol-version": "2025-01-01" } }
          )
          assert.strictEqual(reply.status, 400, reply.text)
          const body = asMessage(reply.body)
          const e = error(body)
          assert.strictEqual(e.code, -32022)
          assert.includeMembers([...((e.data as Message).supported as ReadonlyArray<string>)], [...Legacy])
          assert.notInclude((e.data as Message).supported as ReadonlyArray<string>, "2026-07-28")
          assert.strictEqual((e.data as Message).requested, "2025-01-01")
          assert.strictEqual(body.id, "odd")
        })
    )

    it.effect.each(Legacy)("%s/http/a request naming an unknown session is 404", (revision) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* http.post(
          { jsonrpc: "2.0", id: "lost", method: "tools/list", params: {} },
          { headers: { [SessionHeader]: "no-such-session", ...versionHeaders(revision) } }
        )
        assert.strictEqual(reply.status, 404, reply.text)
      }))

    it.effect.each(Legacy)("%s/http/DELETE ends the session with 204, and the session is 404 afterwards", (revision) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const session = yield* openSession(http, revision)
        const ended = yield* http.del(session.headers)
        assert.strictEqual(ended.status, 204, ended.text)
        const after = yield* session.request("after", "tools/list")
        assert.strictEqual(after.status, 404, after.text)
        const again = yield* http.del(session.headers)
        assert.strictEqual(again.status, 404, again.text)
      }))

    it.effect.each(Legacy)("%s/http/DELETE without a session is 400", (revision) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* http.del(versionHeaders(revision))
        assert.strictEqual(reply.status, 400, reply.text)
        assert.strictEqual(error(asMessage(reply.body)).code, -32600)
      }))

    it.effect.each(Legacy)("%s/http/a request without a session is served statelessly", (revision) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* sessionless(http, revision, "alone", "tools/call", { name: "alpha__echo", arguments: { message: "solo" } })
        assert.strictEqual(reply.status, 200, reply.text)
        assert.strictEqual(firstText(asMessage(reply.body)), "solo")
        assert.isNull(reply.headers.get(SessionHeader))
      }))

    it.effect("2025-03-26/http/a sessionless request without MCP-Protocol-Version is served as 2025-03-26", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = yield* http.post({ jsonrpc: "2.0", id: "bare", method: "tools/call", params: { name: "alpha__structured", arguments: {} } })
        assert.strictEqual(reply.status, 200, reply.text)
        assertStructuredCall("2025-03-26", asMessage(reply.body))
      }))

    it.effect.each(["2025-06-18", "2025-11-25"] as const)(
      "%s/http/a sessionless request is served in the revision its header names",
      (revision) =>
        Effect.gen(function*() {
          const { http } = yield* HttpDaemon
          const reply = yield* sessionless(http, revision, "named", "tools/call", { name: "alpha__structured", arguments: {} })
          assert.strictEqual(reply.status, 200, reply.text)
          assertStructuredCall(revision, asMessage(reply.body))
        })
    )

    it.effect.each(Legacy)("%s/http/a notification in the session is 202 with no body", (revision) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const session = yield* openSession(http, revision)
        const reply = yield* session.send({ jsonrpc: "2.0", method: "notifications/roots/list_changed" })
        assert.strictEqual(reply.status, 202, reply.text)
        assert.strictEqual(reply.text, "")
      }))

    it.effect.each(Legacy)("%s/http/a response nothing is waiting for is 400", (revision) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const session = yield* openSession(http, revision)
        const reply = yield* session.send({ jsonrpc: "2.0", id: "never-asked", result: {} })
        assert.strictEqual(reply.status, 400, reply.text)
        assert.strictEqual(error(asMessage(reply.body)).code, -32600)
      }))

    it.effect.each(Legacy)("%s/http/ping is answered with an empty result", (revision) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const session = yield* openSession(http, revision)
        const reply = yield* session.request("p", "ping")
        assert.strictEqual(reply.status, 200, reply.text)
        assert.deepStrictEqual(result(asMessage(reply.body)), {})
      }))
  })
})
