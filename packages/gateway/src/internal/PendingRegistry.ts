/**
 * The in-memory PendingCalls: pending calls by id in one map, each with its questions, rounds and
 * timer; questions nobody could be attributed held in another (HeldQuestions.ts).
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type { QuestionHandler, QuestionRefused } from "@mcpx-fx/upstream/Questions"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import { randomBytes, randomUUID } from "node:crypto"
import { CapabilitiesLacking } from "../GatewayModel.js"
import {
  type Bounds,
  kindOf,
  type Move,
  onBehalf,
  parseHandle,
  PendingCallRefused,
  type PendingCallsService,
  type PendingError,
  type QuestionEvent,
  type RefusalReason,
  type Target
} from "../PendingQuestions.js"
import * as HeldQuestions from "./HeldQuestions.js"
import {
  type Asked,
  askingMove,
  type Ending,
  type Entry,
  gone,
  infoOf,
  maxQuestionsOf,
  mergeRequired,
  overflowRefusal,
  RememberedEndings
} from "./PendingEntry.js"

/** A registry whose bounds are read when each call begins; it lives, and ends every call, with the scope. */
export const make = (readBounds: Effect.Effect<Bounds>): Effect.Effect<PendingCallsService, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const instance = randomBytes(6).toString("base64url")
    const entries = new Map<string, Entry>()
    const endings = new Map<string, Ending>()
    const events = yield* PubSub.sliding<QuestionEvent>(256)
    const now = Clock.currentTimeMillis
    const at = Effect.map(now, (ms) => new Date(ms).toISOString())

    const refuse = (reason: RefusalReason, detail: string) => Effect.fail(new PendingCallRefused({ reason, detail }))

    const signal = (entry: Entry) =>
      Effect.suspend(() => {
        const woken = entry.wake
        entry.wake = Deferred.unsafeMake<void>(FiberId.none)
        return Deferred.succeed(woken, undefined)
      })

    // Every question still waiting is answered on the caller's behalf, so no upstream request (and
    // no fiber answering it) is left waiting on a call that is over.
    const answerOutstanding = (entry: Entry) =>
      entry.asked.size === 0
        ? Effect.void
        : Effect.forEach([...entry.asked.values()], (a) => Deferred.complete(a.answer, onBehalf(a.question)), { discard: true })

    const stopTimer = (entry: Entry) =>
      Effect.suspend(() => {
        const timer = entry.timer
        entry.timer = undefined
        return timer === undefined ? Effect.void : Fiber.interrupt(timer)
      })

    const forget = (entry: Entry, ending: Ending) =>
      Effect.suspend(() => {
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
    const end = (entry: Entry, ending: Ending) =>
      Effect.gen(function*() {
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
        entry.expiresAt = (yield* now) + Duration.toMillis(ttl)
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
     * uninterruptibly: a round is handed out whole or not at all.
     */
    const decide = (entry: Entry): Effect.Effect<Move | undefined, PendingError> =>
      Effect.gen(function*() {
        // The entry is forgotten once the outcome reaches a caller (in `waitOn`), not here: a
        // caller whose wait ran out meanwhile must not lose it.
        if (entry.exit !== undefined) {
          return yield* Exit.match(entry.exit, {
            onSuccess: (result): Effect.Effect<Move> => Effect.succeed({ _tag: "Complete", id: entry.id, result }),
            onFailure: (cause) =>
              Cause.isInterruptedOnly(cause)
                ? refuse("ended", "the call was ended before it finished (abandoned, expired, or mcpx-fx is stopping)")
                : Effect.failCause(cause)
          })
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
      }).pipe(Effect.uninterruptible)

    /**
     * Waits for the call's next move: its end, or a settled set of questions. Questions that come
     * within `gather` of each other belong to one round.
     */
    const nextMove = (entry: Entry): Effect.Effect<Move, PendingError> =>
      Effect.gen(function*() {
        for (;;) {
          const woken = entry.wake
          if (entry.exit === undefined && entry.asked.size > 0 && !entry.handedOut) {
            const before = entry.keys
            yield* Effect.sleep(entry.bounds.gather)
            if (entry.exit === undefined && entry.keys !== before) continue
          }
          const move = yield* decide(entry)
          if (move !== undefined) return move
          yield* Deferred.await(woken)
        }
      })

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
        const delivered = (move: Move): Effect.Effect<Move> =>
          move._tag === "Complete" ? Effect.as(forget(entry, "completed"), move) : Effect.succeed(move)
        if (wait === undefined) {
          // One exit handler for both: the call ended if its caller was interrupted, then the caller let go.
          return moved.pipe(
            Effect.flatMap(delivered),
            Effect.onExit((exit) =>
              Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause) ? Effect.ensuring(end(entry, "abandoned"), release) : release
            )
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

    const begin: PendingCallsService["begin"] = (label, asker, run, wait) =>
      Effect.gen(function*() {
        const entry: Entry = {
          // Unguessable (122 random bits), from a pool node refills in bulk: every modern call
          // gets one, and a fresh randomBytes(16) each time was a few percent of a call's CPU.
          id: randomUUID(),
          label,
          asker,
          bounds: yield* readBounds,
          round: 0,
          asked: new Map(),
          keys: 0,
          wake: yield* Deferred.make<void>(),
          exit: undefined,
          fiber: undefined,
          handedOut: false,
          expiresAt: 0,
          busy: false,
          timer: undefined,
          registered: false,
          ended: false,
          overflowed: false
        }
        // The call outlives the request that began it, so it runs in the registry's scope. When
        // it ends with nobody waiting, its result is kept for the caller until the TTL.
        entry.fiber = yield* run(handlerFor(entry)).pipe(
          Effect.exit,
          Effect.flatMap((exit) =>
            Effect.suspend(() => {
              entry.exit = exit
              // Most calls end having asked nothing, with their caller waiting: then only the wake-up.
              const parked = entry.registered && !entry.busy ? park(entry) : Effect.void
              return Effect.zipRight(Effect.zipRight(answerOutstanding(entry), parked), signal(entry))
            })
          ),
          Effect.asVoid,
          Effect.forkIn(scope)
        )
        return yield* waitOn(entry, wait)
      })

    const find = (target: Target): Effect.Effect<Entry, PendingCallRefused> =>
      Effect.suspend(() => {
        if ("id" in target) {
          const entry = entries.get(target.id)
          if (entry === undefined) return gone(endings, target.id, false)
          return entry.busy ? refuse("busy", "another request is already waiting on this call") : Effect.succeed(entry)
        }
        const parsed = parseHandle(target.handle)
        if (parsed === undefined) return refuse("unknown", "the requestState names no call mcpx-fx holds")
        if (parsed.instance !== instance) {
          return refuse(
            "other-instance",
            `the requestState names a call held by another mcpx-fx instance (${parsed.instance}); send the request again without it`
          )
        }
        const entry = entries.get(parsed.id)
        if (entry === undefined) return gone(endings, parsed.id, true)
        if (entry.busy) return refuse("busy", "another request is already answering this call's questions")
        if (parsed.round !== entry.round) {
          return refuse("used", `the requestState was for round ${parsed.round}, which was answered already; round ${entry.round} is waiting`)
        }
        return Effect.succeed(entry)
      })

    /** Checks every answer before delivering any, so a refused one changes nothing. */
    const deliver = (entry: Entry, answers: JsonObject) =>
      Effect.gen(function*() {
        const delivered: Array<readonly [Asked, JsonObject]> = []
        for (const [key, value] of Object.entries(answers)) {
          const asked = entry.asked.get(key)
          if (asked === undefined || asked.lacking !== undefined) continue
          const fitted = entry.asker.fit(asked.shown, value)
          if (fitted._tag === "Left") {
            return yield* refuse("invalid-answer", `inputResponses[${JSON.stringify(key)}] does not answer its question: ${fitted.left}`)
          }
          delivered.push([asked, fitted.right])
        }
        yield* stopTimer(entry)
        // What is left unanswered is asked again in the next round.
        entry.handedOut = false
        for (const [asked, result] of delivered) {
          entry.asked.delete(asked.key)
          yield* Deferred.succeed(asked.answer, result)
        }
      })

    const resume: PendingCallsService["resume"] = (target, answers, wait) =>
      Effect.gen(function*() {
        const entry = yield* find(target)
        yield* deliver(entry, answers)
        return yield* waitOn(entry, wait)
      })

    // Answers without waiting: the call goes on for whoever follows it, on the TTL's clock.
    const answer: PendingCallsService["answer"] = (target, answers) =>
      Effect.gen(function*() {
        const entry = yield* find(target)
        yield* deliver(entry, answers)
        yield* register(entry)
        yield* park(entry)
      })

    const poll: PendingCallsService["poll"] = (id, wait) =>
      Effect.flatMap(find({ id }), (entry) => Effect.zipRight(stopTimer(entry), waitOn(entry, wait)))

    const held = yield* HeldQuestions.make(readBounds, events, scope)

    return {
      instance,
      begin,
      resume,
      answer,
      poll,
      abandon: (id) =>
        Effect.suspend(() => {
          const entry = entries.get(id)
          return entry === undefined ? Effect.succeed(false) : Effect.as(end(entry, "abandoned"), true)
        }),
      list: Effect.sync(() =>
        [...entries.values()].map(infoOf)
      ),
      hold: held.hold,
      held: held.list,
      answerHeld: held.answer,
      events: PubSub.subscribe(events)
    } satisfies PendingCallsService
  })
