/**
 * Seed 002 "Origin", on every revision the daemon serves over Streamable HTTP: a present Origin
 * that is not allowed is 403 with an id-less JSON-RPC error, on every method. Allowed: no Origin,
 * the loopback hosts (localhost, 127.0.0.1, ::1) at any port over http or https, the daemon's own
 * address, and the exact origins of `transport.allowedOrigins`; `Origin: null` names nobody.
 *
 * The daemon listens on 127.0.0.2 — loopback to the kernel, but not one of the loopback hosts
 * the policy names — so that its own origin is allowed for being its own, not for being
 * loopback, and the same host at another port is refused.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { HttpDaemon } from "../support/HttpDaemon.js"
import { type Endpoint, modernBody, modernHeaders, openSession, type Reply } from "../support/HttpMcp.js"
import { error, result } from "../support/Replies.js"
import { All, initializeParams, Legacy, Modern, type Revision } from "../support/Revisions.js"
import { era, type Message } from "../support/StdioServe.js"

const Allowed = "https://app.example.com"

const config = { servers: { alpha: era("dual") }, settings: { "transport.allowedOrigins": [Allowed] } }

/** The opening request of a host of `revision`, sent with `origin` (if any). */
const opening = (http: Endpoint, revision: Revision, origin: string | undefined): Effect.Effect<Reply> => {
  const headers = origin === undefined ? {} : { origin }
  return revision === Modern
    ? http.post(modernBody("o", "server/discover"), { headers: { ...modernHeaders("server/discover"), ...headers } })
    : http.post({ jsonrpc: "2.0", id: "o", method: "initialize", params: initializeParams(revision) }, { headers })
}

const assertServed = (reply: Reply, origin: string | undefined) => {
  assert.strictEqual(reply.status, 200, `${origin}: ${reply.text}`)
  assert.isObject(result(reply.body as Message))
}

const assertForbidden = (reply: Reply, origin: string) => {
  assert.strictEqual(reply.status, 403, `${origin}: ${reply.text}`)
  const body = reply.body as Message
  assert.isNumber(error(body).code)
  assert.notProperty(body, "id", reply.text)
}

describe.concurrent("Origin over /mcp", () => {
  layer(HttpDaemon.layer(config, ["--daemon-address", "127.0.0.2"]), { timeout: 30_000 })("http origin", (it) => {
    it.effect.each(All)("%s/http/a request without Origin is served", (revision) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        assertServed(yield* opening(http, revision, undefined), undefined)
      }))

    it.effect.each(All)("%s/http/a loopback Origin at any port, over http or https, is allowed", (revision) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        for (const origin of ["http://localhost:5173", "https://localhost", "http://127.0.0.1:1", "https://127.0.0.1:8443", "http://[::1]:3000"]) {
          assertServed(yield* opening(http, revision, origin), origin)
        }
      }))

    it.effect.each(All)("%s/http/the daemon's own address is allowed", (revision) =>
      Effect.gen(function*() {
        const { http, daemon } = yield* HttpDaemon
        assert.match(daemon.info.url, /^http:\/\/127\.0\.0\.2:\d+$/)
        assertServed(yield* opening(http, revision, daemon.info.url), daemon.info.url)
      }))

    it.effect.each(All)("%s/http/an origin in transport.allowedOrigins is allowed, exactly", (revision) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        assertServed(yield* opening(http, revision, Allowed), Allowed)
        assertForbidden(yield* opening(http, revision, "https://app.example.com:8443"), "https://app.example.com:8443")
        assertForbidden(yield* opening(http, revision, "http://app.example.com"), "http://app.example.com")
      }))

    it.effect.each(All)("%s/http/a foreign Origin is 403 with an id-less error", (revision) =>
      Effect.gen(function*() {
        const { http, daemon } = yield* HttpDaemon
        const otherPort = daemon.info.url.replace(/:\d+$/, ":1")
        for (const origin of ["https://evil.example", "http://localhost.evil.example", otherPort]) {
          assertForbidden(yield* opening(http, revision, origin), origin)
        }
      }))

    it.effect.each(All)("%s/http/Origin null is 403", (revision) =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        assertForbidden(yield* opening(http, revision, "null"), "null")
      }))

    it.effect.each(Legacy)("%s/http/a foreign Origin is 403 on GET, DELETE and in a session too", (revision) =>
      Effect.scoped(Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const session = yield* openSession(http, revision)
        const origin = { origin: "https://evil.example" }
        const inSession = yield* http.post({ jsonrpc: "2.0", id: "x", method: "ping" }, { headers: { ...session.headers, ...origin } })
        assertForbidden(inSession, "POST")
        const get = yield* http.get({ ...session.headers, ...origin })
        assert.isFalse("nextEvent" in get, "GET opened a stream")
        assertForbidden(get as Reply, "GET")
        assertForbidden(yield* http.del({ ...session.headers, ...origin }), "DELETE")
        // Refused, so the session is still there.
        const after = yield* session.request("still", "ping")
        assert.strictEqual(after.status, 200, after.text)
      })))
  })
})
