/**
 * `Members` and `Keyed` against the Set and Map they stand in for: over random sequences of
 * operations each answers what the standard collection answers (sizes, lookups, removals, the
 * values in order), `1` and `"1"` stay two keys, and a removal handle used twice removes once.
 */
import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import { Keyed, Members } from "../src/InFlight.js"

const key = FastCheck.oneof(
  FastCheck.integer({ min: -3, max: 6 }),
  FastCheck.constantFrom("0", "1", "2", "a", "__proto__", "constructor", "toString", "1.5"),
  FastCheck.constantFrom(1.5, -0, 2 ** 40)
)

const keyedOp = FastCheck.oneof(
  FastCheck.record({ op: FastCheck.constant("set" as const), key, value: FastCheck.integer() }),
  FastCheck.record({ op: FastCheck.constant("delete" as const), key }),
  FastCheck.record({ op: FastCheck.constant("clear" as const) })
)

describe("InFlight", () => {
  it("keyed/as-map: every lookup, removal and size is a Map's, whatever the sequence", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(keyedOp, { maxLength: 60 }), (ops) => {
        const model = new Map<string | number, number>()
        const keyed = new Keyed<number>()
        for (const o of ops) {
          if (o.op === "set") {
            model.set(o.key, o.value)
            keyed.set(o.key, o.value)
          } else if (o.op === "delete") {
            assert.strictEqual(keyed.delete(o.key), model.delete(o.key))
          } else {
            model.clear()
            keyed.clear()
          }
          assert.strictEqual(keyed.size, model.size)
        }
        for (const k of [-3, -2, -1, 0, 1, 2, 3, 4, 5, 6, "0", "1", "2", "a", "__proto__", "constructor", "toString", "1.5", 1.5, 2 ** 40]) {
          assert.strictEqual(keyed.get(k), model.get(k))
          assert.strictEqual(keyed.has(k), model.has(k))
        }
        const entries = (xs: Iterable<[string | number, number]>) => [...xs].map(([k, v]) => `${typeof k}:${String(k)}=${v}`).sort()
        assert.deepStrictEqual(entries(keyed), entries(model))
        assert.deepStrictEqual([...keyed.values()].sort(), [...model.values()].sort())
      })
    )
  })

  it("keyed/types: 1 and \"1\" are two keys, as in a Map", () => {
    const keyed = new Keyed<string>()
    keyed.set(1, "number").set("1", "string")
    assert.strictEqual(keyed.size, 2)
    assert.strictEqual(keyed.get(1), "number")
    assert.strictEqual(keyed.get("1"), "string")
    assert.isTrue(keyed.delete(1))
    assert.isFalse(keyed.has(1))
    assert.strictEqual(keyed.get("1"), "string")
  })

  it("members/as-set: values in insertion order, each removed by its own handle, once", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(FastCheck.nat({ max: 20 }), { maxLength: 80 }), (script) => {
        // Even numbers add a value; odd ones remove the (n mod live)th handle, maybe for the second time.
        const members = new Members<number>()
        const model: Array<number> = []
        const handles: Array<{ readonly value: number; readonly remove: () => void }> = []
        let next = 0
        for (const step of script) {
          if (step % 2 === 0 || handles.length === 0) {
            const value = next++
            handles.push({ value, remove: members.add(value) })
            model.push(value)
          } else {
            const h = handles[step % handles.length]!
            h.remove()
            const at = model.indexOf(h.value)
            if (at >= 0) model.splice(at, 1)
          }
          assert.strictEqual(members.size, model.length)
          assert.deepStrictEqual(members.values(), model)
          assert.deepStrictEqual([...members], model)
        }
        assert.deepStrictEqual(members.takeAll(), model)
        assert.strictEqual(members.size, 0)
        assert.deepStrictEqual(members.values(), [])
        // A handle kept past takeAll removes nothing that came after.
        const later = members.add(99)
        for (const h of handles) h.remove()
        assert.deepStrictEqual(members.values(), [99])
        later()
        assert.strictEqual(members.size, 0)
      })
    )
  })
})
