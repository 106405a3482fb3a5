/**
 * `withKey` answers what `{ ...o, [key]: value }` answers (the given value wins, every other key
 * is kept, the source is left as it was) whatever the source holds, `__proto__` included.
 */
import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import { withKey } from "../src/Json.js"

const key = FastCheck.constantFrom("_meta", "resultType", "task", "name", "__proto__", "constructor", "0")

describe("Json", () => {
  it("json/withKey: the same object a spread and a key make, and the source unchanged", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.dictionary(key, FastCheck.jsonValue()), key, FastCheck.jsonValue(), (entries, k, value) => {
        // Through JSON.parse, as messages come: a `__proto__` key is then an own key.
        const source = JSON.parse(JSON.stringify(entries)) as Record<string, unknown>
        const before = JSON.stringify(source)
        const out = withKey(source, k, value) as Record<string, unknown>
        const spread: Record<string, unknown> = { ...source, [k]: value }
        assert.deepStrictEqual(Object.keys(out).sort(), Object.keys(spread).sort())
        for (const name of Object.keys(spread)) assert.deepStrictEqual(out[name], spread[name])
        assert.isTrue(Object.prototype.hasOwnProperty.call(out, k))
        assert.strictEqual(Object.getPrototypeOf(out), Object.prototype)
        assert.strictEqual(JSON.stringify(source), before)
      })
    )
  })
})
