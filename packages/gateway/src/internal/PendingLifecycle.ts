/**
 * How the in-memory PendingCalls keeps one call: registered under its id (within
 * `questions.maxPending`), parked on its TTL between moves, woken when a waiting caller must look
 * again, and ended, with its outstanding questions answered for the caller.
 */
import type { Keyed } from "@mcpx-fx/cancel/InFlight"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import { onBehalf, PendingCallRefused, type QuestionEvent, type RefusalReason } from "../PendingQuestions.js"
import { type Ending, type Entry, RememberedEndings } from "./PendingEntry.js"

/** What one registry holds: its calls, how the recent ones ended, its events and its scope. */
export interface Registry {
  /** The registry's calls run, and their timers, until this scope closes. */
  readonly scope: Scope.Scope
  readonly entries: Keyed<Entry>
  readonly endings: Map<string, Ending>
  readonly events: PubSub.PubSub<QuestionEvent>
}

export const refuse = (reason: RefusalReason, detail: string) => Effect.fail(new PendingCallRefused({ reason, detail }))

/** Wakes whoever waits on the call's next move. */
export const signal = (entry: Entry): Effect.Effect<void> =>
  Effect.sync(() => {
    const woken = entry.wake
    entry.wake = Deferred.unsafeMake<void>(FiberId.none)
    Deferred.unsafeDone(woken, Exit.void)
  })

// Every question still waiting is answered on the caller's behalf, so no upstream request (and
// no fiber answering it) is left waiting on a call that is over.
export const answerOutstanding = (entry: Entry) =>
  entry.asked.size === 0
    ? Effect.void
    : Effect.forEach([...entry.asked.values()], (a) => Deferred.complete(a.answer, onBehalf(a.question)), { discard: true })

export const stopTimer = (entry: Entry) =>
  Effect.suspend(() => {
    const timer = entry.timer
    entry.timer = undefined
    return timer === undefined ? Effect.void : Fiber.interrupt(timer)
  })

/** Keeping calls in `registry`. */
export const make = (registry: Registry) => {
  const { endings, entries, events, scope } = registry
  const at = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

  // Called as the effect is run, never ahead of it: most calls end unregistered and without a
  // timer, which leaves nothing to forget and no effect to run for it.
  const forget = (entry: Entry, ending: Ending): Effect.Effect<void> =>
    !entry.registered && entry.timer === undefined ? Effect.void : Effect.suspend(() => {
      if (entry.registered) {
        endings.set(entry.id, ending)
        if (endings.size > RememberedEndings) endings.delete(endings.keys().next().value!)
      }
      entries.delete(entry.id)
      entry.registered = false
      return stopTimer(entry)
    })

  /**
   * Ends a call: questions answered for the caller (and any it asks from now on), then the
   * upstream request cancelled.
   */
  const end = Effect.fnUntraced(function*(entry: Entry, ending: Ending) {
    entry.ended = true
    yield* forget(entry, ending)
    yield* answerOutstanding(entry)
    const fiber = entry.fiber
    if (fiber !== undefined && entry.exit === undefined) yield* Fiber.interrupt(fiber)
  })

  const register = (entry: Entry) =>
    Effect.suspend((): Effect.Effect<void, PendingCallRefused> => {
      if (entry.registered) return Effect.void
      if (entries.size >= entry.bounds.maxPending) {
        return Effect.zipRight(
          end(entry, "failed"),
          new PendingCallRefused({
            reason: "full",
            detail: `${entries.size} calls are already waiting for their callers (questions.maxPending); this one was cancelled, try again later`
          })
        )
      }
      entries.set(entry.id, entry)
      entry.registered = true
      return Effect.void
    })

  /** Keeps a call for its caller between moves: ended if the caller is not back within the TTL. */
  const park = (entry: Entry) =>
    Effect.gen(function*() {
      yield* stopTimer(entry)
      const ttl = entry.bounds.ttl
      entry.expiresAt = (yield* Clock.currentTimeMillis) + Duration.toMillis(ttl)
      entry.timer = yield* Effect.sleep(ttl).pipe(
        Effect.zipRight(Effect.suspend(() => {
          entry.timer = undefined
          return Effect.zipRight(
            Effect.flatMap(at, (when) => PubSub.publish(events, { type: "question.expired", server: entry.label, at: when, id: entry.id })),
            end(entry, "expired")
          )
        })),
        Effect.asVoid,
        // Parking happens inside `decide`'s uninterruptible block, whose flags a fork inherits;
        // the timer must stay interruptible so an answer can stop it.
        Effect.interruptible,
        Effect.forkIn(scope)
      )
    })

  return { forget, end, register, park }
}

/** The keeping of one registry's calls. */
export type Lifecycle = ReturnType<typeof make>
