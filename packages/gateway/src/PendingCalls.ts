/**
 * Upstream calls kept alive behind an `input_required`: a legacy upstream's questions for a caller
 * that cannot be asked on a channel (a 2026-07-28 host, `/v1/ask`, the CLI).
 *
 * A call begins here and runs in a fiber of the registry's own. When its upstream asks, the
 * question is kept under a key the registry mints and the caller's request ends with the questions
 * asked so far and a handle naming the call and the round; the upstream call keeps waiting for the
 * answers. The caller's next request brings the handle and the answers, which are delivered to the
 * waiting upstream requests, and it ends at the upstream's next move: its result, or more questions.
 *
 * Every pending call is bounded: in number (`questions.maxPending`), in rounds
 * (`questions.maxRounds`) and in how long it waits for its caller (`questions.ttl`); past any of
 * these it is ended, its questions answered on the caller's behalf (an elicitation cancelled,
 * anything else refused) and the upstream request cancelled. A caller that walks away mid-round
 * ends it too, so nothing keeps running for nobody — unless it asked to come back later
 * (`wait`, the `/v1/ask` long poll), when the call stays registered for it.
 *
 * The handle carries this instance's id, so a registry shared by several instances (a layer other
 * than this in-memory one) can route a retry to the one holding the call.
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import { answerAlone, type Question, type QuestionHandler, QuestionRefused } from "@mcpx-fx/upstream/Questions"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import type * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"
import type { GatewayCallError } from "./Gateway.js"
import { Settings } from "./Settings.js"

// ---------------------------------------------------------------------------------------------
// What callers see

/** A question handed to the caller: the key its answer must carry, and the request. */
export interface PendingQuestion {
  readonly key: string
  readonly method: string
  readonly params: JsonObject
}

/** How a caller takes one upstream question. */
export type Take =
  /** Put to the caller, in the caller's words. */
  | { readonly _tag: "Ask"; readonly question: Question }
  /** The caller did not declare what the question needs (`required`, as client capabilities). */
  | { readonly _tag: "Lacking"; readonly required: JsonObject }
  /** Answered at once, without the caller. */
  | { readonly _tag: "Answer"; readonly result: JsonObject }

/** What the registry needs to know about the caller of one call. */
export interface Asker {
  readonly take: (question: Question) => Take
  /**
   * The caller's answer to `asked` (as the caller was shown it): what to send upstream, or why it
   * does not fit the question.
   */
  readonly fit: (asked: Question, answer: unknown) => Either.Either<JsonObject, string>
}

/** The upstream's next move in a pending call. */
export type Move =
  | { readonly _tag: "Complete"; readonly id: string; readonly result: JsonObject }
  | {
    readonly _tag: "Asking"
    /** The call's id (`/v1/ask`, `mcpx-fx elicit`). */
    readonly id: string
    /** Names the call and this round; the answers must bring it back. */
    readonly handle: string
    readonly questions: ReadonlyArray<PendingQuestion>
    /** Epoch milliseconds after which the call is ended if no answers came. */
    readonly expiresAt: number
    readonly round: number
  }
  /** No move within the caller's `wait`; the call goes on, registered under `id`. */
  | { readonly _tag: "Running"; readonly id: string }

/** One pending call, as `/v1/ask` and `mcpx-fx elicit list` show it. */
export interface PendingInfo {
  readonly id: string
  readonly label: string
  readonly state: "running" | "asking" | "done"
  readonly round: number
  readonly questions: ReadonlyArray<PendingQuestion>
  /** Epoch milliseconds after which an unanswered or uncollected call is ended; 0 while it runs. */
  readonly expiresAt: number
}

/** Why a retry or a new pending call was refused. */
export const RefusalReason = Schema.Literal("unknown", "used", "busy", "other-instance", "invalid-answer", "rounds", "full", "ended")
export type RefusalReason = typeof RefusalReason.Type

/**
 * A retry that names no call this registry holds, answers that do not fit, or a bound reached.
 * `unknown`, `used`, `busy`, `other-instance` and `invalid-answer` are the caller's mistakes;
 * `rounds` and `full` are bounds the upstream or the load ran into; `ended`, a call ended under a
 * caller still waiting on it (abandoned by another request, expired, or mcpx-fx stopping).
 */
export class PendingCallRefused extends Schema.TaggedError<PendingCallRefused>("@mcpx-fx/gateway/PendingCallRefused")(
  "PendingCallRefused",
  { reason: RefusalReason, detail: Schema.String }
) {
  override get message(): string {
    return this.detail
  }
}

/** The only questions left are ones the caller did not declare it can take. */
export class CapabilitiesLacking extends Schema.TaggedError<CapabilitiesLacking>("@mcpx-fx/gateway/CapabilitiesLacking")(
  "CapabilitiesLacking",
  { requiredCapabilities: Schema.Record({ key: Schema.String, value: Schema.Unknown }) }
) {
  override get message(): string {
    return `the upstream asked for ${Object.keys(this.requiredCapabilities).join(", ")}, which the caller did not declare`
  }
}

/** What a pending call can end with besides a result. */
export type PendingError = GatewayCallError | PendingCallRefused | CapabilitiesLacking

/** A question nobody could be asked, held until someone answers it by id or it expires. */
export interface HeldQuestion {
  readonly id: string
  readonly server: string
  readonly method: string
  readonly params: JsonObject
  readonly expiresAt: number
}

/** What the registry tells `/v1/events` about (shaped like the Pool's events). */
export type QuestionEvent =
  | {
    readonly type: "question.unattributed"
    readonly server: string
    readonly at: string
    readonly id: string
    readonly method: string
    readonly callers: number
    readonly hint: string
  }
  | { readonly type: "question.expired"; readonly server: string; readonly at: string; readonly id: string }

/** The bounds, as the settings stand. */
export interface Bounds {
  readonly ttl: Duration.Duration
  readonly maxRounds: number
  readonly maxPending: number
  /** How long to wait for more questions after one arrives, so questions asked at once go in one round. */
  readonly gather: Duration.Duration
}

/** Which round an answer is for: the exact one a handle names, or whatever round is waiting. */
export type Target = { readonly handle: string } | { readonly id: string }

/** The prefix of every handle, so a retry's state can be told from an upstream's own. */
export const HandlePrefix = "mcpx-pending:"

/** Whether an (unwrapped) `requestState` is a pending-call handle rather than an upstream's state. */
export const isHandle = (state: string | undefined): state is string => state !== undefined && state.startsWith(HandlePrefix)

const handleOf = (instance: string, id: string, round: number) => `${HandlePrefix}${instance}:${id}:${round}`

const parseHandle = (handle: string) => {
  if (!isHandle(handle)) return undefined
  const [instance, id, round] = handle.slice(HandlePrefix.length).split(":")
  const n = Number(round)
  return instance === undefined || id === undefined || !Number.isInteger(n) ? undefined : { instance, id, round: n }
}

/** What mcpx-fx answers for a caller who cannot: an elicitation is cancelled, anything else refused. */
export const onBehalf = (question: Question): Effect.Effect<JsonObject, QuestionRefused> =>
  question.method === "elicitation/create" || question.method === "ping"
    ? answerAlone(question)
    : Effect.fail(new QuestionRefused({ code: ErrorCode.MethodNotFound, message: `the caller cannot answer ${question.method}` }))

const kindOf = (method: string): string =>
  method === "elicitation/create" ? "elicitation" : method === "sampling/createMessage" ? "sampling" : method === "roots/list" ? "roots" : "input"

// ---------------------------------------------------------------------------------------------
// The service

/** The registry of pending calls and held questions. */
export class PendingCalls extends Context.Tag("@mcpx-fx/gateway/PendingCalls")<PendingCalls, {
  /** This instance's id, carried by every handle it mints. */
  readonly instance: string
  /**
   * Runs a call that may ask; `run` gets the handler to give the upstream call. Ends at the call's
   * first move. Without `wait`, interrupting it (the caller left) ends the call; with one, the call
   * is left `Running` when no move came in time.
   */
  readonly begin: (
    label: string,
    asker: Asker,
    run: (questions: QuestionHandler) => Effect.Effect<JsonObject, GatewayCallError>,
    wait?: Duration.DurationInput
  ) => Effect.Effect<Move, PendingError>
  /** Answers a round and waits for the upstream's next move (`wait` as for `begin`). */
  readonly resume: (target: Target, answers: JsonObject, wait?: Duration.DurationInput) => Effect.Effect<Move, PendingError>
  /** Answers some of a call's questions and leaves it to go on for whoever follows it (`mcpx-fx elicit`). */
  readonly answer: (target: Target, answers: JsonObject) => Effect.Effect<void, PendingError>
  /** Waits up to `wait` for a call's next move without answering anything (`/v1/ask` long poll). */
  readonly poll: (id: string, wait: Duration.DurationInput) => Effect.Effect<Move, PendingError>
  /** Ends a pending call: its questions answered on the caller's behalf, the upstream call cancelled. */
  readonly abandon: (id: string) => Effect.Effect<boolean>
  /** The calls registered here: running for a caller who will come back, asking, or done and uncollected. */
  readonly list: Effect.Effect<ReadonlyArray<PendingInfo>>
  /**
   * Holds a question nobody could be asked until someone answers it by id (`/v1/elicit`) or it
   * expires, when it is answered on the caller's behalf.
   */
  readonly hold: (server: string, question: Question, callers: number) => Effect.Effect<JsonObject, QuestionRefused>
  readonly held: Effect.Effect<ReadonlyArray<HeldQuestion>>
  /** Answers a held question (`result`), or refuses it; false when no such question is held. */
  readonly answerHeld: (id: string, answer: { readonly result: JsonObject } | { readonly refusal: string }) => Effect.Effect<boolean>
  /** Question events, in place once this returns. */
  readonly events: Effect.Effect<Queue.Dequeue<QuestionEvent>, never, Scope.Scope>
}>() {
  /** In memory, bounded by the `questions.*` settings (read when each call begins). */
  static readonly layer: Layer.Layer<PendingCalls, never, Settings> = Layer.scoped(
    PendingCalls,
    Effect.gen(function*() {
      const settings = yield* Settings
      return yield* make(Effect.all({
        ttl: settings.get("questions.ttl"),
        maxRounds: settings.get("questions.maxRounds"),
        maxPending: settings.get("questions.maxPending"),
        gather: settings.get("questions.gather")
      }))
    })
  )

  /** In memory with fixed bounds (tests, embedding). */
  static readonly layerWith = (bounds: Bounds): Layer.Layer<PendingCalls> => Layer.scoped(PendingCalls, make(Effect.succeed(bounds)))
}

// ---------------------------------------------------------------------------------------------
// In memory

interface Asked {
  readonly key: string
  /** As the upstream asked it. */
  readonly question: Question
  /** As the caller is shown it. */
  readonly shown: Question
  readonly lacking?: JsonObject
  readonly answer: Deferred.Deferred<JsonObject, QuestionRefused>
}

interface Entry {
  readonly id: string
  readonly label: string
  readonly asker: Asker
  readonly bounds: Bounds
  /** Rounds handed out so far. */
  round: number
  /** Questions asked and not yet answered, in the order they came. */
  readonly asked: Map<string, Asked>
  /** Keys minted so far (a new question changes it). */
  keys: number
  /** Completed (and replaced) on every change a waiting caller must see. */
  wake: Deferred.Deferred<void>
  exit: Exit.Exit<JsonObject, GatewayCallError> | undefined
  fiber: Fiber.RuntimeFiber<void> | undefined
  /** Whether the questions now asked were handed out (the caller owes their answers). */
  handedOut: boolean
  expiresAt: number
  /** A caller is waiting on this call's next move. */
  busy: boolean
  /** Ends the call when its caller does not come back in time. */
  timer: Fiber.RuntimeFiber<void> | undefined
  registered: boolean
  /** Ended by mcpx-fx (TTL, abandon, a bound): whatever it still asks is answered for the caller. */
  ended: boolean
}

interface Held extends HeldQuestion {
  readonly question: Question
  readonly answer: Deferred.Deferred<JsonObject, QuestionRefused>
}

const mergeRequired = (all: ReadonlyArray<JsonObject>): JsonObject => Object.assign({}, ...all)

const shownQuestions = (entry: Entry): ReadonlyArray<PendingQuestion> =>
  [...entry.asked.values()].filter((a) => a.lacking === undefined).map((a) => ({ key: a.key, method: a.shown.method, params: a.shown.params }))

const make = (readBounds: Effect.Effect<Bounds>) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const instance = randomBytes(6).toString("base64url")
    const entries = new Map<string, Entry>()
    const heldQuestions = new Map<string, Held>()
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
      Effect.forEach([...entry.asked.values()], (a) => Deferred.complete(a.answer, onBehalf(a.question)), { discard: true })

    const stopTimer = (entry: Entry) =>
      Effect.suspend(() => {
        const timer = entry.timer
        entry.timer = undefined
        return timer === undefined ? Effect.void : Fiber.interrupt(timer)
      })

    const forget = (entry: Entry) =>
      Effect.suspend(() => {
        entries.delete(entry.id)
        entry.registered = false
        return stopTimer(entry)
      })

    /**
     * Ends a call: questions answered for the caller (and any it asks from now on), then the
     * upstream request cancelled.
     */
    const end = (entry: Entry) =>
      Effect.gen(function*() {
        entry.ended = true
        yield* forget(entry)
        yield* answerOutstanding(entry)
        const fiber = entry.fiber
        if (fiber !== undefined && entry.exit === undefined) yield* Fiber.interrupt(fiber)
      })

    const register = (entry: Entry) =>
      Effect.suspend((): Effect.Effect<void, PendingCallRefused> => {
        if (entry.registered) return Effect.void
        if (entries.size >= entry.bounds.maxPending) {
          return Effect.zipRight(
            end(entry),
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
              end(entry)
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
        if (entry.exit !== undefined || entry.ended) return yield* onBehalf(question)
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

    const asking = (entry: Entry): Move => ({
      _tag: "Asking",
      id: entry.id,
      handle: handleOf(instance, entry.id, entry.round),
      questions: shownQuestions(entry),
      expiresAt: entry.expiresAt,
      round: entry.round
    })

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
        if (entry.asked.size === 0) return undefined
        if (entry.handedOut) return asking(entry)
        const asked = [...entry.asked.values()]
        if (asked.every((a) => a.lacking !== undefined)) {
          yield* end(entry)
          return yield* new CapabilitiesLacking({ requiredCapabilities: mergeRequired(asked.map((a) => a.lacking ?? {})) })
        }
        // Questions the caller cannot take are answered for it; the rest are its to answer.
        for (const a of asked) if (a.lacking !== undefined) yield* Deferred.complete(a.answer, onBehalf(a.question))
        if (entry.round >= entry.bounds.maxRounds) {
          yield* end(entry)
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
        const moved = nextMove(entry).pipe(Effect.catchAll((e) => Effect.zipRight(forget(entry), Effect.fail(e))))
        const delivered = (move: Move): Effect.Effect<Move> => move._tag === "Complete" ? Effect.as(forget(entry), move) : Effect.succeed(move)
        if (wait === undefined) {
          return moved.pipe(Effect.flatMap(delivered), Effect.onInterrupt(() => end(entry)), Effect.ensuring(release))
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

    const begin: Context.Tag.Service<PendingCalls>["begin"] = (label, asker, run, wait) =>
      Effect.gen(function*() {
        const entry: Entry = {
          id: randomBytes(16).toString("base64url"),
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
          ended: false
        }
        // The call outlives the request that began it, so it runs in the registry's scope. When
        // it ends with nobody waiting, its result is kept for the caller until the TTL.
        entry.fiber = yield* run(handlerFor(entry)).pipe(
          Effect.exit,
          Effect.flatMap((exit) =>
            Effect.suspend(() => {
              entry.exit = exit
              return Effect.all([answerOutstanding(entry), entry.registered && !entry.busy ? park(entry) : Effect.void, signal(entry)])
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
          if (entry === undefined) return refuse("unknown", `no pending call ${target.id} (it ended, was collected, or expired)`)
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
        if (entry === undefined) {
          return refuse(
            "unknown",
            "the call this requestState names has ended (answered already, abandoned, or expired); send the request again without it"
          )
        }
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

    const resume: Context.Tag.Service<PendingCalls>["resume"] = (target, answers, wait) =>
      Effect.gen(function*() {
        const entry = yield* find(target)
        yield* deliver(entry, answers)
        return yield* waitOn(entry, wait)
      })

    // Answers without waiting: the call goes on for whoever follows it, on the TTL's clock.
    const answer: Context.Tag.Service<PendingCalls>["answer"] = (target, answers) =>
      Effect.gen(function*() {
        const entry = yield* find(target)
        yield* deliver(entry, answers)
        yield* register(entry)
        yield* park(entry)
      })

    const poll: Context.Tag.Service<PendingCalls>["poll"] = (id, wait) =>
      Effect.flatMap(find({ id }), (entry) => Effect.zipRight(stopTimer(entry), waitOn(entry, wait)))

    const heldExpiry = (held: Held, ttl: Duration.Duration) =>
      Effect.sleep(ttl).pipe(
        Effect.zipRight(Effect.suspend(() => {
          if (!heldQuestions.delete(held.id)) return Effect.void
          return Effect.zipRight(
            Effect.flatMap(at, (when) => PubSub.publish(events, { type: "question.expired", server: held.server, at: when, id: held.id })),
            Deferred.complete(held.answer, onBehalf(held.question))
          )
        }))
      )

    const hold: Context.Tag.Service<PendingCalls>["hold"] = (server, question, callers) =>
      Effect.gen(function*() {
        const bounds = yield* readBounds
        if (heldQuestions.size >= bounds.maxPending) return yield* onBehalf(question)
        const answer = yield* Deferred.make<JsonObject, QuestionRefused>()
        const held: Held = {
          id: `q-${randomBytes(9).toString("base64url")}`,
          server,
          method: question.method,
          params: question.params,
          expiresAt: (yield* now) + Duration.toMillis(bounds.ttl),
          question,
          answer
        }
        heldQuestions.set(held.id, held)
        yield* PubSub.publish(events, {
          type: "question.unattributed",
          server,
          at: yield* at,
          id: held.id,
          method: question.method,
          callers,
          hint: `${server} asked while calls of ${callers} callers were in flight on one process, so mcpx-fx cannot tell whose ` +
            `question it is; answer it with \`mcpx-fx elicit answer ${held.id} '<json>'\`, or give the server ` +
            `"pool": {"scope": "session"} so each caller has its own process`
        })
        const expiry = yield* Effect.forkIn(heldExpiry(held, bounds.ttl), scope)
        return yield* Deferred.await(answer).pipe(
          Effect.ensuring(Effect.zipRight(Fiber.interrupt(expiry), Effect.sync(() => heldQuestions.delete(held.id))))
        )
      })

    return PendingCalls.of({
      instance,
      begin,
      resume,
      answer,
      poll,
      abandon: (id) =>
        Effect.suspend(() => {
          const entry = entries.get(id)
          return entry === undefined ? Effect.succeed(false) : Effect.as(end(entry), true)
        }),
      list: Effect.sync(() =>
        [...entries.values()].map((e): PendingInfo => ({
          id: e.id,
          label: e.label,
          state: e.exit !== undefined ? "done" : e.asked.size > 0 ? "asking" : "running",
          round: e.round,
          questions: shownQuestions(e),
          expiresAt: e.timer === undefined ? 0 : e.expiresAt
        }))
      ),
      hold,
      held: Effect.sync(() => [...heldQuestions.values()].map(({ expiresAt, id, method, params, server }) => ({ id, server, method, params, expiresAt }))),
      answerHeld: (id, given) =>
        Effect.suspend(() => {
          const held = heldQuestions.get(id)
          if (held === undefined) return Effect.succeed(false)
          heldQuestions.delete(id)
          return Effect.as(
            "result" in given
              ? Deferred.succeed(held.answer, given.result)
              : Deferred.fail(held.answer, new QuestionRefused({ code: ErrorCode.InvalidRequest, message: given.refusal })),
            true
          )
        }),
      events: PubSub.subscribe(events)
    })
  })
