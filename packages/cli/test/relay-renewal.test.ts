/**
 * `serve --relay`'s session renewal, against a daemon faked at the wire: the relay's side of
 * the daemon is the upstream engine's Streamable HTTP connection, whose `SessionExpired` (a 404 to
 * the session it sent) the relay answers by initializing again in the host's words on that same
 * connection and sending the request once more. The end-to-end restart of a real daemon is in
 * serve-relay.test.ts; this one shows what went over the wire.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as Wire from "@mcpx-fx/upstream/transport/Wire"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Mailbox from "effect/Mailbox"
import * as Queue from "effect/Queue"
import { relayOn } from "../src/Relay.js"

interface Sent {
  readonly method: string
  readonly session: string | undefined
  readonly body: Record<string, unknown> | undefined
}

interface Answer {
  readonly status: number
  readonly body?: string
  readonly headers?: Readonly<Record<string, string>>
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => ({
  status,
  body: JSON.stringify(body),
  headers: { "content-type": "application/json", ...headers }
})

/**
 * A daemon that knows the sessions it minted until it `restart`s, answers every request with the
 * session it came on, refuses the GET stream (405), and records what it was sent. After a restart
 * it holds its 404s back until `together` requests have met one, so that they all went out on the
 * forgotten session.
 */
const fakeDaemon = (together = 1) =>
  Effect.gen(function*() {
    const known = new Set<string>()
    const sent: Array<Sent> = []
    const allStale = yield* Deferred.make<void>()
    let minted = 0
    let stale = 0
    let refusing = false
    const answer = (method: string, session: string | undefined, body: Record<string, unknown> | undefined): Effect.Effect<Answer> => {
      if (method === "GET") return Effect.succeed({ status: 405 })
      if (method === "DELETE") return Effect.succeed({ status: 200 })
      if (body?.method === "initialize") {
        if (refusing) return Effect.succeed(json(503, { jsonrpc: "2.0", id: body.id, error: { code: -32603, message: "not now" } }))
        const sid = `s${++minted}`
        known.add(sid)
        const result = { protocolVersion: "2025-11-25", capabilities: {}, serverInfo: { name: "fake", version: "0" } }
        return Effect.succeed(json(200, { jsonrpc: "2.0", id: body.id, result }, { "mcp-session-id": sid }))
      }
      if (session !== undefined && !known.has(session)) {
        if (++stale >= together) Deferred.unsafeDone(allStale, Effect.void)
        return Effect.as(Deferred.await(allStale), json(404, { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" } }))
      }
      if (body?.id === undefined) return Effect.succeed({ status: 202 })
      return Effect.succeed(json(200, { jsonrpc: "2.0", id: body.id, result: { session } }))
    }
    const respond = (request: Wire.WireRequest) =>
      Effect.suspend(() => {
        const body = request.body === undefined ? undefined : (JSON.parse(request.body) as Record<string, unknown>)
        const session = request.headers["mcp-session-id"]
        sent.push({ method: request.method, session, body })
        return Effect.map(answer(request.method, session, body), (a) => {
          let pending: Uint8Array | undefined = new TextEncoder().encode(a.body ?? "")
          return {
            body: a.body ?? "",
            status: a.status,
            headers: a.headers ?? {},
            text: () => Effect.succeed(a.body ?? ""),
            // The body in one chunk, then its end.
            next: Effect.sync(() => {
              const chunk = pending
              pending = undefined
              return chunk
            }),
            release: () => {}
          }
        })
      })
    const wire: Wire.Wire = {
      send: respond,
      // The answer told to the reader as undici would: its start, its body in one chunk, its end.
      dispatch: (request, reader) => {
        Effect.runFork(Effect.map(respond(request), (response) => {
          if (!reader.begin(response)) return
          reader.end(reader.chunk(Buffer.from(response.body)))
        }))
        return { release: () => {} }
      },
      abortInFlight: Effect.void
    }
    /** Forgets every session; `refuse`: and refuses to open another. */
    const restart = (refuse = false) => {
      known.clear()
      refusing = refuse
    }
    return { wire, sent, restart }
  })

const initialize = {
  jsonrpc: "2.0",
  id: "init",
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "host", version: "1" } }
}

/** A relay whose host is driven line by line; `reply` takes the next line it wrote. */
const relayed = (wire: Wire.Wire) =>
  Effect.gen(function*() {
    const input = yield* Mailbox.make<string>()
    const output = yield* Queue.unbounded<string>()
    const fiber = yield* Effect.fork(relayOn(wire, Mailbox.toStream(input), (line) => Queue.offer(output, line), { drain: "1 second" }))
    return {
      send: (message: unknown) => input.offer(JSON.stringify(message)),
      reply: Effect.map(Queue.take(output), (line) => JSON.parse(line) as Record<string, unknown>),
      end: Effect.zipRight(input.end, Fiber.join(fiber))
    }
  })

const request = (id: string) => ({ jsonrpc: "2.0", id, method: "ping" })

describe("serve --relay, a session the daemon forgot", () => {
  it.effect("is opened again in the host's words on the same connection, and the requests are sent once more", () =>
    Effect.gen(function*() {
      const daemon = yield* fakeDaemon(2)
      const host = yield* relayed(daemon.wire)
      yield* host.send(initialize)
      assert.strictEqual((yield* host.reply).id, "init")
      yield* host.send({ jsonrpc: "2.0", method: "notifications/initialized" })
      yield* host.send(request("before"))
      assert.deepStrictEqual(yield* host.reply, { jsonrpc: "2.0", id: "before", result: { session: "s1" } })

      daemon.restart()
      // Two at once: both meet the 404, and one renewal serves both.
      yield* host.send(request("after-1"))
      yield* host.send(request("after-2"))
      const replies = [yield* host.reply, yield* host.reply].sort((a, b) => String(a.id).localeCompare(String(b.id)))
      assert.deepStrictEqual(replies, [
        { jsonrpc: "2.0", id: "after-1", result: { session: "s2" } },
        { jsonrpc: "2.0", id: "after-2", result: { session: "s2" } }
      ])
      yield* host.end

      const posts = daemon.sent.filter((s) => s.method === "POST")
      const initializes = posts.filter((s) => s.body?.method === "initialize")
      assert.deepStrictEqual(initializes.map((s) => s.body), [initialize, initialize])
      // The new session was announced as the host announced the first, before the request went again.
      const renewed = posts.findIndex((s) => s === initializes[1])
      const after = posts.slice(renewed + 1)
      assert.deepStrictEqual(after[0], { method: "POST", session: "s2", body: { jsonrpc: "2.0", method: "notifications/initialized" } })
      assert.sameMembers(after.slice(1).map((s) => `${s.session} ${String(s.body?.id)}`), ["s2 after-1", "s2 after-2"])
      // The session the connection ended at the close is the new one.
      assert.deepStrictEqual(daemon.sent.filter((s) => s.method === "DELETE").map((s) => s.session), ["s2"])
    }))

  it.effect("that refuses to open another leaves the request with an error under its id, tried once", () =>
    Effect.gen(function*() {
      const daemon = yield* fakeDaemon()
      const host = yield* relayed(daemon.wire)
      yield* host.send(initialize)
      yield* host.reply
      daemon.restart(true)
      yield* host.send(request("after"))
      const reply = yield* host.reply
      assert.strictEqual(reply.id, "after")
      const error = reply.error as { code: number; message: string }
      assert.strictEqual(error.code, -32603)
      assert.include(error.message, "no longer knows session s1")
      yield* host.end
      assert.strictEqual(daemon.sent.filter((s) => s.body?.method === "initialize").length, 2)
      assert.strictEqual(daemon.sent.filter((s) => s.body?.id === "after").length, 1)
    }))
})
