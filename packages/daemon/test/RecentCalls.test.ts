/**
 * The recent-calls ring behind `/v1/calls/recent`, and the owner checks of the live page's edge:
 * the ring keeps its last `capacity` calls, newest first; a reader waiting for a newer call is
 * answered when one is recorded; a reader from before a restart gets everything kept; calls are
 * kept only while something reads them, described from their observation. The owner
 * secret counts only from this machine, and only exactly.
 */
import { assert, describe, it } from "@effect/vitest"
import * as CallObserver from "@mcpx-fx/gateway/CallObserver"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import { createHash } from "node:crypto"
import * as Redact from "@mcpx-fx/gateway/Redact"
import * as CallsRoutes from "../src/CallsRoutes.js"
import * as OwnerAccess from "../src/OwnerAccess.js"
import * as RecentCalls from "../src/RecentCalls.js"

class Refused extends Data.TaggedError("Refused")<{ readonly message: string }> {}

const finished = (tool: string): RecentCalls.Finished => ({ at: 0, tool, via: "v1", durationMs: 1, outcome: "ok" })

describe("recent calls", () => {
  it.effect("recent/off: a daemon that keeps no calls shows the owner none, at once", () =>
    Effect.gen(function*() {
      const shown = yield* CallsRoutes.recent({ waitMs: 60_000 }).pipe(
        Effect.locally(Redact.RawForOwner, true),
        Effect.provide(RecentCalls.off)
      )
      assert.deepStrictEqual(shown, { calls: [], last: 0, capacity: 0 })
    }))

  it.effect("recent/ring: the last `capacity` calls, newest first, numbered from 1", () =>
    Effect.gen(function*() {
      const ring = RecentCalls.make(2)
      for (const tool of ["a", "b", "c"]) yield* ring.record(finished(tool))
      const all = yield* ring.since(-1, 0)
      assert.deepStrictEqual(all.calls.map((c) => [c.seq, c.tool]), [[3, "c"], [2, "b"]])
      assert.strictEqual(all.last, 3)
      assert.deepStrictEqual((yield* ring.since(2, 0)).calls.map((c) => c.tool), ["c"])
      // A reader that saw more than there is (the daemon restarted) gets all there is at once.
      assert.deepStrictEqual((yield* ring.since(9, "1 hour")).calls.map((c) => c.tool), ["c", "b"])
    }))

  it.effect("recent/wait: a reader up to date waits for the next call, and is answered with it", () =>
    Effect.gen(function*() {
      const ring = RecentCalls.make()
      yield* ring.record(finished("a"))
      const waiting = yield* Effect.fork(ring.since(1, "1 hour"))
      yield* ring.record(finished("b"))
      const next = yield* Fiber.join(waiting)
      assert.deepStrictEqual(next.calls.map((c) => c.tool), ["b"])
      assert.strictEqual(next.last, 2)
    }))

  it.effect("recent/readers: calls are kept only while something reads the ring", () =>
    Effect.gen(function*() {
      const ring = RecentCalls.make()
      const now = () => Effect.map(Clock.currentTimeMillis, (ms) => ring.read(ms))
      // Nobody has read it: a call would be kept for no one.
      assert.isFalse(yield* now())
      yield* ring.since(0, 0)
      assert.isTrue(yield* now())
      // A reader that left (no read for a minute) no longer counts.
      yield* TestClock.adjust(RecentCalls.ReaderGrace)
      assert.isFalse(yield* now())
      // One waiting for the next call counts for as long as it waits.
      const waiting = yield* Effect.fork(ring.since(0, "1 hour"))
      yield* TestClock.adjust("30 minutes")
      assert.isTrue(yield* now())
      yield* Fiber.interrupt(waiting)
      yield* TestClock.adjust(RecentCalls.ReaderGrace)
      assert.isFalse(yield* now())
    }))

  it.effect("recent/sink: an observed call is kept as who made it: a host, a /v1 task or a /v1 route", () =>
    Effect.gen(function*() {
      const ring = RecentCalls.make()
      const sink = RecentCalls.sink(ring)
      const observed = (observation: CallObserver.Observation, exit: Exit.Exit<JsonObject, unknown>): CallObserver.ObservedCall => ({
        observation,
        at: 5,
        durationMs: 7,
        exit
      })
      sink.record(observed(new CallObserver.Observation("backend", "a__x", "s1", "2025-11-25", { name: "host", version: "2" }), Exit.succeed({})))
      sink.record(observed(new CallObserver.Observation("backend", "a__y", "/v1:abc", "2026-07-28", undefined), Exit.succeed({ isError: true })))
      sink.record(observed(new CallObserver.Observation("v1", "a__z", "/v1:abc", undefined, undefined), Exit.fail(new Refused({ message: "refused" }))))
      const { calls } = yield* ring.since(0, 0)
      assert.deepStrictEqual(calls.map(({ seq: _, ...c }) => c), [
        { at: 5, durationMs: 7, tool: "a__z", via: "v1", session: "/v1:abc", outcome: "error", error: "refused" },
        { at: 5, durationMs: 7, tool: "a__y", via: "task", session: "abc", outcome: "tool-error" },
        { at: 5, durationMs: 7, tool: "a__x", via: "mcp", revision: "2025-11-25", client: "host 2", session: "s1", outcome: "ok" }
      ])
    }))

  it("recent/owner: the secret counts from loopback peers only, and only the exact secret", () => {
    for (const peer of ["127.0.0.1", "127.8.0.3", "::1", "::ffff:127.0.0.1"]) assert.isTrue(OwnerAccess.isLoopbackPeer(peer), peer)
    for (const peer of ["10.0.0.2", "192.168.1.5", "::ffff:10.0.0.2", "fe80::1", "1127.0.0.1"]) assert.isFalse(OwnerAccess.isLoopbackPeer(peer), peer)
    const expected = createHash("sha256").update("s3cret-s3cret-s3cret").digest()
    assert.isTrue(OwnerAccess.carriesSecret(expected, "Bearer s3cret-s3cret-s3cret"))
    assert.isTrue(OwnerAccess.carriesSecret(expected, "bearer  s3cret-s3cret-s3cret "))
    for (const header of [undefined, "", "Bearer", "Bearer s3cret-s3cret-s3cre", "Basic s3cret-s3cret-s3cret", "Bearer s3cret-s3cret-s3cret x"]) {
      assert.isFalse(OwnerAccess.carriesSecret(expected, header), String(header))
    }
  })
})
