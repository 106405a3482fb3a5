/**
 * Call timeouts without a fiber per call: one fiber per gateway sleeps until the earliest deadline
 * and expires whatever is due. A call registers its deadline and lets go of it when it ends, both
 * O(1): deadlines of one duration arrive in time order, so each duration keeps a FIFO (a linked
 * list, so a finished call leaves from the middle at once and nothing piles up).
 *
 * The fiber reads time from `Clock`, so a TestClock drives it as it drives `Effect.timeout`.
 */
import { Keyed } from "@mcpx-fx/cancel/InFlight"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

interface Entry {
  readonly at: number
  readonly expire: () => void
  prev: Entry | undefined
  next: Entry | undefined
  list: List | undefined
}

interface List {
  readonly ms: number
  head: Entry | undefined
  tail: Entry | undefined
}

export interface Deadlines {
  /** Calls `expire` once `ms` from now unless the answer is called first (which lets go of it). */
  readonly add: (ms: number, expire: () => void) => () => void
  /** The time deadlines are measured in (the Clock's, so a TestClock's in tests). */
  readonly now: () => number
}

/** The deadlines of one gateway; its fiber ends with the scope. */
export const make: Effect.Effect<Deadlines, never, Scope.Scope> = Effect.gen(function*() {
  const clock = yield* Effect.clock
  // Not a Map: with one call at a time, a list is dropped and made again on every call (@mcpx-fx/cancel/InFlight).
  const lists = new Keyed<List>()
  const unlink = (e: Entry): void => {
    const list = e.list
    if (list === undefined) return
    if (e.prev === undefined) list.head = e.next
    else e.prev.next = e.next
    if (e.next === undefined) list.tail = e.prev
    else e.next.prev = e.prev
    e.prev = e.next = e.list = undefined
    // A budget of an odd length (what a paused call has left) leaves no empty list behind.
    if (list.head === undefined && lists.get(list.ms) === list) lists.delete(list.ms)
  }
  // The deadline the fiber sleeps until (Infinity: none), and how to wake it for an earlier one.
  let target = Infinity
  const wakeup = yield* Effect.makeLatch(false)

  const earliest = (): number => {
    let min = Infinity
    for (const list of lists.values()) if (list.head !== undefined && list.head.at < min) min = list.head.at
    return min
  }

  const expireDue = (now: number): void => {
    for (const list of [...lists.values()]) {
      while (list.head !== undefined && list.head.at <= now) {
        const e = list.head
        unlink(e)
        e.expire()
      }
    }
  }

  yield* Effect.gen(function*() {
    for (;;) {
      // Closed before looking, so a deadline added from here on wakes the wait below.
      yield* wakeup.close
      const now = yield* Clock.currentTimeMillis
      expireDue(now)
      target = earliest()
      if (target === Infinity) yield* wakeup.await
      else yield* Effect.raceFirst(Effect.sleep(target - now), wakeup.await)
    }
  }).pipe(Effect.interruptible, Effect.forkScoped)

  return {
    add: (ms, expire) => {
      if (!Number.isFinite(ms)) return () => {}
      const at = clock.unsafeCurrentTimeMillis() + ms
      let list = lists.get(ms)
      if (list === undefined) {
        list = { ms, head: undefined, tail: undefined }
        lists.set(ms, list)
      }
      const entry: Entry = { at, expire, prev: list.tail, next: undefined, list }
      if (list.tail === undefined) list.head = entry
      else list.tail.next = entry
      list.tail = entry
      if (at < target) {
        target = at
        wakeup.unsafeOpen()
      }
      return () => unlink(entry)
    },
    now: () => clock.unsafeCurrentTimeMillis()
  }
})
