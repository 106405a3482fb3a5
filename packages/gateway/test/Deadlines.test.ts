/**
 * The gateway's shared call timer: a deadline fires at its time and not before, one let go of
 * never fires, and a shorter one added while the timer sleeps on a longer one still fires on time
 * (TestClock throughout).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as Deadlines from "../src/internal/Deadlines.js"

describe("Deadlines", () => {
  it.scoped("gateway/deadlines/a deadline fires at its time, not before", () =>
    Effect.gen(function*() {
      const deadlines = yield* Deadlines.make
      const fired: Array<string> = []
      deadlines.add(10_000, () => fired.push("a"))
      yield* TestClock.adjust("9999 millis")
      assert.deepStrictEqual(fired, [])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(fired, ["a"])
    }))

  it.scoped("gateway/deadlines/one let go of never fires, and the others still do", () =>
    Effect.gen(function*() {
      const deadlines = yield* Deadlines.make
      const fired: Array<string> = []
      const letGo = deadlines.add(1_000, () => fired.push("a"))
      deadlines.add(1_000, () => fired.push("b"))
      letGo()
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual(fired, ["b"])
    }))

  it.scoped("gateway/deadlines/a shorter deadline added while the timer waits on a longer one fires on time", () =>
    Effect.gen(function*() {
      const deadlines = yield* Deadlines.make
      const fired: Array<string> = []
      deadlines.add(60_000, () => fired.push("long"))
      yield* TestClock.adjust("1 second")
      deadlines.add(2_000, () => fired.push("short"))
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual(fired, ["short"])
      yield* TestClock.adjust("57 seconds")
      assert.deepStrictEqual(fired, ["short", "long"])
    }))

  it.scoped("gateway/deadlines/deadlines of one length fire in the order they were added", () =>
    Effect.gen(function*() {
      const deadlines = yield* Deadlines.make
      const fired: Array<number> = []
      for (let i = 0; i < 5; i++) {
        deadlines.add(1_000, () => fired.push(i))
        yield* TestClock.adjust("100 millis")
      }
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(fired, [0, 1, 2, 3, 4])
      assert.strictEqual(deadlines.now(), 1_500)
    }))
})
