import { assert, describe, it } from "@effect/vitest"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { EraCache } from "../../src/era/EraCache.js"
import { Negotiator } from "../../src/era/Negotiator.js"
import type { Preference } from "../../src/era/Preference.js"
import { Prober } from "../../src/era/Prober.js"
import type { ProbeOptions } from "../../src/era/ProbeModel.js"
import { HttpDefinition, StdioDefinition } from "../../src/ServerDefinition.js"
import { SessionExpired, TransportClosed } from "../../src/transport/Transport.js"
import { discoverResult, err, fakeTransport, initializeResult, ok, type Recorder, type Script } from "../util/FakeTransport.js"

const def = new StdioDefinition({ transport: "stdio", name: "fake", command: "fake-server" })

const options = (preference: Preference, extra: Partial<ProbeOptions> = {}): ProbeOptions => ({
  preference,
  probeTimeout: "2 seconds",
  session: { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} },
  ...extra
})

const setup = (script: Script, wire: "stdio" | "streamable-http" = "stdio") => {
  const recorder: Recorder = { sent: [], opened: 0, cancelled: [] }
  const layer = Prober.layer.pipe(
    Layer.provideMerge(EraCache.layerMemory),
    Layer.provide(Negotiator.layer),
    Layer.provide(fakeTransport(script, recorder, wire))
  )
  return { recorder, layer }
}

// Servers as scripts, named by what they do with each request.
const legacyAnswering = (code: number): Script => (req) =>
  req.method === "initialize" ? ok(req, initializeResult("2025-11-25")) : err(req, code, "not initialized")
const dual: Script = (req) => req.method === "initialize" ? ok(req, initializeResult("2025-11-25")) : ok(req, discoverResult(["2026-07-28"]))
const modernOnly: Script = (req) =>
  req.method === "initialize"
    ? err(req, ErrorCode.UnsupportedProtocolVersion, "initialize is not served", { supported: ["2026-07-28"], requested: "2025-11-25" })
    : ok(req, discoverResult(["2026-07-28"]))

/** A server whose discover answers modern after `delay`; every other request goes to `otherwise`. */
const discoverAfter = (delay: Duration.DurationInput, otherwise: Script): Script => (req, n) =>
  req.method === "server/discover" ? Effect.zipRight(Effect.sleep(delay), ok(req, discoverResult(["2026-07-28"]))) : otherwise(req, n)

const start = (preference: Preference, extra: Partial<ProbeOptions> = {}) => Effect.flatMap(Prober, (p) => p.start(def, options(preference, extra)))

describe("Prober", () => {
  it.scoped("2026-07-28/era-probe/modern-on-discover-result", () => {
    const { recorder, layer } = setup(dual)
    return Effect.gen(function*() {
      const { report, session } = yield* start("prefer-discover")
      assert.strictEqual(report.era, "modern")
      assert.strictEqual(session.negotiated, "2026-07-28")
      assert.strictEqual(report.eraSource, "probe")
      assert.deepStrictEqual(recorder.sent, ["1:server/discover"])
    }).pipe(Effect.provide(layer))
  })

  it.scoped("2026-07-28/era-probe/legacy-on-any-other-error", () => {
    const { recorder, layer } = setup(legacyAnswering(ErrorCode.InvalidParams))
    return Effect.gen(function*() {
      const { report, session } = yield* start("prefer-discover")
      assert.strictEqual(report.era, "legacy")
      assert.strictEqual(session.negotiated, "2025-11-25")
      assert.deepStrictEqual(recorder.sent, ["1:server/discover", "1:initialize", "1:notifications/initialized"])
    }).pipe(Effect.provide(layer))
  })

  it.scoped("2026-07-28/era-probe/modern-error-means-modern", () => {
    const { layer } = setup((req) => err(req, ErrorCode.MissingRequiredClientCapability, "needs elicitation", { requiredCapabilities: { elicitation: {} } }))
    return Effect.gen(function*() {
      const { report } = yield* start("prefer-discover")
      assert.strictEqual(report.era, "modern")
    }).pipe(Effect.provide(layer))
  })

  it.scoped("2026-07-28/era-probe/success-that-is-not-discover-is-legacy", () => {
    const { layer } = setup((req) => (req.method === "initialize" ? ok(req, initializeResult("2025-06-18")) : ok(req, {})))
    return Effect.gen(function*() {
      const { report } = yield* start("prefer-discover")
      assert.strictEqual(report.era, "legacy")
      assert.strictEqual(report.negotiated, "2025-06-18")
    }).pipe(Effect.provide(layer))
  })

  it.effect("2026-07-28/era-probe/timeout-sends-initialize-alongside-and-a-slow-modern-server-stays-modern", () => {
    // A modern-only server still being downloaded: discover answers late, initialize is refused.
    const slowModern: Script = discoverAfter("5 seconds", (r) => modernOnly(r, 1))
    const { recorder, layer } = setup(slowModern)
    return Effect.gen(function*() {
      const fiber = yield* Effect.fork(Effect.scoped(start("prefer-discover")))
      yield* TestClock.adjust("1999 millis")
      assert.deepStrictEqual(recorder.sent, ["1:server/discover"])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(recorder.sent, ["1:server/discover", "1:initialize"])
      yield* TestClock.adjust("3 seconds")
      const { report } = yield* Fiber.join(fiber)
      assert.strictEqual(report.era, "modern")
      const cached = yield* Effect.flatMap(EraCache, (c) => c.get(def))
      assert.strictEqual(Option.getOrThrow(cached).era, "modern")
    }).pipe(Effect.provide(layer))
  })

  // A modern-only server that reads nothing for 3.5 s gets initialize beside the pending discover,
  // then answers both; in which order depends on the server. Once discover has answered, the
  // refused initialize says nothing new: the server is modern either way.
  for (const [order, refusalAt] of [["discover-then-refusal", "3501 millis"], ["refusal-then-discover", "3499 millis"]] as const) {
    it.effect(`2026-07-28/era-probe/a-slow-modern-only-server-is-modern-whichever-it-answers-first/${order}`, () => {
      const slowModernOnly: Script = discoverAfter(
        "3500 millis",
        (r) => Effect.zipRight(Effect.sleep(Duration.subtract(refusalAt, "2 seconds")), modernOnly(r, 1))
      )
      const { recorder, layer } = setup(slowModernOnly)
      return Effect.gen(function*() {
        const fiber = yield* Effect.fork(start("prefer-discover"))
        yield* TestClock.adjust("3501 millis")
        const { report, session } = yield* Fiber.join(fiber)
        assert.strictEqual(session.era, "modern")
        assert.strictEqual(session.negotiated, "2026-07-28")
        assert.strictEqual(report.era, "modern")
        assert.deepStrictEqual(recorder.sent, ["1:server/discover", "1:initialize"])
        assert.strictEqual(Option.getOrThrow(yield* Effect.flatMap(EraCache, (c) => c.get(def))).era, "modern")
      }).pipe(Effect.scoped, Effect.provide(layer))
    })
  }

  it.effect("2026-07-28/era-probe/a-race-settled-by-initialize-alone-is-cached-legacy", () => {
    const silent: Script = (req) => (req.method === "initialize" ? ok(req, initializeResult("2025-11-25")) : Effect.never)
    const { recorder, layer } = setup(silent)
    return Effect.gen(function*() {
      const fiber = yield* Effect.fork(Effect.scoped(start("prefer-discover")))
      yield* TestClock.adjust("2 seconds")
      const { report } = yield* Fiber.join(fiber)
      assert.strictEqual(report.era, "legacy")
      const cached = yield* Effect.flatMap(EraCache, (c) => c.get(def))
      assert.strictEqual(Option.getOrThrow(cached).era, "legacy")
      // The second start is a cache hit: initialize first, no discover, no wait.
      recorder.sent.length = 0
      const again = yield* Effect.scoped(start("prefer-discover"))
      assert.strictEqual(again.report.eraSource, "cache")
      assert.strictEqual(again.report.durationMs, 0)
      assert.deepStrictEqual(recorder.sent, ["2:initialize", "2:notifications/initialized"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("2026-07-28/era-probe/a-slow-dual-server-that-answers-both-is-legacy-for-its-process-and-cached-modern", () => {
    // Reads nothing for 3.5 s (npx downloading it), then answers discover, then initialize.
    const slowDual: Script = discoverAfter("3500 millis", (r) => Effect.zipRight(Effect.sleep("1500 millis"), dual(r, 1)))
    const { recorder, layer } = setup(slowDual)
    return Effect.gen(function*() {
      const fiber = yield* Effect.fork(start("prefer-discover"))
      yield* TestClock.adjust("3500 millis")
      const { report, session } = yield* Fiber.join(fiber)
      assert.strictEqual(report.era, "legacy")
      assert.strictEqual(session.era, "legacy")
      assert.strictEqual(session.negotiated, "2025-11-25")
      assert.deepStrictEqual(recorder.sent, ["1:server/discover", "1:initialize", "1:notifications/initialized"])
      assert.deepStrictEqual(recorder.cancelled, [])
      const cached = Option.getOrThrow(yield* Effect.flatMap(EraCache, (c) => c.get(def)))
      assert.deepStrictEqual([cached.era, cached.version], ["modern", "2026-07-28"])
      assert.isFalse(report.stale)
    }).pipe(Effect.scoped, Effect.provide(layer))
  })

  it.effect("2026-07-28/era-probe/a-discover-that-answers-after-initialize-won-records-the-server-modern", () => {
    const lateDiscover: Script = discoverAfter("10 seconds", (r) => dual(r, 1))
    const { recorder, layer } = setup(lateDiscover)
    return Effect.gen(function*() {
      const cache = yield* EraCache
      const fiber = yield* Effect.fork(start("prefer-discover"))
      yield* TestClock.adjust("2 seconds")
      const { lateEra, report, session } = yield* Fiber.join(fiber)
      assert.strictEqual(session.era, "legacy")
      assert.strictEqual(Option.getOrThrow(yield* cache.get(def)).era, "legacy")
      assert.isTrue(Option.isNone(yield* Effect.timeoutOption(lateEra, "0 millis")))
      yield* TestClock.adjust("8 seconds")
      const late = yield* lateEra
      assert.deepStrictEqual([late.cached.era, late.found.era, late.found.version], ["legacy", "modern", "2026-07-28"])
      assert.strictEqual(Option.getOrThrow(yield* cache.get(def)).era, "modern")
      // The process stays what initialize made it, and the discover was never given up on.
      assert.strictEqual(session.era, "legacy")
      assert.strictEqual(report.era, "legacy")
      assert.deepStrictEqual(recorder.cancelled, [])
    }).pipe(Effect.scoped, Effect.provide(layer))
  })

  it.effect("2026-07-28/era-probe/discover-answered-first-with-initialize-unanswered-is-modern-and-initialize-is-not-cancelled", () => {
    const ignoresInitialize: Script = discoverAfter("3 seconds", () => Effect.never)
    const { recorder, layer } = setup(ignoresInitialize)
    return Effect.gen(function*() {
      const fiber = yield* Effect.fork(start("prefer-discover"))
      yield* TestClock.adjust("3 seconds")
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      yield* TestClock.adjust("2 seconds")
      const { report } = yield* Fiber.join(fiber)
      assert.strictEqual(report.era, "modern")
      assert.deepStrictEqual(recorder.cancelled, [])
      assert.isTrue(report.steps.some((s) => s.includes("left pending, not cancelled")))
    }).pipe(Effect.scoped, Effect.provide(layer))
  })

  it.effect("2026-07-28/era-cache/a-cached-modern-server-gets-discover-alone-within-the-longer-bound", () => {
    const slowModern: Script = discoverAfter("3500 millis", (r) => dual(r, 1))
    const { recorder, layer } = setup(slowModern)
    return Effect.gen(function*() {
      yield* Effect.flatMap(EraCache, (c) => c.set(def, { era: "modern", version: "2026-07-28" }))
      const fiber = yield* Effect.fork(start("prefer-discover"))
      yield* TestClock.adjust("3500 millis")
      const { report, session } = yield* Fiber.join(fiber)
      assert.strictEqual(session.era, "modern")
      assert.strictEqual(report.eraSource, "cache")
      assert.deepStrictEqual(recorder.sent, ["1:server/discover"])
    }).pipe(Effect.scoped, Effect.provide(layer))
  })

  it.effect("2026-07-28/era-cache/a-cached-modern-server-whose-discover-stays-silent-is-initialized-after-the-longer-bound", () => {
    const silent: Script = (req) => (req.method === "initialize" ? ok(req, initializeResult("2025-11-25")) : Effect.never)
    const { recorder, layer } = setup(silent)
    return Effect.gen(function*() {
      const cache = yield* EraCache
      yield* cache.set(def, { era: "modern", version: "2026-07-28" })
      const fiber = yield* Effect.fork(start("prefer-discover"))
      yield* TestClock.adjust("19999 millis")
      assert.deepStrictEqual(recorder.sent, ["1:server/discover"])
      yield* TestClock.adjust("1 millis")
      const { report } = yield* Fiber.join(fiber)
      assert.strictEqual(report.era, "legacy")
      assert.isTrue(report.stale)
      assert.strictEqual(Option.getOrThrow(yield* cache.get(def)).era, "legacy")
    }).pipe(Effect.scoped, Effect.provide(layer))
  })

  it.effect("2026-07-28/era-cache/the-longer-bound-can-be-set", () => {
    const silent: Script = (req) => (req.method === "initialize" ? ok(req, initializeResult("2025-11-25")) : Effect.never)
    const { recorder, layer } = setup(silent)
    return Effect.gen(function*() {
      yield* Effect.flatMap(EraCache, (c) => c.set(def, { era: "modern", version: "2026-07-28" }))
      const fiber = yield* Effect.fork(start("prefer-discover", { cachedProbeTimeout: "5 seconds" }))
      yield* TestClock.adjust("4999 millis")
      assert.deepStrictEqual(recorder.sent, ["1:server/discover"])
      yield* TestClock.adjust("1 millis")
      const { report } = yield* Fiber.join(fiber)
      assert.strictEqual(report.era, "legacy")
      assert.deepStrictEqual(recorder.sent, ["1:server/discover", "1:initialize", "1:notifications/initialized"])
    }).pipe(Effect.scoped, Effect.provide(layer))
  })

  it.scoped("2026-07-28/era-cache/a-cached-modern-server-that-refuses-discover-the-legacy-way-is-initialized-and-the-cache-rewritten", () => {
    const { recorder, layer } = setup(legacyAnswering(ErrorCode.MethodNotFound))
    return Effect.gen(function*() {
      const cache = yield* EraCache
      yield* cache.set(def, { era: "modern", version: "2026-07-28" })
      const { report } = yield* start("prefer-discover")
      assert.strictEqual(report.era, "legacy")
      assert.isTrue(report.stale)
      assert.deepStrictEqual(recorder.sent, ["1:server/discover", "1:initialize", "1:notifications/initialized"])
      assert.strictEqual(Option.getOrThrow(yield* cache.get(def)).era, "legacy")
    }).pipe(Effect.provide(layer))
  })

  it.scoped("2026-07-28/era-cache/a-cached-modern-server-that-exits-on-discover-is-started-again-legacy-only", () => {
    const exitsOnDiscover: Script = (req, opened) =>
      opened === 1 ? Effect.fail(new TransportClosed({ reason: "exited", exitCode: 1 })) : legacyAnswering(-32601)(req, opened)
    const { recorder, layer } = setup(exitsOnDiscover)
    return Effect.gen(function*() {
      const cache = yield* EraCache
      yield* cache.set(def, { era: "modern", version: "2026-07-28" })
      const { report } = yield* start("prefer-discover")
      assert.strictEqual(report.era, "legacy")
      assert.isTrue(report.stale)
      assert.deepStrictEqual(recorder.sent, ["1:server/discover", "2:initialize", "2:notifications/initialized"])
    }).pipe(Effect.provide(layer))
  })

  it.scoped("2026-07-28/era-cache/prefer-initialize-with-a-cached-legacy-server-is-a-cache-hit", () => {
    const { recorder, layer } = setup(dual)
    return Effect.gen(function*() {
      yield* Effect.flatMap(EraCache, (c) => c.set(def, { era: "legacy", version: "2025-11-25" }))
      const { report } = yield* start("prefer-initialize")
      assert.strictEqual(report.eraSource, "cache")
      assert.deepStrictEqual(recorder.sent, ["1:initialize", "1:notifications/initialized"])
    }).pipe(Effect.provide(layer))
  })

  it.scoped("2026-07-28/era-probe/process-exit-restarts-legacy-only", () => {
    const exitsOnDiscover: Script = (req, opened) =>
      opened === 1 ? Effect.fail(new TransportClosed({ reason: "exited", exitCode: 1 })) : legacyAnswering(-32601)(req, opened)
    const { recorder, layer } = setup(exitsOnDiscover)
    return Effect.gen(function*() {
      const { report } = yield* start("prefer-discover")
      assert.strictEqual(report.era, "legacy")
      assert.deepStrictEqual(recorder.sent, ["1:server/discover", "2:initialize", "2:notifications/initialized"])
      assert.isTrue(report.steps.some((s) => s.includes("exited during the probe")))
    }).pipe(Effect.provide(layer))
  })

  it.scoped("2026-07-28/era-probe/32022-retries-then-falls-back-when-only-legacy-is-supported", () => {
    const { recorder, layer } = setup((req) =>
      req.method === "initialize"
        ? ok(req, initializeResult("2025-06-18"))
        : err(req, ErrorCode.UnsupportedProtocolVersion, "unsupported", { supported: ["2025-06-18"], requested: "2026-07-28" })
    )
    return Effect.gen(function*() {
      const { report } = yield* start("prefer-discover")
      assert.strictEqual(report.era, "legacy")
      assert.strictEqual(report.negotiated, "2025-06-18")
      assert.deepStrictEqual(recorder.sent.slice(0, 2), ["1:server/discover", "1:initialize"])
    }).pipe(Effect.provide(layer))
  })

  it.scoped("2026-07-28/era-probe/32022-naming-the-sent-version-re-sends-it-once", () => {
    // A server that refuses its first request whatever it carries (the conformance suite's
    // request-metadata scenario) and lists the very version it refused.
    let refusals = 0
    const { recorder, layer } = setup((req) =>
      req.method === "server/discover" && refusals++ === 0
        ? err(req, ErrorCode.UnsupportedProtocolVersion, "unsupported", { supported: ["2026-07-28"], requested: "2026-07-28" })
        : req.method === "server/discover"
        ? ok(req, discoverResult(["2026-07-28"]))
        : err(req, ErrorCode.MethodNotFound, "no such method")
    )
    return Effect.gen(function*() {
      const { report } = yield* start("prefer-discover")
      assert.strictEqual(report.era, "modern")
      assert.strictEqual(report.negotiated, "2026-07-28")
      assert.deepStrictEqual(recorder.sent, ["1:server/discover", "1:server/discover"])
    }).pipe(Effect.provide(layer))
  })

  it.scoped("2026-07-28/era-probe/32022-naming-the-sent-version-twice-fails", () => {
    const { recorder, layer } = setup((req) =>
      err(req, ErrorCode.UnsupportedProtocolVersion, "unsupported", { supported: ["2026-07-28"], requested: "2026-07-28" })
    )
    return Effect.gen(function*() {
      const e = yield* Effect.flip(start("force-discover"))
      assert.strictEqual(e._tag, "VersionsExhaustedError")
      assert.deepStrictEqual(recorder.sent, ["1:server/discover", "1:server/discover"])
    }).pipe(Effect.provide(layer))
  })

  it.scoped("2026-07-28/era-probe/disjoint-versions-fail-naming-both-lists", () => {
    const { layer } = setup((req) => err(req, ErrorCode.UnsupportedProtocolVersion, "unsupported", { supported: ["2099-01-01"], requested: "2026-07-28" }))
    return Effect.gen(function*() {
      const e = yield* Effect.flip(start("force-discover"))
      assert.include(e.message, "2099-01-01")
      assert.include(e.message, "2026-07-28")
    }).pipe(Effect.provide(layer))
  })

  it.scoped("2026-07-28/era-cache/cached-legacy-gets-initialize-first-and-no-discover", () => {
    const { recorder, layer } = setup(dual)
    return Effect.gen(function*() {
      const cache = yield* EraCache
      // As prefer-discover records a server whose discover it saw refused.
      yield* cache.set(def, { era: "legacy", version: "2025-11-25", exclusive: true })
      const { report } = yield* start("prefer-discover")
      assert.strictEqual(report.era, "legacy")
      assert.strictEqual(report.eraSource, "cache")
      assert.isFalse(recorder.sent.some((m) => m.endsWith("server/discover")))
    }).pipe(Effect.provide(layer))
  })

  it.scoped("2026-07-28/era-cache/stale-cache-reprobes-and-rewrites", () => {
    const { layer } = setup(modernOnly)
    return Effect.gen(function*() {
      const cache = yield* EraCache
      yield* cache.set(def, { era: "legacy", version: "2025-11-25", exclusive: true })
      const { report } = yield* start("prefer-discover")
      assert.strictEqual(report.era, "modern")
      assert.isTrue(report.stale)
      assert.strictEqual(Option.getOrThrow(report.cached).era, "legacy")
      assert.strictEqual(Option.getOrThrow(yield* cache.get(def)).era, "modern")
    }).pipe(Effect.provide(layer))
  })

  it.scoped("2026-07-28/era-cache/force-values-neither-read-nor-write", () => {
    const { recorder, layer } = setup(dual)
    return Effect.gen(function*() {
      const cache = yield* EraCache
      yield* cache.set(def, { era: "modern", version: "2026-07-28" })
      const { report } = yield* start("force-initialize")
      assert.strictEqual(report.era, "legacy")
      assert.strictEqual(report.eraSource, "forced")
      assert.isTrue(Option.isNone(report.cached))
      assert.deepStrictEqual(recorder.sent, ["1:initialize", "1:notifications/initialized"])
      assert.strictEqual(Option.getOrThrow(yield* cache.get(def)).era, "modern")
    }).pipe(Effect.provide(layer))
  })

  it.scoped("2026-07-28/era-probe/prefer-initialize-falls-back-to-discover-for-a-modern-only-server", () => {
    const { recorder, layer } = setup(modernOnly)
    return Effect.gen(function*() {
      const { report } = yield* start("prefer-initialize")
      assert.strictEqual(report.era, "modern")
      assert.deepStrictEqual(recorder.sent, ["1:initialize", "1:server/discover"])
    }).pipe(Effect.provide(layer))
  })

  it.scoped("2026-07-28/era-probe/force-discover-fails-on-a-legacy-server", () => {
    const { layer } = setup(legacyAnswering(ErrorCode.MethodNotFound))
    return Effect.gen(function*() {
      const e = yield* Effect.flip(start("force-discover"))
      assert.strictEqual(e._tag, "ProbeFailed")
      assert.include(e.message, "does not speak 2026-07-28")
    }).pipe(Effect.provide(layer))
  })

  it.scoped("2025-11-25/session/a-forgotten-http-session-is-initialized-again-once", () => {
    let calls = 0
    const forgetful: Script = (req) => {
      if (req.method === "initialize") return ok(req, initializeResult("2025-11-25"))
      if (req.method === "tools/call" && ++calls === 1) return Effect.fail(new SessionExpired({ sessionId: "s-1" }))
      return req.method === "tools/call" ? ok(req, { content: [] }) : err(req, ErrorCode.MethodNotFound, "no")
    }
    const { recorder, layer } = setup(forgetful, "streamable-http")
    const http = new HttpDefinition({ transport: "http", name: "remote", url: "http://127.0.0.1:1/mcp" })
    return Effect.gen(function*() {
      const { session } = yield* Effect.flatMap(Prober, (p) => p.start(http, options("force-initialize")))
      const result = yield* session.request("tools/call", { name: "x", arguments: {} })
      assert.deepStrictEqual(result, { content: [] })
      assert.deepStrictEqual(recorder.sent, [
        "1:initialize",
        "1:notifications/initialized",
        "1:tools/call",
        "1:initialize",
        "1:notifications/initialized",
        "1:tools/call"
      ])
    }).pipe(Effect.provide(layer))
  })
})
