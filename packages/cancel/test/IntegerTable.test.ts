/**
 * `IntegerTable` against a Map: over random sequences of sets and deletes each answers what the
 * Map answers. Keys are drawn from few values spread over the whole safe range, so that entries
 * share slots, probe past the table's end and are moved back when one before them goes, and the
 * table grows past a burst and shrinks again.
 */
import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import { IntegerTable } from "../src/IntegerTable.js"

const key = FastCheck.oneof(
  FastCheck.integer({ min: -40, max: 40 }),
  FastCheck.constantFrom(0, -0, 2 ** 32, 2 ** 32 + 1, -(2 ** 32), 2 ** 40, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER)
)

const op = FastCheck.oneof(
  FastCheck.record({ op: FastCheck.constant("set" as const), key, value: FastCheck.integer() }),
  FastCheck.record({ op: FastCheck.constant("delete" as const), key }),
  // A burst: many keys set, then all of them deleted again.
  FastCheck.record({ op: FastCheck.constant("burst" as const), from: FastCheck.integer({ min: -1000, max: 1000 }), count: FastCheck.nat({ max: 300 }) })
)

/**
 * Calls in flight on `table`, topped up to `inFlight` and answered `batch` at a time for `rounds`
 * rounds, with ids that only grow; answers how many times the table was resized.
 */
const swinging = (table: IntegerTable<number>) => {
  let next = 10_000
  const live: Array<number> = []
  return (inFlight: number, batch: number, rounds: number): number => {
    let resizes = 0
    const step = (f: () => void) => {
      const before = table.capacity
      f()
      if (table.capacity !== before) resizes++
    }
    for (let round = 0; round < rounds; round++) {
      while (live.length < inFlight) {
        const id = next++
        live.push(id)
        step(() => table.set(id, 0))
      }
      for (const id of live.splice(0, batch)) step(() => table.delete(id))
    }
    return resizes
  }
}

const sorted = (xs: Iterable<readonly [number, number]>) => [...xs].map(([k, v]) => `${k}=${v}`).sort()

describe("IntegerTable", () => {
  it("integerTable/as-map: every lookup, removal and size is a Map's, whatever the sequence", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(op, { maxLength: 200 }), (ops) => {
        const model = new Map<number, number>()
        const table = new IntegerTable<number>()
        for (const o of ops) {
          if (o.op === "set") {
            assert.strictEqual(table.set(o.key, o.value), !model.has(o.key))
            model.set(o.key, o.value)
          } else if (o.op === "delete") {
            assert.strictEqual(table.delete(o.key), model.delete(o.key))
          } else {
            for (let i = 0; i < o.count; i++) {
              table.set(o.from * 7 + i * 13, i)
              model.set(o.from * 7 + i * 13, i)
            }
            for (let i = 0; i < o.count; i++) assert.strictEqual(table.delete(o.from * 7 + i * 13), model.delete(o.from * 7 + i * 13))
          }
          assert.strictEqual(table.size, model.size)
          for (const k of model.keys()) assert.strictEqual(table.get(k), model.get(k))
        }
        for (let k = -45; k <= 45; k++) {
          assert.strictEqual(table.get(k), model.get(k))
          assert.strictEqual(table.has(k), model.has(k))
        }
        const seen: Array<[number, number]> = []
        table.forEach((v, k) => void seen.push([k, v]))
        assert.deepStrictEqual(sorted(seen), sorted(model))
        // -0 is the key 0, as in a Map.
        assert.isFalse(Object.is(seen.find(([k]) => k === 0)?.[0], -0))
      })
    )
  })

  it("integerTable/room: a burst's room is given back once calls have come and gone, and a swinging count does not resize it", () => {
    const table = new IntegerTable<number>()
    for (let i = 0; i < 1000; i++) table.set(i, i)
    assert.isAtLeast(table.capacity, 2000)
    for (let i = 0; i < 1000; i++) table.delete(i)
    // Calls one at a time after the burst: ids that only grow, each set then deleted.
    for (let i = 1000; i < 6000; i++) {
      table.set(i, i)
      table.delete(i)
    }
    assert.strictEqual(table.capacity, 64)
    assert.strictEqual(table.size, 0)
    // Sixteen in flight, answered in batches of fifteen: the count swings between 1 and 16.
    const swing = swinging(table)
    assert.strictEqual(swing(16, 15, 500), 0)
    // Two hundred in flight, answered in batches of 195: past the kept room, the table shrinks
    // again only once as many calls have gone as it has slots, not on every swing.
    const resizes = swing(200, 195, 100)
    // A shrink and a growth per 512 removals: ~76 over 19,500 (600 if it shrank on every swing).
    assert.isBelow(resizes, 200)
  })

  it("integerTable/clear: a cleared table holds nothing and takes keys again", () => {
    const table = new IntegerTable<string>()
    for (let i = 0; i < 100; i++) table.set(i, `v${i}`)
    table.clear()
    assert.strictEqual(table.size, 0)
    assert.isUndefined(table.get(5))
    table.set(5, "again")
    assert.strictEqual(table.get(5), "again")
    assert.strictEqual(table.size, 1)
  })
})
