/**
 * Seed 002, "stdio, every revision", over the bundle: requests run side by side, notifications
 * are never answered, and a caller names its own identity in `_meta["dev.mcpx/session"]`. One
 * `mcpx-fx serve` per revision, shared by the tests of that revision.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as EraLog from "../support/EraLog.js"
import { firstText } from "../support/Replies.js"
import { All, open, speaking } from "../support/Revisions.js"
import { era, type Frame, responseId, SharedServe } from "../support/StdioServe.js"

const identLog = "ident.log"

const config = (sb: { readonly path: (...s: ReadonlyArray<string>) => string }) => ({
  servers: {
    alpha: era("dual"),
    // A legacy upstream pooled per caller session, logging every initialize: one per session.
    ident: { ...era("legacy-32601", "--log", sb.path(identLog)), pool: { scope: "session", max: 8 } }
  },
  settings: { "transport.stdioDrain": "5s" }
})

const answered = (frames: ReadonlyArray<Frame>, id: string) => frames.some((f) => responseId(f) === id)

describe.concurrent.each(All)("%s", (revision) => {
  layer(SharedServe.layer(config, (serve) => Effect.asVoid(open(serve, revision))))("stdio requests", (it) => {
    it.effect(`${revision}/stdio/requests run concurrently, each under its own fiber`, () =>
      Effect.gen(function*() {
        const serve = yield* SharedServe
        const host = speaking(serve, revision)
        yield* host.send("conc-slow", "tools/call", { name: "alpha__slow", arguments: { ms: 600_000 } })
        // Sent after the slow call: only a concurrent host can answer it first.
        assert.strictEqual(firstText(yield* host.call("conc-fast", "alpha__echo", { message: "fast" })), "fast")
        assert.isFalse(answered(yield* serve.frames, "conc-slow"))
        yield* serve.send({ method: "notifications/cancelled", params: { requestId: "conc-slow" } })
        yield* host.cheap("conc-after")
        assert.isFalse(answered(yield* serve.frames, "conc-slow"))
      }))

    it.effect(`${revision}/stdio/replies written at once each reach stdout as one whole line`, () =>
      Effect.gen(function*() {
        const serve = yield* SharedServe
        const host = speaking(serve, revision)
        // Large replies, all in flight together: nothing serialises the writes to stdout, so each
        // line must go out whole by itself (a torn one fails the harness as not JSON-RPC).
        const messages = Array.from({ length: 48 }, (_, i) => `whole-${i}-${"x".repeat(16_384)}`)
        const replies = yield* Effect.forEach(messages, (message, i) => host.call(`whole-${i}`, "alpha__echo", { message }), {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(replies.map(firstText), messages)
      }))

    it.effect(`${revision}/stdio/notifications are never answered`, () =>
      Effect.gen(function*() {
        const serve = yield* SharedServe
        const host = speaking(serve, revision)
        const notifications = [
          { method: "notifications/initialized" },
          { method: "notifications/no/such/notification", params: { x: 1 } },
          { method: "notifications/cancelled", params: { requestId: "never-sent" } },
          { method: "notifications/cancelled" },
          { method: "notifications/progress", params: { progressToken: "t", progress: 1 } },
          { method: "notifications/roots/list_changed" },
          { method: "notifications/message", params: { level: "info", data: "x", _meta: {} } }
        ]
        for (const n of notifications) yield* serve.send(n)
        // Notifications are handled in line, so any answer to one would precede this reply.
        yield* host.cheap("notif-after")
        const frames = yield* serve.frames
        const idless = frames.filter((f) => Array.isArray(f) || responseId(f) === null)
        assert.deepStrictEqual(idless, [])
      }))

    it.effect(`${revision}/stdio/caller identity comes from _meta dev.mcpx/session`, () =>
      Effect.gen(function*() {
        const serve = yield* SharedServe
        const host = speaking(serve, revision)
        const log = serve.sandbox.path(identLog)
        const call = (id: string, session: string) => Effect.map(host.call(id, "ident__echo", { message: id }, { "dev.mcpx/session": session }), firstText)
        assert.strictEqual(yield* call("ident-1", "first"), "ident-1")
        const sessions = EraLog.count(log, "initialize")
        assert.isAtLeast(sessions, 1)
        assert.strictEqual(yield* call("ident-2", "first"), "ident-2")
        assert.strictEqual(EraLog.count(log, "initialize"), sessions, "the same session id reuses its upstream session")
        assert.strictEqual(yield* call("ident-3", "second"), "ident-3")
        assert.strictEqual(EraLog.count(log, "initialize"), sessions + 1, "another session id gets a session of its own")
      }))
  })
})
