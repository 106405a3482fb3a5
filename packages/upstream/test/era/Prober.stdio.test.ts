import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import { parseLog } from "@mcpx-fx/testing/era/MethodLog"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EraCache, EraCacheConfig } from "../../src/era/EraCache.js"
import { Negotiator } from "../../src/era/Negotiator.js"
import type { Preference } from "../../src/era/Preference.js"
import { Prober } from "../../src/era/Prober.js"
import { StdioDefinition } from "../../src/ServerDefinition.js"
import { stdioTransport } from "../util/StdioOnly.js"
import { eraTable } from "../util/EraTable.js"

const server = (mode: string, extra: ReadonlyArray<string> = []) => {
  const { command, args } = Fixtures.stdioCommand("era-server", ["--mode", mode, ...extra])
  return new StdioDefinition({ transport: "stdio", name: mode, command, args })
}

const proberWith = (cache: Layer.Layer<EraCache>) =>
  Prober.layer.pipe(
    Layer.provideMerge(cache),
    Layer.provide(Negotiator.layer),
    Layer.provide(stdioTransport),
    Layer.provide(NodeContext.layer)
  )

// Generous: these servers answer discover at once, and a loaded CI machine can take seconds to
// start node; only the tests about the timeout itself use a short one.
const start = (def: StdioDefinition, preference: Preference, probeTimeout: Duration.DurationInput = "20 seconds") =>
  Effect.flatMap(Prober, (p) =>
    p.start(def, {
      preference,
      probeTimeout,
      session: { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} }
    }))

/** Starts the server, calls its `hello` tool and returns the era it reports and the one it says it served. */
const startAndGreet = (def: StdioDefinition, preference: Preference, probeTimeout?: Duration.DurationInput) =>
  Effect.gen(function*() {
    const { session, report } = yield* start(def, preference, probeTimeout)
    const result = yield* session.request("tools/call", { name: "hello", arguments: {} })
    return { report, hello: JSON.stringify(result.content) }
  })

describe("Prober over real stdio servers", () => {
  for (const [preference, mode, expected] of eraTable) {
    it.scopedLive(`upstream/era-table/${preference}/${mode}/${expected}`, () =>
      Effect.gen(function*() {
        const outcome = yield* startAndGreet(server(mode), preference).pipe(Effect.exit)
        if (expected === "fails") {
          assert.isTrue(Exit.isFailure(outcome), `${preference} against ${mode} should fail`)
          return
        }
        assert.isTrue(Exit.isSuccess(outcome), `${preference} against ${mode}: ${String(outcome)}`)
        if (Exit.isSuccess(outcome)) {
          assert.strictEqual(outcome.value.report.era, expected)
          assert.include(outcome.value.hello, `over ${expected}`)
        }
      }).pipe(Effect.provide(proberWith(EraCache.layerMemory))))
  }

  for (const mode of ["legacy-32602", "legacy-silent", "legacy-exit", "legacy-banner"]) {
    it.scopedLive(`upstream/era-probe/${mode}-ends-legacy`, () =>
      Effect.gen(function*() {
        const { report, hello } = yield* startAndGreet(server(mode), "prefer-discover", "300 millis")
        assert.strictEqual(report.era, "legacy")
        assert.include(hello, "over legacy")
      }).pipe(Effect.provide(proberWith(EraCache.layerMemory))))
  }

  it.scopedLive("upstream/era-probe/slow-discover-longer-than-the-probe-timeout-still-ends-modern", () =>
    Effect.gen(function*() {
      // A modern-only server that is slow to answer (npx still downloading it): initialize is refused.
      const def = server("slow-discover", ["--discover-delay", "1500", "--versions", "2026-07-28"])
      const { report, hello } = yield* startAndGreet(def, "prefer-discover", "200 millis")
      assert.strictEqual(report.era, "modern")
      assert.include(hello, "over modern")
      assert.isTrue(report.steps.some((s) => s.includes("sending initialize alongside")))
      const cached = yield* Effect.flatMap(EraCache, (c) => c.get(def))
      assert.strictEqual(cached._tag === "Some" ? cached.value.era : "none", "modern")
    }).pipe(Effect.provide(proberWith(EraCache.layerMemory))))

  it.scopedLive("upstream/era-probe/a-slow-modern-only-server-that-answers-discover-before-refusing-initialize-ends-modern", () =>
    Effect.gen(function*() {
      // Reads nothing for a second (npx fetching it), then handles its input in order: discover's
      // answer, then the refusal of the initialize that joined it, naming only 2026-07-28.
      const def = server("modern-only", ["--start-delay", "1000", "--late-refusal"])
      const { report, hello } = yield* startAndGreet(def, "prefer-discover", "300 millis")
      assert.strictEqual(report.era, "modern")
      assert.include(hello, "over modern")
      assert.isTrue(report.steps.some((s) => s.includes("initialize failed after discover answered")), report.steps.join("\n"))
    }).pipe(Effect.provide(proberWith(EraCache.layerMemory))))

  it.live("upstream/era-probe/a-slow-dual-server-is-legacy-for-the-process-initialize-reached-and-modern-from-its-next-start", () =>
    Effect.gen(function*() {
      // Reads nothing for a second (npx fetching it): discover goes unanswered past the probe
      // timeout, initialize follows, and the server then answers both, discover first.
      const dir = mkdtempSync(join(tmpdir(), "mcpx-eras-"))
      const log = join(dir, "methods.log")
      const def = server("dual", ["--start-delay", "1000", "--log", log])
      const fileCache = () => EraCache.layer.pipe(Layer.provide(EraCacheConfig.layer({ stateDir: dir })), Layer.provide(NodeContext.layer))
      try {
        const first = yield* Effect.scoped(
          Effect.gen(function*() {
            const started = yield* start(def, "prefer-discover", "300 millis")
            const result = yield* started.session.request("tools/call", { name: "hello", arguments: {} })
            // Whichever of its two answers the server sent first, the server ends up recorded
            // modern: at once, or when its discover is read just after initialize's answer.
            const now = yield* Effect.flatMap(EraCache, (c) => c.get(def))
            if (Option.isSome(now) && now.value.era === "legacy") yield* started.lateEra.pipe(Effect.timeout("10 seconds"))
            return {
              report: started.report,
              hello: JSON.stringify(result.content),
              cached: yield* Effect.flatMap(EraCache, (c) => c.get(def))
            }
          })
        ).pipe(Effect.provide(proberWith(fileCache())))
        assert.strictEqual(first.report.era, "legacy")
        assert.include(first.hello, "over legacy 2025-11-25")
        assert.strictEqual(first.cached._tag === "Some" ? first.cached.value.era : "none", "modern")
        const sent = parseLog(readFileSync(log, "utf8"))
        assert.deepStrictEqual(sent.slice(0, 3).map((m) => m.method), ["server/discover", "initialize", "notifications/initialized"])
        // Neither request was given up on while the process lived.
        assert.isFalse(sent.some((m) => m.method === "notifications/cancelled"), JSON.stringify(sent))

        // The next start tries the cached era: discover alone, waited for longer than probeTimeout.
        const before = readFileSync(log, "utf8").length
        const second = yield* Effect.scoped(startAndGreet(def, "prefer-discover", "300 millis")).pipe(
          Effect.provide(proberWith(fileCache()))
        )
        assert.strictEqual(second.report.era, "modern")
        assert.strictEqual(second.report.eraSource, "cache")
        assert.include(second.hello, "over modern 2026-07-28")
        const later = parseLog(readFileSync(log, "utf8").slice(before)).map((m) => m.method)
        assert.deepStrictEqual(later.slice(0, 2), ["server/discover", "tools/call"])
        assert.notInclude(later, "initialize")
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }))

  it.live("upstream/era-cache/a-discover-silent-server-is-cached-legacy-and-its-second-start-sends-no-discover", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "mcpx-eras-"))
      const log = join(dir, "methods.log")
      const def = server("legacy-silent", ["--log", log])
      const fileCache = () => EraCache.layer.pipe(Layer.provide(EraCacheConfig.layer({ stateDir: dir })), Layer.provide(NodeContext.layer))
      try {
        const first = yield* Effect.scoped(start(def, "prefer-discover", "300 millis")).pipe(Effect.provide(proberWith(fileCache())))
        assert.strictEqual(first.report.era, "legacy")
        const before = readFileSync(log, "utf8")
        assert.include(before, "server/discover")
        const second = yield* Effect.scoped(start(def, "prefer-discover", "300 millis")).pipe(Effect.provide(proberWith(fileCache())))
        assert.strictEqual(second.report.eraSource, "cache")
        // No probe timeout was waited out: the first step is initialize.
        assert.isFalse(second.report.steps.some((s) => s.includes("no answer to discover")))
        assert.notInclude(readFileSync(log, "utf8").slice(before.length), "server/discover")
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }))

  it.live("upstream/era-cache/persisted-across-two-starts-and-a-cached-legacy-server-gets-no-discover", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "mcpx-eras-"))
      const log = join(dir, "methods.log")
      const def = server("legacy-32601", ["--log", log])
      const fileCache = () => EraCache.layer.pipe(Layer.provide(EraCacheConfig.layer({ stateDir: dir })), Layer.provide(NodeContext.layer))
      try {
        const first = yield* Effect.scoped(start(def, "prefer-discover")).pipe(Effect.provide(proberWith(fileCache())))
        assert.strictEqual(first.report.eraSource, "probe")
        const before = readFileSync(log, "utf8")
        assert.include(before, "server/discover")
        const second = yield* Effect.scoped(start(def, "prefer-discover")).pipe(Effect.provide(proberWith(fileCache())))
        assert.strictEqual(second.report.era, "legacy")
        assert.strictEqual(second.report.eraSource, "cache")
        const after = readFileSync(log, "utf8").slice(before.length)
        assert.include(after, "initialize")
        assert.notInclude(after, "server/discover")
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }))
})
