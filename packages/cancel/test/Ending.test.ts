/** What waits for one thing's end is told once, latest first, or at once when it comes after the end. */
import { assert, describe, it } from "@effect/vitest"
import { Ending } from "../src/Ending.js"

describe("Ending", () => {
  it("cancel/ending: waiters are told once, latest first; one that comes after the end is told at once", () => {
    const told: Array<string> = []
    const ending = new Ending()
    ending.onEnd(() => told.push("first"))
    ending.onEnd(() => told.push("second"))
    assert.isFalse(ending.isOver)
    assert.deepStrictEqual(told, [])
    ending.end()
    ending.end()
    assert.isTrue(ending.isOver)
    ending.onEnd(() => told.push("late"))
    assert.deepStrictEqual(told, ["second", "first", "late"])
  })

  it("cancel/ending: a waiter added while the end tells the others is told at once", () => {
    const told: Array<string> = []
    const ending = new Ending()
    ending.onEnd(() => ending.onEnd(() => told.push("added during the end")))
    ending.end()
    assert.deepStrictEqual(told, ["added during the end"])
  })
})
