/**
 * The contract of `abortable` (docs/cancellation.md), over random interleavings on the TestClock of:
 * the call ending on its own (a success or a failure, or never), several aborts with different
 * errors at different times, and the caller's interruption. Whatever comes first decides the one
 * outcome; the call's finalizer runs exactly once, and its interruption (the upstream request
 * cancelled) happens exactly when something other than its own ending came first; no fiber of the
 * call is left running.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import { type Abort, abortable } from "../src/Abortable.js"

/**
 * When things happen, in whole milliseconds: every time is distinct, but several aborts can come
 * at one time (one after the other in the same instant, as a crash and a deadline could).
 */
const scenario = FastCheck.uniqueArray(FastCheck.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 6 }).chain(
  (times) =>
    FastCheck.record({
      // The first time is the call's own ending (or none), the second the caller's interruption
      // (or none), each of the rest a group of aborts.
      ownEnds: FastCheck.boolean(),
      ownSucceeds: FastCheck.boolean(),
      // An abort in the very instant the call ends on its own, before its caller has resumed.
      abortAtOwnEnd: FastCheck.boolean(),
      interrupts: FastCheck.boolean(),
      times: FastCheck.constant(times),
      groups: FastCheck.array(FastCheck.integer({ min: 1, max: 3 }), { minLength: times.length, maxLength: times.length })
    })
)

type Scenario = typeof scenario extends FastCheck.Arbitrary<infer S> ? S : never

type Event =
  | { readonly at: number; readonly kind: "own" }
  | { readonly at: number; readonly kind: "interrupt" }
  | { readonly at: number; readonly kind: "aborts"; readonly errors: ReadonlyArray<string> }

const eventsOf = (s: Scenario): ReadonlyArray<Event> => {
  const [first, second, ...rest] = s.times
  const events: Array<Event> = []
  if (s.ownEnds && first !== undefined) events.push({ at: first, kind: "own" })
  if (s.interrupts && second !== undefined) events.push({ at: second, kind: "interrupt" })
  rest.forEach((at, i) => {
    const n = s.groups[i + 2] ?? 1
    events.push({ at, kind: "aborts", errors: Array.from({ length: n }, (_, j) => `abort ${i}.${j}`) })
  })
  return events.sort((a, b) => a.at - b.at)
}

/** After every event, the caller gives up, so that each run has an outcome. */
const END = 61

describe("Abortable (properties)", () => {
  it.effect.prop(
    "cancel/abortable/whatever comes first decides the one outcome; the call is cleaned up exactly once",
    [scenario],
    ([s]) =>
      Effect.gen(function*() {
        const events = eventsOf(s)
        let finalized = 0
        let interrupted = 0
        let inner: Fiber.RuntimeFiber<unknown, unknown> | undefined
        let abort: Abort<string> | undefined
        const own = events.find((e) => e.kind === "own")
        const ownResult: Effect.Effect<string, string> = s.ownSucceeds ? Effect.succeed("own value") : Effect.fail("own error")
        const call = abortable((a: Abort<string>) => {
          abort = a
          const body = own === undefined ? Effect.never : Effect.zipRight(Effect.sleep(own.at), ownResult)
          return Effect.withFiberRuntime<string, string>((fiber) => {
            inner = fiber
            if (s.abortAtOwnEnd) fiber.addObserver(() => a("at its own end"))
            return body
          }).pipe(
            Effect.onInterrupt(() => Effect.sync(() => void interrupted++)),
            Effect.ensuring(Effect.sync(() => void finalized++))
          )
        })
        const outer = yield* Effect.fork(call)
        for (const e of events) {
          if (e.kind === "aborts") {
            const errors = e.errors
            yield* Effect.fork(Effect.zipRight(Effect.sleep(e.at), Effect.sync(() => errors.forEach((error) => abort?.(error)))))
          }
          if (e.kind === "interrupt") yield* Effect.fork(Effect.zipRight(Effect.sleep(e.at), Fiber.interrupt(outer)))
        }
        // One event at a time, so that each is seen before the next.
        for (const e of events) yield* TestClock.setTime(e.at)
        yield* TestClock.setTime(END)
        const exit = yield* Fiber.interrupt(outer)

        const first = events[0]
        if (first === undefined || first.kind === "interrupt") {
          assert.isTrue(Exit.isInterrupted(exit))
        } else if (first.kind === "own") {
          // Its own ending stands, whatever came after.
          assert.deepStrictEqual(exit, s.ownSucceeds ? Exit.succeed("own value") : Exit.fail("own error"))
        } else {
          // The first abort's error wins over later aborts (even in the same instant) and interruption.
          assert.deepStrictEqual(exit, Exit.fail(first.errors[0]))
        }
        assert.strictEqual(finalized, 1)
        assert.strictEqual(interrupted, first?.kind === "own" ? 0 : 1)
        assert.isDefined(inner)
        assert.isNotNull(inner!.unsafePoll(), "the call's fiber is left running")
      }),
    { fastCheck: { numRuns: 100 } }
  )
})
