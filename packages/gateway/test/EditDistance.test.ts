import { assert, describe, it } from "@effect/vitest"
import { distance } from "../src/EditDistance.js"
import * as Names from "../src/Names.js"

describe("EditDistance", () => {
  it("counts insertions, deletions and substitutions one each", () => {
    assert.strictEqual(distance("", ""), 0)
    assert.strictEqual(distance("", "abc"), 3)
    assert.strictEqual(distance("abc", ""), 3)
    assert.strictEqual(distance("kitten", "sitting"), 3)
    assert.strictEqual(distance("status", "status"), 0)
    assert.strictEqual(distance("stop", "stops"), 1)
  })

  it("counts a swap of two neighbours as one, where Levenshtein would count two", () => {
    assert.strictEqual(distance("stauts", "status"), 1)
    assert.strictEqual(distance("lsit", "list"), 1)
    assert.strictEqual(distance("ab", "ba"), 1)
    // Optimal string alignment: a swapped pair is not edited again.
    assert.strictEqual(distance("ca", "abc"), 3)
  })

  it("is symmetric", () => {
    for (const [a, b] of [["stauts", "status"], ["pool.max", "poolmax"], ["serve", "server"], ["ecoh", "echo"]] as const) {
      assert.strictEqual(distance(a, b), distance(b, a), `${a} / ${b}`)
    }
  })

  it("is what the gateway's closest names are measured with", () => {
    const close = Names.closest("alpha__ehco", ["alpha__hello", "beta__boom", "alpha__echo"])
    assert.strictEqual(close[0], "alpha__echo")
    assert.notInclude(close, "beta__boom")
  })
})
