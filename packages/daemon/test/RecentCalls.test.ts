/**
 * The recent-calls ring behind `/v1/calls/recent`, and the owner checks of the live page's edge:
 * the ring keeps its last `capacity` calls, newest first; a reader waiting for a newer call is
 * answered when one is recorded; a reader from before a restart gets everything kept. The owner
 * secret counts only from this machine, and only exactly.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { createHash } from "node:crypto"
import * as OwnerAccess from "../src/OwnerAccess.js"
import * as RecentCalls from "../src/RecentCalls.js"

const finished = (tool: string): RecentCalls.Finished => ({ at: 0, tool, via: "v1", durationMs: 1, outcome: "ok" })

describe("recent calls", () => {
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
