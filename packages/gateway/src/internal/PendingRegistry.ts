/**
 * The in-memory PendingCalls: pending calls by id in one map, each with its questions, rounds and
 * timer (kept by PendingLifecycle.ts, moved by PendingMoves.ts); questions nobody could be
 * attributed held in another (HeldQuestions.ts).
 */
import { Keyed, Members } from "@mcpx-fx/cancel/InFlight"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type { Parked } from "@mcpx-fx/upstream/session/SessionModel"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import { randomBytes, randomUUID } from "node:crypto"
import {
  type Asker,
  type Bounds,
  parseHandle,
  type PendingCallRefused,
  type PendingCallsService,
  type QuestionEvent,
  type Target
} from "../PendingQuestions.js"
import * as HeldQuestions from "./HeldQuestions.js"
import { type Asked, type Ending, type Entry, gone, infoOf } from "./PendingEntry.js"
import * as PendingLifecycle from "./PendingLifecycle.js"
import * as PendingMoves from "./PendingMoves.js"

/**
 * A registry whose bounds are read when each call begins; it lives, and ends every call, with the
 * scope. `instance` goes in every handle (a fleet's process id; by default a random one).
 */
export const make = (
  readBounds: Effect.Effect<Bounds>,
  instance: string = randomBytes(6).toString("base64url")
): Effect.Effect<PendingCallsService, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    // Not a Map: the registry lives long and this churns once per call (@mcpx-fx/cancel/InFlight).
    const entries = new Keyed<Entry>()
    const endings = new Map<string, Ending>()
    const events = yield* PubSub.sliding<QuestionEvent>(256)

    const life = PendingLifecycle.make({ scope, entries, endings, events })
    const { end, park, register } = life
    const { handlerFor, waitOn } = PendingMoves.make(instance, life)
    // The calls' fibers, which the registry's end interrupts. Not forked into `scope`: a fork
    // there sets and deletes an entry of its table of finalizers (a Map) once per call
    // (@mcpx-fx/cancel/InFlight).
    const running = new Members<Fiber.RuntimeFiber<void>>()
    let closed = false

    // Generator functions made once, not one per call (docs/performance.md, What a call allocates).
    const begin: PendingCallsService["begin"] = Effect.fnUntraced(
      function*(label: string, asker: Asker, run: Parameters<PendingCallsService["begin"]>[2], wait?: Duration.DurationInput) {
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
          // As `signal` makes the next one: blocking on no fiber, and with no effect to make it.
          wake: Deferred.unsafeMake<void>(FiberId.none),
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
        entry.fiber = yield* run(handlerFor(entry), parkedOf(entry)).pipe(
          Effect.exit,
          Effect.flatMap((exit) => {
            entry.exit = exit
            // Most calls end having asked nothing, with their caller waiting: then only the wake-up.
            const parked = entry.registered && !entry.busy
            if (!parked && entry.asked.size === 0) return PendingLifecycle.signal(entry)
            return Effect.zipRight(
              Effect.zipRight(PendingLifecycle.answerOutstanding(entry), parked ? park(entry) : Effect.void),
              PendingLifecycle.signal(entry)
            )
          }),
          Effect.forkDaemon
        )
        if (closed) yield* Fiber.interrupt(entry.fiber)
        else entry.fiber.addObserver(running.add(entry.fiber))
        return yield* waitOn(entry, wait)
      }
    )

    // Parked: its round handed out, nobody waiting on it, nothing left to move it but its caller.
    const isParked = (entry: Entry) => entry.registered && entry.handedOut && !entry.busy && !entry.ended && entry.exit === undefined
    const parkedOf = (entry: Entry): Parked => ({
      since: () => (isParked(entry) ? entry.expiresAt - Duration.toMillis(entry.bounds.ttl) : undefined),
      giveWay: Effect.suspend(() => (isParked(entry) ? end(entry, "reclaimed") : Effect.void))
    })

    const find = (target: Target): Effect.Effect<Entry, PendingCallRefused> =>
      Effect.suspend(() => {
        if ("id" in target) {
          const entry = entries.get(target.id)
          if (entry === undefined) return gone(endings, target.id, false)
          return entry.busy ? PendingLifecycle.refuse("busy", "another request is already waiting on this call") : Effect.succeed(entry)
        }
        const parsed = parseHandle(target.handle)
        if (parsed === undefined) return PendingLifecycle.refuse("unknown", "the requestState names no call mcpx-fx holds")
        if (parsed.instance !== instance) {
          return PendingLifecycle.refuse(
            "other-instance",
            `the requestState names a call held by another mcpx-fx instance (${parsed.instance}); send the request again without it`
          )
        }
        const entry = entries.get(parsed.id)
        if (entry === undefined) return gone(endings, parsed.id, true)
        if (entry.busy) return PendingLifecycle.refuse("busy", "another request is already answering this call's questions")
        if (parsed.round !== entry.round) {
          return PendingLifecycle.refuse("used", `the requestState was for round ${parsed.round}, which was answered already; round ${entry.round} is waiting`)
        }
        return Effect.succeed(entry)
      })

    /** Checks every answer before delivering any, so a refused one changes nothing. */
    const deliver = Effect.fnUntraced(
      function*(entry: Entry, answers: JsonObject) {
        const delivered: Array<readonly [Asked, JsonObject]> = []
        for (const [key, value] of Object.entries(answers)) {
          const asked = entry.asked.get(key)
          if (asked === undefined || asked.lacking !== undefined) continue
          const fitted = entry.asker.fit(asked.shown, value)
          if (fitted._tag === "Left") {
            return yield* PendingLifecycle.refuse("invalid-answer", `inputResponses[${JSON.stringify(key)}] does not answer its question: ${fitted.left}`)
          }
          delivered.push([asked, fitted.right])
        }
        yield* PendingLifecycle.stopTimer(entry)
        // What is left unanswered is asked again in the next round.
        entry.handedOut = false
        for (const [asked, result] of delivered) {
          entry.asked.delete(asked.key)
          yield* Deferred.succeed(asked.answer, result)
        }
      }
    )

    const resume: PendingCallsService["resume"] = Effect.fnUntraced(
      function*(target: Target, answers: JsonObject, wait?: Duration.DurationInput) {
        const entry = yield* find(target)
        yield* deliver(entry, answers)
        return yield* waitOn(entry, wait)
      }
    )

    // Answers without waiting: the call goes on for whoever follows it, on the TTL's clock.
    const answer: PendingCallsService["answer"] = Effect.fnUntraced(
      function*(target: Target, answers: JsonObject) {
        const entry = yield* find(target)
        yield* deliver(entry, answers)
        yield* register(entry)
        yield* park(entry)
      }
    )

    const poll: PendingCallsService["poll"] = (id, wait) =>
      Effect.flatMap(find({ id }), (entry) => Effect.zipRight(PendingLifecycle.stopTimer(entry), waitOn(entry, wait)))

    const held = yield* HeldQuestions.make(readBounds, events, scope)
    // Added last, so it runs first when the scope closes, as the calls' own forks in it did.
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closed = true
        return Effect.forEach(running.takeAll(), Fiber.interrupt, { concurrency: "unbounded", discard: true })
      })
    )

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
      list: Effect.sync(() => entries.values().map(infoOf)),
      hold: held.hold,
      held: held.list,
      answerHeld: held.answer,
      events: PubSub.subscribe(events)
    } satisfies PendingCallsService
  })
