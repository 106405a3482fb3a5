/**
 * Seed 000: with the era cache on, the prefer-* and follow values try the cached era first on
 * later starts, and "the result is the same". A record only takes a start straight to its era when
 * that is what the preference would find without it: the era it tries first, or a server known to
 * refuse the other one (`exclusive`).
 */
import { assert, describe, it } from "@effect/vitest"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { EraCache } from "../../src/era/EraCache.js"
import { Negotiator } from "../../src/era/Negotiator.js"
import type { Preference } from "../../src/era/Preference.js"
import { Prober } from "../../src/era/Prober.js"
import { StdioDefinition } from "../../src/ServerDefinition.js"
import { discoverResult, err, fakeTransport, initializeResult, ok, type Recorder, type Script } from "../util/FakeTransport.js"

const def = new StdioDefinition({ transport: "stdio", name: "fake", command: "fake-server" })

const dual: Script = (req) => req.method === "initialize" ? ok(req, initializeResult("2025-11-25")) : ok(req, discoverResult(["2026-07-28"]))
const modernOnly: Script = (req) =>
  req.method === "initialize"
    ? err(req, ErrorCode.UnsupportedProtocolVersion, "initialize is not served", { supported: ["2026-07-28"], requested: "2025-11-25" })
    : ok(req, discoverResult(["2026-07-28"]))
const legacyOnly: Script = (req) => req.method === "initialize" ? ok(req, initializeResult("2025-11-25")) : err(req, ErrorCode.MethodNotFound, "no such method")

const setup = (script: Script) => {
  const recorder: Recorder = { sent: [], opened: 0 }
  const layer = Prober.layer.pipe(
    Layer.provideMerge(EraCache.layerMemory),
    Layer.provide(Negotiator.layer),
    Layer.provide(fakeTransport(script, recorder))
  )
  return { recorder, layer }
}

/** One start; `sent` is what this start sent, without the connection numbers. */
const start = (recorder: Recorder, preference: Preference, ignoreCache = false) =>
  Effect.gen(function*() {
    const before = recorder.sent.length
    const { report } = yield* Effect.flatMap(Prober, (p) =>
      p.start(def, {
        preference,
        probeTimeout: "2 seconds",
        ignoreCache,
        session: { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} }
      }))
    return { report, sent: recorder.sent.slice(before).map((m) => m.replace(/^\d+:/, "")) }
  }).pipe(Effect.scoped)

describe("Prober: the era cache does not change a result", () => {
  const servers = { dual, "modern-only": modernOnly, "legacy-only": legacyOnly } as const
  const preferences = ["prefer-discover", "prefer-initialize", "follow"] as const
  for (const [name, script] of Object.entries(servers)) {
    for (const learnedUnder of preferences) {
      for (const later of preferences) {
        it.effect(`2026-07-28/era-cache/${name}/learned-under-${learnedUnder}/started-under-${later}`, () => {
          const { layer, recorder } = setup(script)
          return Effect.gen(function*() {
            yield* start(recorder, learnedUnder)
            const cached = yield* start(recorder, later)
            const uncached = yield* start(recorder, later, true)
            assert.deepStrictEqual(
              [cached.report.era, cached.report.negotiated],
              [uncached.report.era, uncached.report.negotiated]
            )
            // The server did not change, so nothing was stale.
            assert.isFalse(cached.report.stale)
          }).pipe(Effect.provide(layer))
        })
      }
    }
  }

  it.effect("2026-07-28/era-cache/a-dual-server-learned-modern-is-initialized-first-under-prefer-initialize", () => {
    const { layer, recorder } = setup(dual)
    return Effect.gen(function*() {
      yield* start(recorder, "prefer-discover")
      const { report, sent } = yield* start(recorder, "prefer-initialize")
      assert.deepStrictEqual([report.era, report.eraSource], ["legacy", "probe"])
      assert.deepStrictEqual(sent, ["initialize", "notifications/initialized"])
      assert.isTrue(report.steps.some((s) => s.includes("probing in the normal order")), report.steps.join("\n"))
    }).pipe(Effect.provide(layer))
  })

  it.effect("2026-07-28/era-cache/a-server-that-refused-the-other-era-is-a-cache-hit-under-either-preference", () => {
    const { layer, recorder } = setup(modernOnly)
    return Effect.gen(function*() {
      // prefer-initialize saw initialize refused: the record says the server speaks only modern.
      yield* start(recorder, "prefer-initialize")
      assert.isTrue(Option.getOrThrow(yield* Effect.flatMap(EraCache, (c) => c.get(def))).exclusive === true)
      const { report, sent } = yield* start(recorder, "prefer-initialize")
      assert.deepStrictEqual([report.era, report.eraSource], ["modern", "cache"])
      assert.deepStrictEqual(sent, ["server/discover"])
    }).pipe(Effect.provide(layer))
  })
})
