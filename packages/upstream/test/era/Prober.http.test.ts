import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { EraCache } from "../../src/era/EraCache.js"
import { Negotiator } from "../../src/era/Negotiator.js"
import type { Preference } from "../../src/era/Preference.js"
import { Prober } from "../../src/era/Prober.js"
import { HttpDefinition } from "../../src/ServerDefinition.js"
import * as TransportLayer from "../../src/transport/TransportLayer.js"
import { UpstreamAuth } from "../../src/auth/UpstreamAuth.js"
import { ProcessGroups } from "../../src/os/ProcessGroups.js"
import { eraTable } from "../util/EraTable.js"

const prober = Prober.layer.pipe(
  Layer.provideMerge(EraCache.layerMemory),
  Layer.provide(Negotiator.layer),
  Layer.provide(TransportLayer.layer()),
  Layer.provide(Layer.mergeAll(FetchHttpClient.layer, UpstreamAuth.none, ProcessGroups.layerNone)),
  Layer.provide(NodeContext.layer)
)

/** Starts the era fixture over HTTP, probes it and greets it through the session. */
const probeAndGreet = (mode: string, preference: Preference) =>
  Effect.gen(function*() {
    const { url } = yield* Fixtures.startHttpFixture("era-server", ["--mode", mode])
    const p = yield* Prober
    const { report, session } = yield* p.start(new HttpDefinition({ transport: "http", name: mode, url }), {
      preference,
      probeTimeout: "2 seconds",
      session: { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} }
    })
    const result = yield* session.request("tools/call", { name: "hello", arguments: {} })
    return { report, hello: JSON.stringify(result.content) }
  })

describe("Prober over real Streamable HTTP servers", () => {
  for (const [preference, mode, expected] of eraTable) {
    it.scopedLive(`upstream/era-table/http/${preference}/${mode}/${expected}`, () =>
      Effect.gen(function*() {
        const outcome = yield* probeAndGreet(mode, preference).pipe(Effect.exit)
        if (expected === "fails") {
          assert.isTrue(Exit.isFailure(outcome), `${preference} against ${mode} should fail`)
          return
        }
        assert.isTrue(Exit.isSuccess(outcome), `${preference} against ${mode}: ${String(outcome)}`)
        if (Exit.isSuccess(outcome)) {
          assert.strictEqual(outcome.value.report.era, expected)
          assert.strictEqual(outcome.value.report.wire, "streamable-http")
          assert.include(outcome.value.hello, `over ${expected}`)
        }
      }).pipe(Effect.provide(prober)))
  }

  it.scopedLive("upstream/era-probe/http/initialize-refused-bare-falls-back-to-http-sse", () =>
    Effect.gen(function*() {
      const { report, hello } = yield* probeAndGreet("legacy-sse", "prefer-discover")
      assert.strictEqual(report.era, "legacy")
      assert.strictEqual(report.wire, "http+sse")
      assert.include(hello, "over legacy")
      assert.isTrue(report.steps.some((s) => s.includes("HTTP+SSE")))
      const cached = yield* Effect.flatMap(EraCache, (c) => c.entries)
      assert.deepStrictEqual([...cached.values()].map((r) => r.transport), ["http+sse"])
    }).pipe(Effect.provide(prober)))
})
