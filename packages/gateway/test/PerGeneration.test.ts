/**
 * A value worked out from the settings is kept for as long as their generation stands: read once,
 * handed over without an effect while it is kept, and read again once the generation moves.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { perGeneration } from "../src/internal/PerGeneration.js"

describe("perGeneration", () => {
  it.effect("gateway/settings/a value is read once per generation, and known without an effect only while it stands", () =>
    Effect.gen(function*() {
      let generation = 0
      let reads = 0
      const kept = perGeneration(() => generation, Effect.sync(() => ++reads))
      assert.isUndefined(kept.known(), "nothing is known before the first read")
      assert.strictEqual(yield* kept.get, 1)
      assert.strictEqual(yield* kept.get, 1)
      assert.strictEqual(kept.known(), 1)
      assert.strictEqual(reads, 1)
      generation++
      assert.isUndefined(kept.known(), "a moved generation makes the kept value unknown")
      assert.strictEqual(yield* kept.get, 2)
      assert.strictEqual(kept.known(), 2)
      assert.strictEqual(reads, 2)
    }))
})
