/**
 * Seed 002, the legacy GET stream over the daemon's `/mcp`: 405 without a session (or with a
 * modern header), 404 for an unknown session, otherwise the session's notification stream
 * (text/event-stream, X-Accel-Buffering: no) — one per session, a second is 409 — carrying a
 * keep-alive comment every `transport.sseKeepAlive`, and closed by DELETE. The keep-alive is short
 * here so the test sees two of them without waiting long; every wait is on the stream itself.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { HttpDaemon } from "../support/HttpDaemon.js"
import { isStream, openSession, type Reply, SessionHeader, type SseItem, type SseReader } from "../support/HttpMcp.js"
import { error } from "../support/Replies.js"
import { Legacy } from "../support/Revisions.js"
import { era, type Message } from "../support/StdioServe.js"

const config = {
  servers: { alpha: era("legacy-32601") },
  settings: { "transport.sseKeepAlive": "150ms" }
}

const asStream = (r: Reply | SseReader): SseReader => {
  if (!isStream(r)) return assert.fail(`expected an event stream, got ${r.status} ${r.text}`)
  return r
}

const asReply = (r: Reply | SseReader): Reply => {
  if (isStream(r)) return assert.fail(`expected a plain reply, got an event stream (${r.response.status})`)
  return r
}

/** Reads items until `want` accepts one; fails if the stream ends first. */
const until = (stream: SseReader, want: (item: SseItem) => boolean, what: string): Effect.Effect<SseItem> =>
  Effect.flatMap(stream.next, (item) =>
    item === undefined
      ? Effect.dieMessage(`the GET stream ended before ${what}`)
      : want(item)
      ? Effect.succeed(item)
      : until(stream, want, what))

describe.concurrent("the legacy GET stream over /mcp", () => {
  layer(HttpDaemon.layer(config), { timeout: 30_000 })("legacy http GET", (it) => {
    it.effect.each(Legacy)("%s/http/GET without a session is 405", () =>
      Effect.scoped(Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = asReply(yield* http.get())
        assert.strictEqual(reply.status, 405, reply.text)
        assert.isString(reply.headers.get("allow"))
      })))

    it.effect.each(Legacy)("%s/http/GET naming an unknown session is 404", () =>
      Effect.scoped(Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const reply = asReply(yield* http.get({ [SessionHeader]: "no-such-session" }))
        assert.strictEqual(reply.status, 404, reply.text)
      })))

    it.effect.each(Legacy)("%s/http/GET opens the session's event stream; a second one is 409", (revision) =>
      Effect.scoped(Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const session = yield* openSession(http, revision)
        const stream = asStream(yield* http.get(session.headers))
        assert.strictEqual(stream.response.status, 200)
        assert.match(stream.response.headers.get("content-type") ?? "", /^text\/event-stream/)
        assert.strictEqual(stream.response.headers.get("x-accel-buffering"), "no")
        const second = asReply(yield* http.get(session.headers))
        assert.strictEqual(second.status, 409, second.text)
        assert.strictEqual(error(second.body as Message).code, -32600)
      })))

    it.effect.each(Legacy)("%s/http/the GET stream carries keep-alive comments", (revision) =>
      Effect.scoped(Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const session = yield* openSession(http, revision)
        const stream = asStream(yield* http.get(session.headers))
        // The opening comment, then at least one more from the keep-alive schedule.
        yield* until(stream, (i) => i._tag === "comment", "a first comment")
        const second = yield* until(stream, (i) => i._tag === "comment", "a keep-alive comment")
        assert.strictEqual(second._tag, "comment")
      })))

    it.effect.each(Legacy)("%s/http/DELETE closes the session's GET stream", (revision) =>
      Effect.scoped(Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const session = yield* openSession(http, revision)
        const stream = asStream(yield* http.get(session.headers))
        yield* until(stream, (i) => i._tag === "comment", "the opening comment")
        const ended = yield* http.del(session.headers)
        assert.strictEqual(ended.status, 204, ended.text)
        const rest = yield* stream.rest
        assert.isTrue(rest.every((i) => i._tag === "comment"), JSON.stringify(rest))
      })))
  })
})
