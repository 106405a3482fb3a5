/**
 * Values by integer key, for `Keyed`: an open-addressed table of two arrays (linear probing, and
 * deletion by moving the entries after a removed one back, so no tombstone piles up).
 *
 * Request ids are integers that only grow. Kept in an object's elements, they were sparse keys in
 * dictionary mode, and removing one went through V8's runtime each time: a get, a delete and a
 * set took ~470 ns against a Map's ~95. A Map is what `Keyed` must not be (InFlight.ts). Here a
 * table that grows or shrinks is replaced by fresh arrays that nothing links to, and a removed
 * entry's slot is cleared, so nothing in a long-lived owner's table keeps an ended call alive.
 *
 * Keys can come from a host (a legacy session's request ids), so the hash is seeded per table: a
 * host cannot choose ids that all land on one slot.
 */

const MinCapacity = 8

/**
 * A table is not shrunk below this many slots (1 KB with its two arrays): calls in flight come
 * and go in batches, and a count that swings between 1 and 16 would otherwise shrink and grow it
 * again every few calls.
 */
const KeptCapacity = 64

export class IntegerTable<V> {
  private keys: Array<number | undefined> = new Array<number | undefined>(MinCapacity).fill(undefined)
  private vals: Array<V | undefined> = new Array<V | undefined>(MinCapacity).fill(undefined)
  private mask = MinCapacity - 1
  private count = 0
  // Removals since the table was last resized: a shrink waits for as many as the table has
  // slots, so resizing stays O(1) per call however the count swings.
  private removals = 0
  private readonly seed = (Math.random() * 0x1_0000_0000) | 0

  get size(): number {
    return this.count
  }

  /** The slots the table has now (its memory, for tests). */
  get capacity(): number {
    return this.keys.length
  }

  /** Where `key` would sit if nothing were in the way; `key` is a safe integer. */
  private home(key: number): number {
    // The high word too: keys past 2^32 that differ only there would otherwise share a slot.
    const h = Math.imul((key | 0) ^ this.seed, 0x9e3779b1) ^ Math.imul((key / 0x1_0000_0000) | 0, 0x85ebca6b)
    return (h ^ (h >>> 15)) & this.mask
  }

  private find(key: number): number {
    let i = this.home(key)
    for (;;) {
      const k = this.keys[i]
      if (k === undefined) return -1
      if (k === key) return i
      i = (i + 1) & this.mask
    }
  }

  get(key: number): V | undefined {
    const i = this.find(key)
    return i < 0 ? undefined : this.vals[i]
  }

  has(key: number): boolean {
    return this.find(key) >= 0
  }

  /** Sets `key`; answers whether it is new. */
  set(key: number, value: V): boolean {
    // -0 is 0, as in a Map.
    const k = key === 0 ? 0 : key
    let i = this.home(k)
    for (;;) {
      const at = this.keys[i]
      if (at === undefined) break
      if (at === k) {
        this.vals[i] = value
        return false
      }
      i = (i + 1) & this.mask
    }
    this.keys[i] = k
    this.vals[i] = value
    this.count++
    // At most half full, so a probe stays short.
    if (this.count * 2 > this.keys.length) this.resize(this.keys.length * 2)
    return true
  }

  /** Removes `key`; answers whether it was there. */
  delete(key: number): boolean {
    let i = this.find(key)
    if (i < 0) return false
    // Each entry after the hole that would be found through it moves back into it.
    let j = i
    for (;;) {
      j = (j + 1) & this.mask
      const k = this.keys[j]
      if (k === undefined) break
      const h = this.home(k)
      const between = i <= j ? i < h && h <= j : i < h || h <= j
      if (between) continue
      this.keys[i] = k
      this.vals[i] = this.vals[j]
      i = j
    }
    this.keys[i] = undefined
    this.vals[i] = undefined
    this.count--
    this.removals++
    // A burst's room is given back once it has passed, down to a quarter full.
    if (this.keys.length > KeptCapacity && this.count * 8 < this.keys.length && this.removals >= this.keys.length) {
      let capacity = KeptCapacity
      while (capacity < this.count * 4) capacity *= 2
      this.resize(capacity)
    }
    return true
  }

  clear(): void {
    this.keys = new Array<number | undefined>(MinCapacity).fill(undefined)
    this.vals = new Array<V | undefined>(MinCapacity).fill(undefined)
    this.mask = MinCapacity - 1
    this.count = 0
    this.removals = 0
  }

  /** Calls `f` with every key and value, in no particular order. */
  forEach(f: (value: V, key: number) => void): void {
    const keys = this.keys
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]
      if (k !== undefined) f(this.vals[i] as V, k)
    }
  }

  private resize(capacity: number): void {
    const keys = this.keys
    const vals = this.vals
    this.keys = new Array<number | undefined>(capacity).fill(undefined)
    this.vals = new Array<V | undefined>(capacity).fill(undefined)
    this.mask = capacity - 1
    this.removals = 0
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]
      if (k === undefined) continue
      let at = this.home(k)
      while (this.keys[at] !== undefined) at = (at + 1) & this.mask
      this.keys[at] = k
      this.vals[at] = vals[i]
    }
  }
}
