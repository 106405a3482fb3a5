/**
 * What the in-memory PendingCalls keeps of one call (its questions, rounds, waiters and timer),
 * and what it tells a caller about a call it no longer holds.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type { Question, QuestionRefused } from "@mcpx-fx/upstream/session/Questions"
import type * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type { GatewayCallError } from "../GatewayModel.js"
import {
  type Asker,
  type Bounds,
  DefaultMaxQuestions,
  handleOf,
  type Move,
  PendingCallRefused,
  type PendingInfo,
  type PendingQuestion,
  type RefusalReason
} from "../PendingQuestions.js"

export interface Asked {
  readonly key: string
  /** As the upstream asked it. */
  readonly question: Question
  /** As the caller is shown it. */
  readonly shown: Question
  readonly lacking?: JsonObject
  readonly answer: Deferred.Deferred<JsonObject, QuestionRefused>
}

export interface Entry {
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
  /** The upstream asked more than `maxQuestions` at once: the call is to be cancelled. */
  overflowed: boolean
}

/** How a call that is no longer registered ended, remembered so a late retry is told which. */
export type Ending = "completed" | "expired" | "abandoned" | "reclaimed" | "failed"

/**
 * How many ended calls are remembered for that, the oldest forgotten first (a few dozen bytes
 * each); a retry naming an older one is told only that mcpx-fx holds no such call.
 */
export const RememberedEndings = 1024

export const mergeRequired = (all: ReadonlyArray<JsonObject>): JsonObject => Object.assign({}, ...all)

export const shownQuestions = (entry: Entry): ReadonlyArray<PendingQuestion> =>
  [...entry.asked.values()].filter((a) => a.lacking === undefined).map((a) => ({ key: a.key, method: a.shown.method, params: a.shown.params }))

/**
 * Why a call that is not registered cannot be answered, as precisely as `endings` remembers. Asked
 * for by id (`/v1/ask`) it is simply gone; a retry's requestState is told what became of it.
 */
export const gone = (endings: ReadonlyMap<string, Ending>, id: string, byHandle: boolean): Effect.Effect<never, PendingCallRefused> => {
  const refuse = (reason: RefusalReason, detail: string) => Effect.fail(new PendingCallRefused({ reason, detail }))
  const what = byHandle ? "the requestState names a call that" : `pending call ${id}`
  const again = byHandle ? "; send the request again without it" : ""
  const reason = (specific: RefusalReason): RefusalReason => (byHandle ? specific : "unknown")
  switch (endings.get(id)) {
    case "completed":
      return refuse(reason("used"), `${what} has completed and its result was delivered, so the requestState was used already${again}`)
    case "expired":
      return refuse(
        reason("expired"),
        `${what} expired: nobody came back for it within questions.ttl, so its questions were answered for the caller and the call cancelled${again}`
      )
    case "abandoned":
      return refuse(reason("abandoned"), `${what} was abandoned (its caller left, or it was cancelled)${again}`)
    case "reclaimed":
      return refuse(
        reason("abandoned"),
        `${what} was ended while it waited for its caller's answer, so that its server's process could serve another caller ` +
          `(the server's pool.max processes were all taken); its questions were answered for the caller and the call cancelled${
            byHandle ? "; call again without the requestState" : ""
          }`
      )
    case "failed":
      return refuse("unknown", `${what} has ended with an error${again}`)
    case undefined:
      return refuse("unknown", `${byHandle ? "the requestState names no call mcpx-fx holds" : `no pending call ${id}`} (it ended long ago)${again}`)
  }
}

/** The round of questions a call hands its caller now, under a handle of registry `instance`. */
export const askingMove = (instance: string, entry: Entry): Move => ({
  _tag: "Asking",
  id: entry.id,
  handle: handleOf(instance, entry.id, entry.round),
  questions: shownQuestions(entry),
  expiresAt: entry.expiresAt,
  round: entry.round
})

/** How many questions the call may have open at once. */
export const maxQuestionsOf = (entry: Entry): number => entry.bounds.maxQuestions ?? DefaultMaxQuestions

/** Why a call that asked past `maxQuestionsOf` was cancelled. */
export const overflowRefusal = (entry: Entry): PendingCallRefused =>
  new PendingCallRefused({
    reason: "rounds",
    detail: `${entry.label} asked more than ${maxQuestionsOf(entry)} questions at once (questions.maxQuestions); the call was cancelled`
  })

/** What `/v1` and `mcpx-fx elicit list` show of a pending call. */
export const infoOf = (e: Entry): PendingInfo => ({
  id: e.id,
  label: e.label,
  state: e.exit !== undefined ? "done" : e.asked.size > 0 ? "asking" : "running",
  round: e.round,
  questions: shownQuestions(e),
  expiresAt: e.timer === undefined ? 0 : e.expiresAt
})
