import { assert, describe, it } from "@effect/vitest"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { EraCache } from "../../src/era/EraCache.js"
import { Pool } from "../../src/pool/Pool.js"
import { HTTPStatusError } from "../../src/transport/Transport.js"
import { err, type Script } from "../util/FakeTransport.js"
import {
  call,
  describePool,
  drained,
  dual,
  forkSleeping,
  type Handshake,
  keysOf,
  legacy,
  modern,
  modernOnly,
  next,
  poolErrorOf,
  serve,
  serverOf,
  setup,
  status,
  subscribe,
  tookInPlace,
  warm,
  who
} from "./PoolHarness.js"

describePool(({ ofModernServers }) => {
  describe("events and control", () => {
    if (ofModernServers) {
      it.scoped("pool/events: start, era.stale and stop", () => {
        const { layer } = setup(serve(modernOnly))
        return Effect.gen(function*() {
          const events = yield* subscribe
          const server = serverOf("prefer-discover")
          yield* TestClock.adjust("1 hour")
          yield* Effect.flatMap(EraCache, (c) => c.set(server.definition, { era: "legacy", version: "2025-11-25", exclusive: true }))
          yield* TestClock.adjust("1 hour")
          yield* call(server, modern())
          const start = yield* next(events, "server.start")
          assert.deepStrictEqual(
            [start.server, start.lane, start.key, start.era, start.negotiated, start.eraSource, start.wire],
            ["fake", "modern", "global", "modern", "2026-07-28", "probe", "stdio"]
          )
          assert.isAtLeast(start.durationMs, 0)
          const stale = yield* next(events, "server.era.stale")
          assert.deepStrictEqual(
            [stale.server, stale.cached, stale.cachedVersion, stale.cachedAt, stale.era, stale.negotiated],
            ["fake", "legacy", "2025-11-25", 3_600_000, "modern", "2026-07-28"]
          )
          assert.strictEqual(yield* Effect.flatMap(Pool, (p) => p.stop("fake")), 1)
          const stop = yield* next(events, "server.stop")
          assert.deepStrictEqual([stop.reason, stop.calls], ["stop", 1])
          assert.deepStrictEqual(yield* drained(events), [])
        }).pipe(Effect.provide(layer))
      })
    }

    if (ofModernServers) {
      it.scoped("pool/events: a discover that answers after initialize settled the process tells server.era.stale then", () => {
        const lateDiscover: Handshake = (req, n) =>
          req.method === "server/discover"
            ? Effect.zipRight(Effect.sleep("10 seconds"), dual(req, n))
            : dual(req, n)
        const { layer } = setup(serve(lateDiscover))
        return Effect.gen(function*() {
          const events = yield* subscribe
          const server = serverOf("prefer-discover")
          const fiber = yield* forkSleeping(call(server, modern()))
          yield* TestClock.adjust("2 seconds")
          const served = yield* Fiber.join(fiber)
          assert.deepStrictEqual([served.era, served.eraSource], ["legacy", "probe"])
          assert.strictEqual((yield* next(events, "server.start")).era, "legacy")
          assert.deepStrictEqual(yield* drained(events), [])
          yield* TestClock.adjust("8 seconds")
          const stale = yield* next(events, "server.era.stale")
          assert.deepStrictEqual(
            [stale.cached, stale.cachedVersion, stale.cachedAt, stale.era, stale.negotiated],
            ["legacy", "2025-11-25", 2_000, "modern", "2026-07-28"]
          )
          const cached = yield* Effect.flatMap(EraCache, (c) => c.get(server.definition))
          assert.strictEqual(Option.getOrThrow(cached).era, "modern")
          // The instance keeps serving legacy: initialize chose that for its process.
          assert.strictEqual((yield* call(server, modern())).era, "legacy")
        }).pipe(Effect.provide(layer))
      })
    }

    if (ofModernServers) {
      it.scoped("pool/era-change: a call refused as only a non-modern server refuses it is tried once more on a fresh probe, not again", () => {
        // Discover keeps saying modern, and every call keeps getting a bare 404.
        const refusing: Script = (req, n) =>
          req.method === "tools/call" ? Effect.fail(new HTTPStatusError({ status: 404, body: "Not Found" })) : modernOnly(req, n)
        const { layer, recorder } = setup(refusing, "streamable-http")
        return Effect.gen(function*() {
          const events = yield* subscribe
          const e = yield* Effect.flip(call(serverOf("prefer-discover"), modern()))
          assert.strictEqual(e._tag, "HTTPStatusError")
          // (Each modern HTTP session lists the tools before its first call, for Mcp-Param-* headers.)
          assert.deepStrictEqual(recorder.sent, [
            "1:server/discover",
            "1:tools/list",
            "1:tools/call",
            "2:server/discover",
            "2:tools/list",
            "2:tools/call"
          ])
          const stop = yield* next(events, "server.stop")
          assert.strictEqual(stop.reason, "era-changed")
          // Modern again: nothing was stale.
          assert.deepStrictEqual((yield* drained(events)).filter((t) => t === "server.era.stale"), [])
        }).pipe(Effect.provide(layer))
      })
    }

    if (ofModernServers) {
      it.effect("pool/reports: the last report of each server's own session", () => {
        const { layer } = setup(serve(dual))
        return Effect.gen(function*() {
          const pool = yield* Pool
          assert.isTrue(Option.isNone(yield* pool.report("fake")))
          yield* call(serverOf("follow"), legacy())
          const report = yield* pool.report("fake")
          assert.strictEqual(Option.getOrThrow(report).era, "modern")
          assert.strictEqual(Option.getOrThrow(report).preference, "follow")
          yield* call(serverOf("prefer-discover", {}, "other"), modern())
          assert.deepStrictEqual((yield* pool.reports).map((r) => r.server), ["fake", "other"])
          assert.strictEqual((yield* status()).report?.negotiated, "2026-07-28")
        }).pipe(Effect.provide(layer))
      })
    }

    it.effect("pool/stop: a call in flight fails as stopped, and the next call starts a new pool", () => {
      const entered = Deferred.unsafeMake<number>(FiberId.none)
      const { layer, recorder } = setup(serve(dual, { hold: (n) => n === 1, entered }))
      return Effect.gen(function*() {
        const server = serverOf("prefer-discover")
        yield* warm(server, modern())
        const inFlight = yield* Effect.fork(Effect.flip(call(server, modern())))
        yield* Deferred.await(entered)
        tookInPlace(recorder, ["1:tools/call"])
        assert.strictEqual(yield* Effect.flatMap(Pool, (p) => p.stop("fake")), 1)
        const e = poolErrorOf(yield* Fiber.join(inFlight))
        assert.strictEqual(e.reason, "stopped")
        assert.include(e.message, "fake")
        assert.deepStrictEqual(yield* Effect.flatMap(Pool, (p) => p.snapshot), [])
        assert.strictEqual((yield* call(server, modern())).conn, 2)
        assert.strictEqual(recorder.opened, 2)
      }).pipe(Effect.provide(layer))
    })

    it.effect("pool/stopCalls: a call in flight is cut short as shutdown, and every later call fails the same at once", () => {
      const entered = Deferred.unsafeMake<number>(FiberId.none)
      const { layer, recorder } = setup(serve(dual, { hold: (n) => n === 1, entered }))
      return Effect.gen(function*() {
        const pool = yield* Pool
        const server = serverOf("prefer-discover")
        yield* warm(server, modern())
        const inFlight = yield* Effect.fork(Effect.flip(call(server, modern())))
        yield* Deferred.await(entered)
        tookInPlace(recorder, ["1:tools/call"])
        yield* pool.stopCalls
        const e = poolErrorOf(yield* Fiber.join(inFlight))
        assert.strictEqual(e.reason, "shutdown")
        assert.deepStrictEqual(recorder.cancelled, ["1:tools/call"])
        assert.include(e.message, "shutting down")
        const later = poolErrorOf(yield* Effect.flip(call(server, modern())))
        assert.strictEqual(later.reason, "shutdown")
        assert.strictEqual(recorder.opened, 1)
      }).pipe(Effect.provide(layer))
    })

    if (ofModernServers) {
      it.effect("pool/restart: stops every instance, forgets the cooldown and starts the kept keys again", () => {
        let healthy = true
        const flaky: Handshake = (req, n) => (healthy ? dual(req, n) : err(req, ErrorCode.MethodNotFound, "not today"))
        const { layer, recorder } = setup(serve(flaky))
        return Effect.gen(function*() {
          const pool = yield* Pool
          const server = serverOf("force-discover", { max: 3 })
          yield* call(server, modern("a"))
          yield* call(server, modern("b"))
          healthy = false
          assert.strictEqual(poolErrorOf(yield* Effect.flip(call(server, modern("c")))).reason, "start-failed")
          healthy = true
          const result = yield* pool.restart(server)
          assert.strictEqual(result.stopped, 2)
          assert.deepStrictEqual(result.started.map((s) => s.key).sort(), ["session:a", "session:b"])
          assert.deepStrictEqual(result.failed, [])
          assert.strictEqual(recorder.opened, 5)
          assert.strictEqual((yield* call(server, modern("c"))).conn, 6) // no cooldown left
          assert.deepStrictEqual(keysOf(yield* status()), ["session:a", "session:b", "session:c"])
        }).pipe(Effect.provide(layer))
      })
    }

    it.scoped("pool/reconfigure: new settings get a fresh pool; the old instance closes once idle", () => {
      const { layer, connections } = setup(serve(dual))
      return Effect.gen(function*() {
        const events = yield* subscribe
        assert.strictEqual((yield* call(serverOf("prefer-discover", { max: 1 }), modern())).conn, 1)
        assert.strictEqual((yield* call(serverOf("prefer-discover", { max: 2 }), modern())).conn, 2)
        const stop = yield* next(events, "server.stop")
        assert.deepStrictEqual([stop.instance.startsWith("fake#"), stop.reason], [true, "reconfigured"])
        assert.strictEqual(connections.get(1)?.ended(), "closed")
        assert.deepStrictEqual((yield* status()).lanes.map((l) => l.max), [2])
      }).pipe(Effect.provide(layer))
    })

    if (ofModernServers) {
      it.effect("pool/exit: closing the layer closes every instance", () => {
        const { layer, connections } = setup(serve(dual))
        return Effect.gen(function*() {
          yield* Effect.scoped(Effect.gen(function*() {
            const built = yield* Layer.build(layer)
            const pool = yield* Effect.provide(Pool, built)
            yield* pool.withSession(serverOf("follow"), modern(), who)
            yield* pool.withSession(serverOf("follow"), legacy(), who)
          }))
          assert.deepStrictEqual([connections.get(1)?.ended(), connections.get(2)?.ended()], ["closed", "closed"])
        })
      })
    }
  })
})
