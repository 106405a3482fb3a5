/**
 * The Pool at shutdown: every server's instances close at once, so upstreams that each take their
 * whole kill grace to stop cost one grace in all, not one each (TestClock).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import { EraCache } from "../../src/era/EraCache.js"
import { Negotiator } from "../../src/era/Negotiator.js"
import { Pool } from "../../src/pool/Pool.js"
import { type PoolServer, ScopeKey } from "../../src/pool/PoolModel.js"
import { Prober } from "../../src/era/Prober.js"
import { StdioDefinition } from "../../src/ServerDefinition.js"
import { Transport } from "../../src/transport/Transport.js"
import { fakeTransport, initializeResult, ok, type Recorder } from "../util/FakeTransport.js"

const grace = 5_000

/** A transport whose connections take `grace` to close, as an upstream that ignores EOF and SIGTERM. */
const slowToClose = (closedAt: Array<number>) =>
  Layer.effect(
    Transport,
    Effect.map(Transport, (inner) =>
      Transport.of({
        open: (def) =>
          Effect.tap(inner.open(def), () =>
            Effect.addFinalizer(() =>
              Effect.zipRight(
                Effect.sleep(grace),
                Effect.flatMap(Clock.currentTimeMillis, (at) => Effect.sync(() => void closedAt.push(at)))
              )
            ))
      }))
  )

const server = (name: string): PoolServer => ({
  definition: new StdioDefinition({ transport: "stdio", name, command: "fake-server" }),
  probe: {
    preference: "prefer-initialize",
    probeTimeout: "2 seconds",
    session: { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} }
  },
  settings: {}
})

describe("Pool shutdown", () => {
  it.effect("pool/shutdown/the instances of every server close at once", () =>
    Effect.gen(function*() {
      const recorder: Recorder = { sent: [], opened: 0 }
      const closedAt: Array<number> = []
      const layer = Pool.layer.pipe(
        Layer.provide(Prober.layer),
        Layer.provide(EraCache.layerMemory),
        Layer.provide(Negotiator.layer),
        Layer.provide(slowToClose(closedAt)),
        Layer.provide(fakeTransport((req) => ok(req, req.method === "initialize" ? initializeResult("2025-11-25") : {}), recorder))
      )
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(layer, scope)
      const names = ["a", "b", "c", "d", "e", "f"]
      yield* Effect.forEach(names, (name) =>
        Effect.flatMap(Pool, (pool) =>
          pool.withSession(server(name), { key: ScopeKey.global }, (s) => s.request("tools/list", {}))).pipe(
            Effect.provide(context)
          ))
      assert.strictEqual(recorder.opened, names.length)

      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      for (let i = 0; i < names.length; i++) {
        yield* TestClock.adjust(grace)
      }
      yield* Fiber.join(closing)
      assert.strictEqual(closedAt.length, names.length)
      // One after another they would end at 5, 10, … 30 s.
      assert.deepStrictEqual(
        closedAt,
        names.map(() =>
          grace
        )
      )
    }))
})
