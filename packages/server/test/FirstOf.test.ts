/**
 * Waiting for a request's fibers or for it to speak first: every exit once all have ended, or
 * nothing as soon as the flag is raised (raised before the wait, too).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { firstOf, Spoken } from "../src/internal/FirstOf.js"

describe("FirstOf", () => {
  it.effect("server/firstOf/every exit, in order, once all fibers have ended", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const a = yield* Effect.fork(Effect.as(Deferred.await(gate), "a"))
      const b = yield* Effect.fork(Effect.succeed("b"))
      const waiting = yield* Effect.fork(firstOf([a, b], new Spoken()))
      yield* Effect.yieldNow()
      assert.isTrue((yield* Fiber.poll(waiting))._tag === "None")
      yield* Deferred.succeed(gate, undefined)
      const exits = yield* Fiber.join(waiting)
      assert.deepStrictEqual(exits, [Exit.succeed("a"), Exit.succeed("b")])
    }))

  it.effect("server/firstOf/nothing as soon as the request speaks, before or during the wait", () =>
    Effect.gen(function*() {
      const never = yield* Effect.fork(Effect.never)
      const spoken = new Spoken()
      const waiting = yield* Effect.fork(firstOf([never], spoken))
      yield* Effect.yieldNow()
      spoken.raise()
      assert.isUndefined(yield* Fiber.join(waiting))
      assert.isUndefined(yield* firstOf([never], spoken))
      yield* Fiber.interrupt(never)
    }))
})
