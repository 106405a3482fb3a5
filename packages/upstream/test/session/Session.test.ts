import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { makeSession } from "../../src/session/Session.js"
import type { Established } from "../../src/session/SessionModel.js"
import { type Connection, HTTPStatusError, TransportClosed, type TransportError } from "../../src/transport/Transport.js"
import { legacyEstablished, testConnection } from "../util/TestConnection.js"

const legacy = legacyEstablished
const modern: Established = { ...legacy, era: "modern", negotiated: "2026-07-28" }
const options = { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} }

/** A connection whose GET notification stream opens as `stream` says, and that records the calls. */
const connection = (stream: Effect.Effect<void, TransportError>) => {
  const opened: Array<string> = []
  const request: Connection["request"] = (req) => {
    opened.push(req.method)
    return Stream.make({ message: JsonRpc.success(req.id, {}), raw: {} })
  }
  const conn = testConnection(request, { openNotificationStream: Effect.zipRight(Effect.sync(() => void opened.push("GET")), stream) })
  return { conn, opened }
}

describe("Session", () => {
  describe("the legacy GET notification stream", () => {
    it.scoped("is opened when a legacy session starts, before any call", () =>
      Effect.gen(function*() {
        const { conn, opened } = connection(Effect.void)
        const session = yield* makeSession("fake", conn, legacy, options)
        yield* session.request("tools/list")
        assert.deepStrictEqual(opened, ["GET", "tools/list"])
      }))

    it.scoped("is never asked for by a modern session", () =>
      Effect.gen(function*() {
        const { conn, opened } = connection(Effect.void)
        const session = yield* makeSession("fake", conn, modern, options)
        yield* session.request("tools/list")
        assert.deepStrictEqual(opened, ["tools/list"])
      }))

    it.scoped("a server that refuses it still gets a session", () =>
      Effect.gen(function*() {
        const { conn } = connection(Effect.fail(new HTTPStatusError({ status: 400, body: "no stream here" })))
        const session = yield* makeSession("fake", conn, legacy, options)
        assert.deepStrictEqual(yield* session.request("tools/list"), {})
      }))

    it.scoped("a server that never answers the GET holds the start only for the wait", () =>
      Effect.gen(function*() {
        const { conn } = connection(Effect.never)
        const starting = yield* Effect.fork(makeSession("fake", conn, legacy, { ...options, notificationStreamWait: "3 seconds" }))
        yield* TestClock.adjust("2 seconds")
        assert.isNull(starting.unsafePoll())
        yield* TestClock.adjust("1 second")
        const session = yield* Fiber.join(starting)
        assert.strictEqual(session.era, "legacy")
      }))

    it.scoped("a connection that closes while it opens still gets a session that reports the close", () =>
      Effect.gen(function*() {
        const gone = yield* Deferred.make<TransportClosed>()
        yield* Deferred.succeed(gone, new TransportClosed({ reason: "gone" }))
        const { conn } = connection(Effect.fail(new TransportClosed({ reason: "gone" })))
        const session = yield* makeSession("fake", { ...conn, closed: Deferred.await(gone) }, legacy, options)
        assert.strictEqual((yield* session.closed).reason, "gone")
      }))
  })
})
