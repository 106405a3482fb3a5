/**
 * A pending call's moves: the questions its upstream asks, kept under keys the registry mints,
 * gathered into rounds and handed to the caller, or the call's end; and the caller's wait for the
 * next one.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type { QuestionHandler, QuestionRefused } from "@mcpx-fx/upstream/session/Questions"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { CapabilitiesLacking } from "../GatewayModel.js"
import { kindOf, type Move, onBehalf, PendingCallRefused, type PendingError } from "../PendingQuestions.js"
import { askingMove, type Entry, maxQuestionsOf, mergeRequired, overflowRefusal } from "./PendingEntry.js"
import { type Lifecycle, refuse, signal } from "./PendingLifecycle.js"

/** The moves of the calls of registry `instance`, kept by `life`. */
export const make = (instance: string, life: Lifecycle) => {
  const { end, forget, park, register } = life

  const handlerFor = (entry: Entry): QuestionHandler => (question) => {
    const take = entry.asker.take(question)
    if (take._tag === "Answer") return Effect.succeed(take.result)
    return Effect.gen(function*() {
      // A call that has ended (or is ending) asks nobody.
      if (entry.exit !== undefined || entry.ended || entry.overflowed) return yield* onBehalf(question)
      // An upstream that asks without end must not hold the daemon's memory: past the bound the
      // call is cancelled (by its next move) and the question answered for the caller.
      if (entry.asked.size >= maxQuestionsOf(entry)) {
        entry.overflowed = true
        yield* signal(entry)
        return yield* onBehalf(question)
      }
      const answer = yield* Deferred.make<JsonObject, QuestionRefused>()
      entry.keys += 1
      const key = `${kindOf(question.method)}_${entry.keys}`
      entry.asked.set(key, {
        key,
        question,
        shown: take._tag === "Ask" ? take.question : question,
        ...(take._tag === "Lacking" ? { lacking: take.required } : {}),
        answer
      })
      entry.handedOut = false
      yield* signal(entry)
      // Nobody is waiting on a call left running (`wait`): its question starts the clock on it.
      if (entry.registered && !entry.busy) yield* park(entry)
      return yield* Deferred.await(answer).pipe(Effect.ensuring(Effect.sync(() => entry.asked.delete(key))))
    })
  }

  const asking = (entry: Entry) => askingMove(instance, entry)

  /**
   * Turns what the call has done so far into a move, or undefined when there is none yet. Runs
   * uninterruptibly: a round is handed out whole or not at all. (This and `nextMove` are made once,
   * not per call: docs/performance.md, What a call allocates.)
   */
  const decide: (entry: Entry) => Effect.Effect<Move | undefined, PendingError> = Effect.fnUntraced(
    function*(entry: Entry) {
      // The entry is forgotten once the outcome reaches a caller (in `waitOn`), not here: a
      // caller whose wait ran out meanwhile must not lose it.
      const exit = entry.exit
      if (exit !== undefined) {
        if (Exit.isSuccess(exit)) return { _tag: "Complete", id: entry.id, result: exit.value } satisfies Move
        return yield* Cause.isInterruptedOnly(exit.cause)
          ? refuse("ended", "the call was ended before it finished (abandoned, expired, or mcpx-fx is stopping)")
          : Effect.failCause(exit.cause)
      }
      if (entry.overflowed) {
        yield* end(entry, "failed")
        return yield* overflowRefusal(entry)
      }
      if (entry.asked.size === 0) return undefined
      if (entry.handedOut) return asking(entry)
      const asked = [...entry.asked.values()]
      if (asked.every((a) => a.lacking !== undefined)) {
        yield* end(entry, "failed")
        return yield* new CapabilitiesLacking({ requiredCapabilities: mergeRequired(asked.map((a) => a.lacking ?? {})) })
      }
      // Questions the caller cannot take are answered for it; the rest are its to answer.
      for (const a of asked) if (a.lacking !== undefined) yield* Deferred.complete(a.answer, onBehalf(a.question))
      if (entry.round >= entry.bounds.maxRounds) {
        yield* end(entry, "failed")
        return yield* new PendingCallRefused({
          reason: "rounds",
          detail: `${entry.label} was still asking after ${entry.round} rounds of questions (questions.maxRounds); the call was cancelled`
        })
      }
      yield* register(entry)
      entry.round += 1
      entry.handedOut = true
      yield* park(entry)
      return asking(entry)
    },
    Effect.uninterruptible
  )

  /**
   * Waits for the call's next move: its end, or a settled set of questions. Questions that come
   * within `gather` of each other belong to one round.
   */
  const nextMove: (entry: Entry) => Effect.Effect<Move, PendingError> = Effect.fnUntraced(
    function*(entry: Entry) {
      for (;;) {
        const woken = entry.wake
        if (entry.exit === undefined && entry.asked.size > 0 && !entry.handedOut) {
          const before = entry.keys
          yield* Effect.sleep(entry.bounds.gather)
          if (entry.exit === undefined && entry.keys !== before) continue
        }
        // Before the call has ended or asked anything there is no move: `decide` would answer none.
        if (entry.exit !== undefined || entry.overflowed || entry.asked.size > 0) {
          const move = yield* decide(entry)
          if (move !== undefined) return move
        }
        yield* Deferred.await(woken)
      }
    }
  )

  /**
   * A caller waits on the call; nobody else may answer it meanwhile. Without `wait`, a caller who
   * leaves ends the call; with one, the call stays registered and the caller is told it runs on.
   */
  const waitOn = (entry: Entry, wait: Duration.DurationInput | undefined): Effect.Effect<Move, PendingError> =>
    Effect.suspend(() => {
      entry.busy = true
      const release = Effect.sync(() => void (entry.busy = false))
      // A failure is always the end of the call; a result is once it is handed over.
      const moved = nextMove(entry).pipe(Effect.catchAll((e) => Effect.zipRight(forget(entry, "failed"), Effect.fail(e))))
      const delivered = (move: Move): Effect.Effect<Move> => move._tag === "Complete" ? Effect.as(forget(entry, "completed"), move) : Effect.succeed(move)
      if (wait === undefined) {
        // One exit handler for both: the call ended if its caller was interrupted, then the caller let go.
        return moved.pipe(
          Effect.flatMap(delivered),
          Effect.onExit((exit) => Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause) ? Effect.ensuring(end(entry, "abandoned"), release) : release)
        )
      }
      return moved.pipe(
        Effect.timeoutTo({
          duration: wait,
          onSuccess: (move): Effect.Effect<Move, PendingError> => delivered(move),
          // Left running for a caller who will come back; if it already asked or ended, the
          // clock starts on it now.
          onTimeout: () =>
            Effect.as(
              Effect.zipRight(register(entry), entry.asked.size > 0 || entry.exit !== undefined ? park(entry) : Effect.void),
              { _tag: "Running", id: entry.id } satisfies Move
            )
        }),
        Effect.flatten,
        Effect.ensuring(release)
      )
    })

  return { handlerFor, waitOn }
}
