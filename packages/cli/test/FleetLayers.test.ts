/**
 * The fleet's wiring in Layers.ts, from settings: the requestState key shared through
 * `fleet.secret`, the refusal to join a fleet without it, the process id, and the session-id prefix.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Settings from "@mcpx-fx/config/Settings"
import { Fleet } from "@mcpx-fx/server/Fleet"
import { RequestState } from "@mcpx-fx/server/RequestState"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Layers from "../src/Layers.js"

const Secret = "a-fleet-secret-of-at-least-32-characters"
const settings = (env: Record<string, string>) => Settings.Settings.layer({ env })

/** One process's requestState, as the daemon builds it under `env`. */
const stateOf = (env: Record<string, string>) => Effect.map(Layer.build(Layers.requestState.pipe(Layer.provide(settings(env)))), Context.get(RequestState))

const request = { method: "tools/call", params: { name: "srv__ask", arguments: {} } }

describe("fleet layers", () => {
  it.scoped("a requestState sealed by one instance opens on another with the same fleet.secret, and on no other", () =>
    Effect.gen(function*() {
      const a = yield* stateOf({ MCPX_FLEET_SECRET: Secret })
      const b = yield* stateOf({ MCPX_FLEET_SECRET: Secret })
      const token = yield* a.seal({ ...request, inner: "mcpx-pending:x:y:1" })
      assert.strictEqual((yield* b.open(token, request)).inner, "mcpx-pending:x:y:1")
      const other = yield* stateOf({ MCPX_FLEET_SECRET: `${Secret}-other` })
      assert.strictEqual((yield* Effect.flip(other.open(token, request))).reason, "tampered")
      // Without a secret each process keys its own: even two such never agree.
      const alone = yield* stateOf({})
      const alone2 = yield* stateOf({})
      assert.strictEqual((yield* Effect.flip(alone.open(token, request))).reason, "tampered")
      assert.strictEqual((yield* Effect.flip(alone2.open(yield* alone.seal(request), request))).reason, "tampered")
    }))

  it.scoped("joining a fleet without fleet.secret is refused with a message naming it", () =>
    Effect.gen(function*() {
      const e = yield* Effect.flip(Layer.build(Layers.fleet.pipe(Layer.provide(settings({ MCPX_FLEET_NATS: "nats://127.0.0.1:4222" })))))
      assert.strictEqual(e._tag, "GatewayConfigError")
      assert.match(e.message, /fleet\.secret \(MCPX_FLEET_SECRET, --fleet-secret\) must be/)
      // A short secret is refused by the setting itself.
      const short = yield* Effect.flip(Layer.build(settings({ MCPX_FLEET_SECRET: "short" })))
      assert.match(short.message, /at least 32 characters/)
    }))

  it.scoped("alone, the process id is <fleet.instance>-<hex>, fresh each time, and no session id is prefixed", () =>
    Effect.gen(function*() {
      const idOf = (env: Record<string, string>) =>
        Effect.map(Layer.build(Layers.fleet.pipe(Layer.provide(settings(env)))), (c) => Context.get(c, Fleet).instance)
      const first = yield* idOf({ MCPX_FLEET_INSTANCE: "gw-1" })
      const second = yield* idOf({ MCPX_FLEET_INSTANCE: "gw-1" })
      assert.match(first, /^gw-1-[0-9a-f]{8}$/)
      assert.notStrictEqual(first, second)
      assert.match(yield* idOf({}), /^[a-z0-9-]+-[0-9a-f]{8}$/)
      const prefix = (env: Record<string, string>) => Effect.provide(Layers.sessionIdPrefix, settings(env))
      assert.isUndefined(yield* prefix({ MCPX_FLEET_INSTANCE: "gw-1" }))
      assert.strictEqual(yield* prefix({ MCPX_FLEET_INSTANCE: "gw-1", MCPX_FLEET_NATS: "nats://127.0.0.1:4222" }), "gw-1.")
      const bad = yield* Effect.flip(Layer.build(settings({ MCPX_FLEET_INSTANCE: "GW.1" })))
      assert.match(bad.message, /a-z, 0-9 and -/)
    }))

  it.scoped("in a fleet, the process joins NATS under its id", () =>
    Effect.gen(function*() {
      const env = { MCPX_FLEET_NATS: "nats://127.0.0.1:4222", MCPX_FLEET_SECRET: Secret, MCPX_FLEET_INSTANCE: "gw-2", MCPX_FLEET_NAME: `t${Date.now()}` }
      const a = Context.get(yield* Layer.build(Layers.fleet.pipe(Layer.provide(settings(env)))), Fleet)
      const b = Context.get(yield* Layer.build(Layers.fleet.pipe(Layer.provide(settings(env)))), Fleet)
      yield* b.serve("ping", () => Effect.succeed({ pong: b.instance }))
      assert.deepStrictEqual(yield* a.send(b.instance, "ping", {}, "5 seconds"), { pong: b.instance })
    }))
})
