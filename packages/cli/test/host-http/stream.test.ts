/**
 * Seed 002, the legacy GET stream over the daemon's `/mcp`: 405 without a session (or with a
 * modern header), 404 for an unknown session, otherwise the session's notification stream
 * (text/event-stream, X-Accel-Buffering: no) — one per session, a second is 409 — carrying a
 * keep-alive comment every `transport.sseKeepAlive`, the upstream's list_changed (declared by
 * initialize, so delivered) and resources/updated for a subscription made before it opened, and
 * closed by DELETE. The keep-alive is short here so the test sees
 * two of them without waiting long; every wait is on the stream itself.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { HttpDaemon } from "../support/HttpDaemon.js"
import { isStream, openSession, type Reply, SessionHeader, type SseItem, type SseReader } from "../support/HttpMcp.js"
import { error, firstText, result } from "../support/Replies.js"
import { Legacy } from "../support/Revisions.js"
import { era, type Message } from "../support/StdioServe.js"

const config = {
  servers: { alpha: era("legacy-32601", "--list-changed") },
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

/**
 * Reads items until `want` accepts one; fails if the stream ends first, or once `limit`
 * keep-alive comments have gone by without it (so a missing event fails on an event, not a timeout).
 */
const until = (stream: SseReader, want: (item: SseItem) => boolean, what: string, limit = 20): Effect.Effect<SseItem> =>
  Effect.flatMap(stream.next, (item) =>
    item === undefined
      ? Effect.dieMessage(`the GET stream ended before ${what}`)
      : want(item)
      ? Effect.succeed(item)
      : item._tag === "comment" && limit <= 0
      ? Effect.dieMessage(`no ${what} on the GET stream after the keep-alives ran out`)
      : until(stream, want, what, item._tag === "comment" ? limit - 1 : limit))

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
        // The stream ends (other tests' list_changed may have passed on it; never a response).
        const rest = yield* stream.rest
        assert.isTrue(rest.every((i) => i._tag === "comment" || !("id" in i.data)), JSON.stringify(rest))
      })))

    it.effect.each(Legacy)("%s/http/an upstream's tools list_changed reaches the session's GET stream", (revision) =>
      Effect.scoped(Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const session = yield* openSession(http, revision)
        const caps = result(session.initialize).capabilities as Message
        assert.strictEqual((caps.tools as Message | undefined)?.listChanged, true, JSON.stringify(caps))
        const stream = asStream(yield* http.get(session.headers))
        yield* until(stream, (i) => i._tag === "comment", "the opening comment")
        const call = yield* session.request("notify", "tools/call", { name: "alpha__notify_changes", arguments: {} })
        assert.strictEqual(call.status, 200, call.text)
        assert.match(firstText(call.body as Message), /list_changed/)
        const event = yield* until(
          stream,
          (i) => i._tag === "event" && i.data.method === "notifications/tools/list_changed",
          "notifications/tools/list_changed"
        )
        // No event ids: nothing on /mcp is resumable.
        assert.isUndefined(event._tag === "event" ? event.id : "not an event")
      })))

    it.effect.each(Legacy)(
      "%s/http/a resources/subscribe made before the GET stream opens delivers resources/updated on it",
      (revision) =>
        Effect.scoped(Effect.gen(function*() {
          const { http } = yield* HttpDaemon
          const session = yield* openSession(http, revision)
          const listed = yield* session.request("resources", "resources/list")
          const resources = result(listed.body as Message).resources as ReadonlyArray<Message>
          const uri = resources.find((r) => r.name === "readme" || String(r.uri).includes("readme"))?.uri
          assert.isString(uri, listed.text)
          const subscribed = yield* session.request("sub", "resources/subscribe", { uri })
          assert.strictEqual(subscribed.status, 200, subscribed.text)
          const stream = asStream(yield* http.get(session.headers))
          yield* until(stream, (i) => i._tag === "comment", "the opening comment")
          yield* session.request("notify", "tools/call", { name: "alpha__notify_changes", arguments: {} })
          const updated = yield* until(
            stream,
            (i) => i._tag === "event" && i.data.method === "notifications/resources/updated",
            "notifications/resources/updated"
          )
          assert.strictEqual(updated._tag === "event" ? (updated.data.params as Message).uri : undefined, uri)
        }))
    )
  })
})
