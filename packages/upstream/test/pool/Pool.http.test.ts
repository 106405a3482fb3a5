/**
 * An HTTP upstream whose era changes while the pool runs: learned modern, it starts refusing
 * modern requests the way a legacy server does, or learned legacy, it turns modern-only. The pool
 * probes it again once (the cache entry forgotten), serves the call in the era found, and tells
 * it as server.era.stale.
 */
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import { EraCache } from "../../src/era/EraCache.js"
import { Pool } from "../../src/pool/Pool.js"
import { type PoolServer, ScopeKey } from "../../src/pool/PoolModel.js"
import type { PoolEvent } from "../../src/pool/PoolEvents.js"
import { HttpDefinition } from "../../src/ServerDefinition.js"
import type { Session } from "../../src/session/SessionModel.js"
import { httpPool } from "../util/HttpPool.js"

const layer = httpPool

const serverAt = (url: string): PoolServer => ({
  definition: new HttpDefinition({ transport: "http", name: "remote", url }),
  probe: {
    preference: "prefer-discover",
    probeTimeout: "2 seconds",
    session: { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} }
  }
})

const hello = (s: Session) => Effect.map(s.request("tools/call", { name: "hello", arguments: {} }), (r) => JSON.stringify(r.content))

const call = (server: PoolServer) => Effect.flatMap(Pool, (pool) => pool.withSession(server, { key: ScopeKey.global }, hello))

/** Moves the running fixture to another mode (its `POST /control`). */
const switchTo = (url: string, mode: string) =>
  Effect.promise(() => fetch(url.replace(/\/mcp$/, "/control"), { method: "POST", body: JSON.stringify({ mode }) }).then((r) => r.text()))

const nextOf = <T extends PoolEvent["type"]>(events: Queue.Dequeue<PoolEvent>, type: T) =>
  Effect.gen(function*() {
    while (true) {
      const e = yield* Queue.take(events)
      if (e.type === type) return e as Extract<PoolEvent, { type: T }>
    }
  })

describe("Pool over a real HTTP upstream that changes era", () => {
  for (const [mode, answer] of [["legacy-exit", "a bare 404"], ["legacy-silent", "a bare 400"]] as const) {
    it.scopedLive(`pool/era-change/http: learned modern, then ${answer}: probed again once and served legacy`, () =>
      Effect.gen(function*() {
        const { url } = yield* Fixtures.startHttpFixture("era-server", ["--mode", "dual"])
        const server = serverAt(url)
        const events = yield* Effect.flatMap(Pool, (p) => p.subscribe)
        assert.include(yield* call(server), "over modern 2026-07-28")
        assert.strictEqual(Option.getOrThrow(yield* Effect.flatMap(EraCache, (c) => c.get(server.definition))).era, "modern")

        yield* switchTo(url, mode)
        // The same call, answered in the era the new probe found.
        assert.include(yield* call(server), "over legacy 2025-11-25")

        const stop = yield* nextOf(events, "server.stop")
        assert.strictEqual(stop.reason, "era-changed")
        const stale = yield* nextOf(events, "server.era.stale")
        assert.deepStrictEqual([stale.cached, stale.era, stale.negotiated], ["modern", "legacy", "2025-11-25"])
        const report = Option.getOrThrow(yield* Effect.flatMap(Pool, (p) => p.report("remote")))
        assert.deepStrictEqual([report.era, report.stale], ["legacy", true])
        assert.isTrue(report.steps.some((s) => s.includes("probing again")))
        assert.strictEqual(Option.getOrThrow(yield* Effect.flatMap(EraCache, (c) => c.get(server.definition))).era, "legacy")
        // Settled: later calls go straight to the legacy session.
        assert.include(yield* call(server), "over legacy 2025-11-25")
      }).pipe(Effect.provide(layer)))
  }

  it.scopedLive("pool/era-change/http: learned legacy, then modern-only (-32022 to the legacy session): probed again once and served modern", () =>
    Effect.gen(function*() {
      const { url } = yield* Fixtures.startHttpFixture("era-server", ["--mode", "legacy-32602"])
      const server = serverAt(url)
      const events = yield* Effect.flatMap(Pool, (p) => p.subscribe)
      assert.include(yield* call(server), "over legacy 2025-11-25")
      assert.strictEqual(Option.getOrThrow(yield* Effect.flatMap(EraCache, (c) => c.get(server.definition))).era, "legacy")

      yield* switchTo(url, "modern-only")
      assert.include(yield* call(server), "over modern 2026-07-28")

      const stop = yield* nextOf(events, "server.stop")
      assert.strictEqual(stop.reason, "era-changed")
      const stale = yield* nextOf(events, "server.era.stale")
      assert.deepStrictEqual([stale.cached, stale.era, stale.negotiated], ["legacy", "modern", "2026-07-28"])
      const report = Option.getOrThrow(yield* Effect.flatMap(Pool, (p) => p.report("remote")))
      assert.deepStrictEqual([report.era, report.stale], ["modern", true])
      assert.strictEqual(Option.getOrThrow(yield* Effect.flatMap(EraCache, (c) => c.get(server.definition))).era, "modern")
      assert.include(yield* call(server), "over modern 2026-07-28")
    }).pipe(Effect.provide(layer)))

  it.scopedLive("pool/era-change/http: a modern server's own errors are passed on, with no second probe", () =>
    Effect.gen(function*() {
      const { url } = yield* Fixtures.startHttpFixture("era-server", ["--mode", "modern-only"])
      const server = serverAt(url)
      const events = yield* Effect.flatMap(Pool, (p) => p.subscribe)
      yield* call(server)
      const unknown = yield* Effect.flatMap(Pool, (pool) => pool.withSession(server, { key: ScopeKey.global }, (s) => s.request("prompts/list"))).pipe(
        Effect.flip
      )
      assert.strictEqual(unknown._tag, "UpstreamRpcError")
      const seen = yield* Queue.takeAll(events)
      assert.deepStrictEqual([...seen].map((e) => e.type), ["server.start"])
    }).pipe(Effect.provide(layer)))
})
