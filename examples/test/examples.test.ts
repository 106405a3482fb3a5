/** The library examples compile (tsc -b covers them) and do what their comments say. */
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import { Config } from "@mcpx-fx/config/Config"
import * as Effect from "effect/Effect"
import { ClientLayer, program as clientProgram } from "../dual-era-client.js"
import { configOf, gatewayLayer, program as gatewayProgram } from "../embedded-gateway.js"

const fixture = Fixtures.fixtureScript("era-server")

describe("examples", () => {
  it.live("examples/dual-era-client: prefer-initialize falls back to discover for a modern-only server", () =>
    Effect.gen(function*() {
      const r = yield* clientProgram(process.execPath, [fixture, "--mode", "modern-only"])
      assert.strictEqual(r.era, "modern")
      assert.isTrue(r.steps[0]!.includes("sent initialize"))
      assert.include(r.tools, "hello")
      assert.include(JSON.stringify(r.greeting), "over modern")
    }).pipe(Effect.provide(ClientLayer)))

  it.live("examples/embedded-gateway: a Config layer in code fronts a legacy and a modern server", () =>
    Effect.gen(function*() {
      const r = yield* gatewayProgram
      assert.include(r.tools, "legacy__hello")
      assert.include(r.tools, "modern__hello")
      assert.deepStrictEqual(r.failures, [])
      const byServer = Object.fromEntries(r.greetings.map((g) => [g.server, JSON.stringify(g.result)]))
      assert.include(byServer.legacy, "over legacy")
      assert.include(byServer.modern, "over modern")
    }).pipe(
      Effect.provide(
        gatewayLayer(
          Config.layerStatic(
            configOf([
              { name: "legacy", command: process.execPath, args: [fixture, "--mode", "legacy-32601"] },
              { name: "modern", command: process.execPath, args: [fixture, "--mode", "modern-only"] }
            ])
          )
        )
      )
    ))
})
