/**
 * stdio, discover first: `initialize` joins a discover that is slow to answer, on the same process.
 * Neither request is abandoned: the discover may still tell us the server is modern (the commonest
 * slow server is a modern one that npx is still downloading), and an `initialize` must not be
 * cancelled (once answered, it has made this process legacy).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type { Negotiation } from "../Negotiator.js"
import type { ProbeError } from "../ProbeModel.js"
import { isClosed, type Opened, type Outcome, refusedBy } from "./ProbeExchanges.js"
import type { Opening, Run } from "./ProbeRun.js"

/**
 * What the race on one stdio process found: the server's era (for the cache), what initialize did
 * on this process if it was sent and answered, and a discover still unanswered when initialize
 * settled the process legacy (it keeps running, in the process's scope).
 */
export interface Raced {
  readonly outcome: Outcome
  readonly opened: Opened | undefined
  readonly pending: Fiber.Fiber<Outcome, ProbeError> | undefined
}

/** Discover on `at`, with initialize sent alongside once `bound` passes unanswered. */
export const discoverRacing = (run: Run, at: Opening, negotiation: Negotiation, bound: Duration.DurationInput) =>
  Effect.gen(function*() {
    const { discover, initialize, note } = run
    const discovering = yield* Effect.forkIn(discover(at.conn, negotiation), at.scope)
    const early = yield* Fiber.join(discovering).pipe(Effect.timeoutOption(bound))
    if (Option.isSome(early)) return { outcome: early.value, opened: undefined, pending: undefined } satisfies Raced
    yield* note(`no answer to discover within ${Duration.format(Duration.decode(bound))}: sending initialize alongside`)
    const initializing = yield* Effect.forkIn(initialize(at.conn, negotiation), at.scope)
    const first = yield* Effect.raceFirst(
      Effect.map(Fiber.await(discovering), (exit) => ({ _tag: "Discover", exit }) as const),
      Effect.map(Fiber.await(initializing), (exit) => ({ _tag: "Initialize", exit }) as const)
    )
    if (first._tag === "Initialize") {
      const exit = first.exit
      // A dead process ends the probe for both; any other failure leaves the era to discover.
      if (Exit.isFailure(exit) && isClosed(exit.cause)) return yield* Effect.failCause(exit.cause)
      if (Exit.isSuccess(exit) && exit.value._tag === "Legacy") {
        const opened = exit.value
        const answered = yield* Fiber.poll(discovering)
        if (Option.isNone(answered)) {
          yield* note(`initialize answered first: this process is legacy; its discover is still awaited`)
          return {
            outcome: { _tag: "Legacy", why: "initialize answered first" },
            opened,
            pending: discovering
          } satisfies Raced
        }
        const outcome = yield* answered.value
        yield* note(`initialize answered: this process is legacy`)
        return { outcome, opened, pending: undefined } satisfies Raced
      }
      const outcome = yield* Fiber.join(discovering)
      if (Exit.isSuccess(exit)) return { outcome, opened: exit.value, pending: undefined } satisfies Raced
      if (outcome._tag === "Legacy") return yield* Effect.failCause(exit.cause)
      return { outcome, opened: refusedBy(exit.cause), pending: undefined } satisfies Raced
    }
    const outcome = yield* first.exit
    if (outcome._tag === "Legacy") {
      return { outcome, opened: yield* Fiber.join(initializing), pending: undefined } satisfies Raced
    }
    // Modern, with initialize in flight: an answer makes this process legacy, while a refusal
    // (a modern-only server may name only versions discover already used) changes nothing.
    const settled = yield* Fiber.await(initializing).pipe(Effect.timeoutOption(run.options.probeTimeout))
    if (Option.isSome(settled)) {
      const exit = settled.value
      if (Exit.isFailure(exit)) {
        if (isClosed(exit.cause)) return yield* Effect.failCause(exit.cause)
        const opened = refusedBy(exit.cause)
        yield* note(`initialize failed after discover answered (${opened.why}): the server is modern`)
        return { outcome, opened, pending: undefined } satisfies Raced
      }
      if (exit.value._tag === "Legacy") yield* note(`initialize answered too: this process is legacy, the server dual`)
      return { outcome, opened: exit.value, pending: undefined } satisfies Raced
    }
    yield* note(`initialize still unanswered: it is left pending, not cancelled`)
    yield* Fiber.join(initializing).pipe(
      Effect.flatMap((late) =>
        late._tag === "Legacy"
          ? Effect.logWarning(`${run.def.name} answered initialize after its session settled modern; it stays modern`)
          : Effect.void
      ),
      Effect.ignore,
      Effect.forkIn(at.scope)
    )
    return { outcome, opened: undefined, pending: undefined } satisfies Raced
  })
