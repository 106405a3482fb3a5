/**
 * The contract of `cuttable` (docs/cancellation.md), over random interleavings on the TestClock of:
 * the call ending on its own (a success or a failure, or never), several aborts with different
 * outcomes (values and errors) at different times, and the caller's interruption; the call's
 * cleanup takes time. Whatever comes first decides the one outcome; an abort answers the caller in
 * its own instant, before the call's cleanup is done, while the caller's interruption waits for
 * it; the call's finalizer runs exactly once, its interruption happens exactly when something
 * other than its own ending came first, and the hook is armed and let go of exactly once.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import type { Abort } from "../src/Abortable.js"
import { cuttable } from "../src/Cuttable.js"

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
  | { readonly at: number; readonly kind: "aborts"; readonly outcomes: ReadonlyArray<Exit.Exit<string, string>> }

// Every other abort answers with a value, the rest with an error.
const outcomeOf = (name: string, n: number): Exit.Exit<string, string> => n % 2 === 0 ? Exit.fail(name) : Exit.succeed(name)

const eventsOf = (s: Scenario): ReadonlyArray<Event> => {
  const [first, second, ...rest] = s.times
  const events: Array<Event> = []
  if (s.ownEnds && first !== undefined) events.push({ at: first, kind: "own" })
  if (s.interrupts && second !== undefined) events.push({ at: second, kind: "interrupt" })
  rest.forEach((at, i) => {
    const n = s.groups[i + 2] ?? 1
    events.push({ at, kind: "aborts", outcomes: Array.from({ length: n }, (_, j) => outcomeOf(`abort ${i}.${j}`, i + j)) })
  })
  return events.sort((a, b) => a.at - b.at)
}

/** After every event, the caller gives up, so that each run has an outcome. */
const END = 61
/** How long the call's cleanup takes once it is interrupted. */
const CLEANUP = 100

describe("Cuttable (properties)", () => {
  it.effect.prop(
    "cancel/cuttable/whatever comes first decides the one outcome; an abort answers before the cleanup, which runs once",
    [scenario],
    ([s]) =>
      Effect.gen(function*() {
        const events = eventsOf(s)
        let finalized = 0
        let interrupted = 0
        let cleanedAt: number | undefined
        let armed = 0
        let letGo = 0
        let answer: { readonly exit: Exit.Exit<string, string>; readonly at: number } | undefined
        let inner: Fiber.RuntimeFiber<unknown, unknown> | undefined
        let abort: Abort<Exit.Exit<string, string>> | undefined
        const own = events.find((e) => e.kind === "own")
        const ownResult: Effect.Effect<string, string> = s.ownSucceeds ? Effect.succeed("own value") : Effect.fail("own error")
        const body = own === undefined ? Effect.never : Effect.zipRight(Effect.sleep(own.at), ownResult)
        const handled = Effect.withFiberRuntime<string, string>((fiber) => {
          inner = fiber
          if (s.abortAtOwnEnd) fiber.addObserver(() => abort?.(Exit.fail("at its own end")))
          return body
        }).pipe(
          Effect.onInterrupt(() =>
            Effect.zipRight(
              Effect.sleep(CLEANUP),
              Effect.flatMap(Clock.currentTimeMillis, (now) =>
                Effect.sync(() => {
                  interrupted++
                  cleanedAt = now
                }))
            )
          ),
          Effect.ensuring(Effect.sync(() => void finalized++))
        )
        const call = cuttable<string, string, never, string, string>(handled, (a) => {
          armed++
          abort = a
          return () => void letGo++
        }).pipe(
          Effect.onExit((exit) => Effect.flatMap(Clock.currentTimeMillis, (at) => Effect.sync(() => void (answer = { exit, at }))))
        )
        const outer = yield* Effect.fork(call)
        for (const e of events) {
          if (e.kind === "aborts") {
            const outcomes = e.outcomes
            yield* Effect.fork(Effect.zipRight(Effect.sleep(e.at), Effect.sync(() => outcomes.forEach((o) => abort?.(o)))))
          }
          if (e.kind === "interrupt") yield* Effect.fork(Effect.zipRight(Effect.sleep(e.at), Fiber.interrupt(outer)))
        }
        // One event at a time, so that each is seen before the next.
        for (const e of events) yield* TestClock.setTime(e.at)
        yield* TestClock.setTime(END)
        const giveUp = yield* Effect.fork(Fiber.interrupt(outer))
        yield* TestClock.setTime(END + CLEANUP)
        yield* Fiber.join(giveUp)

        const first = events[0]
        assert.isDefined(answer)
        const { at, exit } = answer!
        if (first === undefined || first.kind === "interrupt") {
          // The caller's interruption waits for the call's cleanup.
          assert.isTrue(Exit.isInterrupted(exit))
          assert.strictEqual(at, (first?.at ?? END) + CLEANUP)
        } else if (first.kind === "own") {
          assert.deepStrictEqual(exit, s.ownSucceeds ? Exit.succeed("own value") : Exit.fail("own error"))
          assert.strictEqual(at, first.at)
        } else {
          // The first abort's outcome, in its own instant, before the call's cleanup is done.
          assert.deepStrictEqual(exit, first.outcomes[0])
          assert.strictEqual(at, first.at)
          assert.strictEqual(cleanedAt, first.at + CLEANUP)
        }
        assert.strictEqual(finalized, 1)
        assert.strictEqual(interrupted, first?.kind === "own" ? 0 : 1)
        assert.strictEqual(armed, 1)
        assert.strictEqual(letGo, 1)
        assert.isNotNull(inner!.unsafePoll(), "the call's fiber is left running")
      }),
    { fastCheck: { numRuns: 100 } }
  )
})
