/**
 * The fleet over the real NATS of the test machines (127.0.0.1:4222; CI starts it): two
 * processes' layers in one test process, each on its own connection, under a fleet name of the
 * test's own so concurrent runs never mix.
 */
import { assert, describe, it } from "@effect/vitest"
import * as NatsFleet from "@mcpx-fx/fleet/NatsFleet"
import { connect } from "@nats-io/transport-node"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { fleetName, instance, Nats } from "./support/Nats.js"

describe("NatsFleet", () => {
  it.scopedLive("a message sent to an instance is answered by its handler, and only its own instance's", () =>
    Effect.gen(function*() {
      const name = fleetName()
      const scope = yield* Effect.scope
      const a = yield* instance(name, scope)
      const b = yield* instance(name, scope)
      yield* b.serve("echo", (payload) => Effect.succeed({ by: b.instance, got: payload }))
      const reply = yield* a.send(b.instance, "echo", { hello: "world" }, "5 seconds")
      assert.deepStrictEqual(reply, { by: b.instance, got: { hello: "world" } })
      // A kind nobody serves, or an instance that is not there, is gone at once.
      const unserved = yield* Effect.flip(a.send(b.instance, "other", {}, "5 seconds"))
      assert.strictEqual(unserved._tag, "InstanceGone")
      // Another fleet's instance of the same id never answers this fleet's messages.
      const other = yield* Effect.flip(
        Effect.flatMap(instance(fleetName(), scope), (c) => c.send(b.instance, "echo", {}, "5 seconds"))
      )
      assert.strictEqual(other._tag, "InstanceGone")
    }))

  it.scopedLive("an id that is not one subject token addresses nobody, even where the subject it spells is served", () =>
    Effect.gen(function*() {
      const name = fleetName()
      const scope = yield* Effect.scope
      const a = yield* instance(name, scope)
      const b = yield* instance(name, scope)
      yield* b.serve("x.echo", (payload) => Effect.succeed(payload))
      assert.deepStrictEqual(yield* a.send(b.instance, "x.echo", { n: 1 }, "5 seconds"), { n: 1 })
      // `<b>.x` + `echo` spells b's own subject for `x.echo`; an id read from a handle must not.
      const spelled = yield* Effect.flip(a.send(`${b.instance}.x`, "echo", { n: 2 }, "5 seconds"))
      assert.strictEqual(spelled._tag, "InstanceGone")
      const wildcard = yield* Effect.flip(a.send(">", "echo", { n: 3 }, "5 seconds"))
      assert.strictEqual(wildcard._tag, "InstanceGone")
    }))

  it.scopedLive("an instance that closed is InstanceGone at once", () =>
    Effect.gen(function*() {
      const name = fleetName()
      const scope = yield* Effect.scope
      const a = yield* instance(name, scope)
      const bScope = yield* Scope.make()
      const b = yield* instance(name, bScope)
      yield* Scope.extend(b.serve("echo", (payload) => Effect.succeed(payload)), bScope)
      assert.deepStrictEqual(yield* a.send(b.instance, "echo", { n: 1 }, "5 seconds"), { n: 1 })
      yield* Scope.close(bScope, Exit.void)
      const started = Date.now()
      // A minute's timeout: only "no responders" can end it this soon.
      const gone = yield* Effect.flip(a.send(b.instance, "echo", { n: 2 }, "60 seconds"))
      assert.strictEqual(gone._tag, "InstanceGone")
      assert.isBelow(Date.now() - started, 5_000)
    }))

  it.scopedLive("a hostile or oversized message is refused, and the instance goes on answering", () =>
    Effect.gen(function*() {
      const name = fleetName()
      const scope = yield* Effect.scope
      const limit = 4_096
      const a = yield* instance(name, scope, limit)
      const b = yield* instance(name, scope, limit)
      let handled = 0
      yield* b.serve("echo", (payload) => Effect.sync(() => (handled++, payload)))
      const subject = NatsFleet.subjectOf(name, b.instance, "echo")
      const raw = yield* Effect.acquireRelease(
        Effect.promise(() => connect({ servers: Nats })),
        (nc) => Effect.promise(() => nc.close())
      )
      const ask = (data: Uint8Array | string) => Effect.promise(() => raw.request(subject, data, { timeout: 5_000 }).then((m) => m.string()))
      for (const bad of ["not json", "[1,2]", "\"text\"", "null"]) {
        const reply = JSON.parse(yield* ask(bad))
        assert.isString(reply.failed, bad)
      }
      const invalidUtf8 = JSON.parse(yield* ask(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])))
      assert.isString(invalidUtf8.failed)
      // Over the fleet's limit (the NATS server allows more): refused unread.
      const big = JSON.parse(yield* ask(JSON.stringify({ pad: "x".repeat(limit) })))
      assert.match(big.failed, /over the 4096-byte limit/)
      assert.strictEqual(handled, 0)
      // Sending one is refused before it leaves.
      const tooBig = yield* Effect.flip(a.send(b.instance, "echo", { pad: "x".repeat(limit) }, "5 seconds"))
      assert.strictEqual(tooBig._tag, "FleetError")
      assert.deepStrictEqual(yield* a.send(b.instance, "echo", { ok: true }, "5 seconds"), { ok: true })
      assert.strictEqual(handled, 1)
    }))

  it.scopedLive("a handler that dies answers a failure, not silence", () =>
    Effect.gen(function*() {
      const name = fleetName()
      const scope = yield* Effect.scope
      const a = yield* instance(name, scope)
      const b = yield* instance(name, scope)
      yield* b.serve("boom", () => Effect.dieMessage("boom"))
      const failed = yield* Effect.flip(a.send(b.instance, "boom", {}, "5 seconds"))
      assert.strictEqual(failed._tag, "FleetError")
      assert.match(failed.message, /could not answer boom/)
    }))
})
