/**
 * What a long-lived owner keeps of the calls in flight (their aborts, their waiters, their
 * answers' boxes by request id): an entry added as each call begins and removed as it ends,
 * thousands of times a second in a busy daemon.
 *
 * Not a Map or a Set, for the garbage collector's sake. V8 replaces a Map's or a Set's table when
 * it grows or shrinks and leaves the replaced table linked to its replacement (so that an iterator
 * can follow). A long-lived owner's table lives in old space; once replaced it is dead there, but a
 * scavenge (the young generation's collection) cannot know that, so the young table it links to
 * survives, with every entry it holds, and is promoted to old space in turn, where it links to the
 * next one: until the next full collection, every call's state that was in such a table outlived
 * its call. That was most of what the daemon promoted per call (`npm run bench:gc`, see
 * docs/performance.md). A linked list, a table of plain arrays (IntegerTable.ts) and objects in
 * dictionary mode replace nothing that links forward, so they are what these are made of.
 */

import { IntegerTable } from "./IntegerTable.js"

interface Node<V> {
  readonly value: V
  prev: Node<V> | undefined
  next: Node<V> | undefined
  /** Cleared once removed, so a second removal is nothing. */
  linked: boolean
}

/** Values in insertion order, each added with its own way to remove it (a Set of callbacks, without the Set). */
export class Members<V> {
  private head: Node<V> | undefined = undefined
  private tail: Node<V> | undefined = undefined
  private count = 0

  get size(): number {
    return this.count
  }

  /** Adds `value`; answers how to remove it again (idempotent). */
  add(value: V): () => void {
    const node: Node<V> = { value, prev: this.tail, next: undefined, linked: true }
    if (this.tail === undefined) this.head = node
    else this.tail.next = node
    this.tail = node
    this.count++
    return () => this.unlink(node)
  }

  /** The values now, oldest first. */
  values(): Array<V> {
    const out: Array<V> = []
    for (let node = this.head; node !== undefined; node = node.next) out.push(node.value)
    return out
  }

  [Symbol.iterator](): IterableIterator<V> {
    return this.values()[Symbol.iterator]()
  }

  /** Removes every value; answers them, oldest first. */
  takeAll(): Array<V> {
    const out = this.values()
    for (let node = this.head; node !== undefined;) {
      const next = node.next
      node.prev = node.next = undefined
      node.linked = false
      node = next
    }
    this.head = this.tail = undefined
    this.count = 0
    return out
  }

  private unlink(node: Node<V>): void {
    if (!node.linked) return
    node.linked = false
    if (node.prev === undefined) this.head = node.next
    else node.prev.next = node.next
    if (node.next === undefined) this.tail = node.prev
    else node.next.prev = node.prev
    // A removed node points at nothing: dead in old space, it keeps no younger node alive.
    node.prev = node.next = undefined
    this.count--
  }
}

/**
 * Values by a JSON-RPC-like key (a string or a number; `1` and `"1"` are different keys, as they
 * are in a Map). The methods a Map has, for what the owners use.
 */
export class Keyed<V> {
  // Integers (request ids nearly always) in a table of their own (IntegerTable.ts); the rest in
  // two dictionaries, because an object's keys are strings: 1.5 and "1.5" would be one key.
  private integers = new IntegerTable<V>()
  private numbers: Record<number, V> = Object.create(null) as Record<number, V>
  private strings: Record<string, V> = Object.create(null) as Record<string, V>
  private count = 0

  get size(): number {
    return this.integers.size + this.count
  }

  get(key: string | number): V | undefined {
    if (typeof key === "string") return this.strings[key]
    return Number.isSafeInteger(key) ? this.integers.get(key) : this.numbers[key]
  }

  has(key: string | number): boolean {
    if (typeof key === "string") return key in this.strings
    return Number.isSafeInteger(key) ? this.integers.has(key) : key in this.numbers
  }

  set(key: string | number, value: V): this {
    if (typeof key === "number") {
      if (Number.isSafeInteger(key)) {
        this.integers.set(key, value)
        return this
      }
      if (!(key in this.numbers)) this.count++
      this.numbers[key] = value
    } else {
      if (!(key in this.strings)) this.count++
      this.strings[key] = value
    }
    return this
  }

  /** Removes `key`; answers whether it was there. */
  delete(key: string | number): boolean {
    if (typeof key === "number") {
      if (Number.isSafeInteger(key)) return this.integers.delete(key)
      if (!(key in this.numbers)) return false
      delete this.numbers[key]
    } else {
      if (!(key in this.strings)) return false
      delete this.strings[key]
    }
    this.count--
    return true
  }

  clear(): void {
    this.integers.clear()
    this.numbers = Object.create(null) as Record<number, V>
    this.strings = Object.create(null) as Record<string, V>
    this.count = 0
  }

  values(): Array<V> {
    const out: Array<V> = []
    this.integers.forEach((v) => void out.push(v))
    for (const k in this.numbers) out.push(this.numbers[k as unknown as number]!)
    for (const k in this.strings) out.push(this.strings[k]!)
    return out
  }

  /** Every key and value; numbers' keys as numbers again. */
  *entries(): IterableIterator<[string | number, V]> {
    if (this.size === 0) return
    const integers: Array<[number, V]> = []
    this.integers.forEach((v, k) => void integers.push([k, v]))
    yield* integers
    for (const k in this.numbers) yield [Number(k), this.numbers[k as unknown as number]!]
    for (const k in this.strings) yield [k, this.strings[k]!]
  }

  [Symbol.iterator](): IterableIterator<[string | number, V]> {
    return this.entries()
  }
}
