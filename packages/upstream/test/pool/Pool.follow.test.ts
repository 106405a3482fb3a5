import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as TestClock from "effect/TestClock"
import { ScopeKey } from "../../src/pool/PoolModel.js"
import { TransportClosed } from "../../src/transport/Transport.js"
import {
  busyOf,
  call,
  describePool,
  dual,
  eventually,
  type Handshake,
  heldDiscover,
  legacy,
  legacyOnly,
  modern,
  modernOnly,
  next,
  serve,
  serverOf,
  setup,
  status,
  subscribe
} from "./PoolHarness.js"

describePool(() => {
  describe("follow", () => {
    it.effect("pool/follow/dual: modern callers get the server's own session, legacy callers a forced legacy-only one", () => {
      const { layer, recorder } = setup(serve(dual))
      return Effect.gen(function*() {
        const server = serverOf("follow")
        const m = yield* call(server, modern())
        assert.deepStrictEqual(m, { conn: 1, era: "modern", eraSource: "probe" })
        const l = yield* call(server, legacy())
        assert.deepStrictEqual(l, { conn: 2, era: "legacy", eraSource: "forced" })
        assert.deepStrictEqual(recorder.sent.filter((s) => s.startsWith("2:")), [
          "2:initialize",
          "2:notifications/initialized",
          "2:tools/call"
        ])
        // Later calls stay on their lanes; a 2026 caller with an explicit revision is modern.
        assert.strictEqual((yield* call(server, legacy())).conn, 2)
        assert.strictEqual((yield* call(server, { key: ScopeKey.global, revision: "2026-07-28" })).conn, 1)
        const s = yield* status()
        assert.deepStrictEqual(s.instances.map((i) => [i.lane, i.key, i.era, i.eraSource]), [
          ["modern", "global", "modern", "probe"],
          ["legacy", "global", "legacy", "forced"]
        ])
        assert.strictEqual(recorder.opened, 2)
      }).pipe(Effect.provide(layer))
    })

    it.effect("pool/follow/dual: a legacy caller first starts the server's own session, then the legacy-only one", () => {
      const { layer, recorder } = setup(serve(dual))
      return Effect.gen(function*() {
        const server = serverOf("follow")
        assert.deepStrictEqual(yield* call(server, legacy()), { conn: 2, era: "legacy", eraSource: "forced" })
        assert.deepStrictEqual(yield* call(server, modern()), { conn: 1, era: "modern", eraSource: "probe" })
        assert.strictEqual(recorder.opened, 2)
      }).pipe(Effect.provide(layer))
    })

    it.effect("pool/follow/legacy-only: a legacy caller shares the modern-lane instance that settled legacy", () => {
      const { layer, recorder } = setup(serve(legacyOnly))
      return Effect.gen(function*() {
        const server = serverOf("follow")
        assert.deepStrictEqual(yield* call(server, legacy()), { conn: 1, era: "legacy", eraSource: "probe" })
        assert.deepStrictEqual(yield* call(server, modern()), { conn: 1, era: "legacy", eraSource: "probe" })
        assert.strictEqual((yield* call(server, legacy())).conn, 1)
        assert.strictEqual(recorder.opened, 1)
        const s = yield* status()
        assert.deepStrictEqual(s.instances.map((i) => i.lane), ["modern"])
      }).pipe(Effect.provide(layer))
    })

    it.effect("pool/follow/legacy-only: concurrent legacy and modern first callers share one start", () => {
      const gate = Deferred.unsafeMake<void>(FiberId.none)
      const held = heldDiscover(legacyOnly, gate)
      const { layer, recorder } = setup(serve(held))
      return Effect.gen(function*() {
        const server = serverOf("follow")
        const both = yield* Effect.fork(Effect.all([call(server, legacy()), call(server, modern())], { concurrency: "unbounded" }))
        yield* eventually("both callers wait on one start", Effect.map(busyOf(), (n) => n === 2))
        yield* Deferred.succeed(gate, undefined)
        const served = yield* Fiber.join(both)
        assert.deepStrictEqual(served.map((s) => s.conn), [1, 1])
        assert.strictEqual(recorder.opened, 1)
      }).pipe(Effect.provide(layer))
    })

    it.scoped("pool/follow/modern-only: a refused legacy-only start is remembered and legacy callers share the modern session", () => {
      const { layer, recorder } = setup(serve(modernOnly))
      return Effect.gen(function*() {
        const events = yield* subscribe
        const server = serverOf("follow", { max: 2 })
        assert.deepStrictEqual(yield* call(server, legacy()), { conn: 1, era: "modern", eraSource: "probe" })
        assert.strictEqual(recorder.opened, 2) // the server's own session, and the refused legacy-only try
        const refused = yield* next(events, "server.start.failed")
        assert.strictEqual(refused.lane, "legacy")
        assert.isUndefined(refused.retryInMs)
        assert.include((yield* status()).legacyRefused ?? "", "initialize")

        // Remembered: no further legacy-only start, even long after any cooldown would have passed.
        yield* TestClock.adjust("4 minutes")
        assert.strictEqual((yield* call(server, legacy("other"))).conn, 3)
        assert.strictEqual((yield* call(server, legacy())).conn, 1)
        assert.strictEqual(recorder.sent.filter((m) => m.endsWith(":initialize")).length, 1)
        assert.strictEqual(recorder.opened, 3)
      }).pipe(Effect.provide(layer))
    })

    it.effect("pool/follow/legacy-failure: a failed legacy-only start is cooled down, not remembered; legacy callers share meanwhile", () => {
      const flaky: Handshake = (req, n) =>
        req.method === "initialize" && n === 2
          ? Effect.fail(new TransportClosed({ reason: "the process exited", exitCode: 1 }))
          : dual(req, n)
      const { layer, recorder } = setup(serve(flaky))
      return Effect.gen(function*() {
        const server = serverOf("follow", { cooldownBase: "1 second" })
        yield* call(server, modern())
        assert.deepStrictEqual(yield* call(server, legacy()), { conn: 1, era: "modern", eraSource: "probe" })
        const s = yield* status()
        assert.isUndefined(s.legacyRefused)
        assert.strictEqual(s.lanes.find((l) => l.lane === "legacy")?.cooldown?.retryInMs, 1000)
        assert.strictEqual((yield* call(server, legacy())).conn, 1)
        assert.strictEqual(recorder.opened, 2)
        yield* TestClock.adjust("1 second")
        assert.deepStrictEqual(yield* call(server, legacy()), { conn: 3, era: "legacy", eraSource: "forced" })
      }).pipe(Effect.provide(layer))
    })

    it.effect("pool/follow/isolation: a legacy call the server never finishes does not stall a modern call", () => {
      const entered = Deferred.unsafeMake<number>(FiberId.none)
      const legacyConns = new Set<number>()
      const tracking: Handshake = (req, n) => {
        if (req.method === "initialize") legacyConns.add(n)
        return dual(req, n)
      }
      const { layer } = setup(serve(tracking, { hold: (n) => legacyConns.has(n), entered }))
      return Effect.gen(function*() {
        const server = serverOf("follow") // max 1 per lane
        yield* call(server, modern())
        const stuck = yield* Effect.fork(call(server, legacy()))
        assert.strictEqual(yield* Deferred.await(entered), 2)
        const m = yield* call(server, modern())
        assert.deepStrictEqual([m.conn, m.era], [1, "modern"])
        const s = yield* status()
        assert.deepStrictEqual(s.instances.map((i) => [i.lane, i.busy]), [["modern", 0], ["legacy", 1]])
        yield* Fiber.interrupt(stuck)
        assert.deepStrictEqual((yield* status()).instances.map((i) => [i.lane, i.busy]), [["modern", 0], ["legacy", 0]])
      }).pipe(Effect.provide(layer))
    })

    it.effect("pool/follow: other preferences put every caller on the modern lane", () => {
      const { layer, recorder } = setup(serve(dual))
      return Effect.gen(function*() {
        const server = serverOf("prefer-discover")
        assert.deepStrictEqual(yield* call(server, legacy()), { conn: 1, era: "modern", eraSource: "probe" })
        assert.strictEqual((yield* call(server, modern())).conn, 1)
        assert.strictEqual(recorder.opened, 1)
        assert.deepStrictEqual((yield* status()).lanes.map((l) => l.lane), ["modern"])
      }).pipe(Effect.provide(layer))
    })
  })
}, ["general"])
