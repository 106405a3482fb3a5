/**
 * Whose is a stdio question that names no call: the calls in flight that can be asked, if they
 * all belong to one caller (the latest of them asks); with several callers' calls, nobody's.
 *
 * A call parked on its caller's answer (its question out for `askedTogether` or longer, so its
 * round has been put to its caller) is left out first when others remain: a tool waiting for its
 * answer asks nothing more until answered, and the questions it asks together come within
 * `askedTogether` of each other. So a round a caller abandons, whose call may wait out
 * `questions.ttl`, never makes another caller's question unanswerable.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { CallContext } from "../SessionModel.js"

/** `SessionOptions.askedTogether` when none is given: `questions.gather`'s default. */
const DefaultAskedTogether: Duration.DurationInput = "50 millis"

/** Attribution over the session's calls in flight (kept by the session). */
export const makeAttribution = (
  inFlight: ReadonlyArray<CallContext>,
  askedTogether: Effect.Effect<Duration.DurationInput> = Effect.succeed(DefaultAskedTogether)
) => {
  // The calls with a question out to their caller, and when the oldest was asked.
  const waitingSince = new Map<CallContext, { count: number; since: number }>()

  /** The call to put a question asked `now` to, and how many callers it could be. */
  const attribute = Effect.map(Effect.all([Clock.currentTimeMillis, askedTogether]), ([now, together]) => {
    const parkedBefore = now - Duration.toMillis(Duration.decode(together))
    const askable = inFlight.filter((c) => c.questions !== undefined)
    const free = askable.filter((c) => (waitingSince.get(c)?.since ?? Infinity) > parkedBefore)
    const among = free.length > 0 ? free : askable
    const callers = new Set<unknown>(among.map((c) => c.callerId ?? c)).size
    return { ctx: callers <= 1 ? among[among.length - 1] : undefined, callers, now }
  })

  /**
   * `ctx` waits on its caller from `now` until `answering` ends. Marked when this is built, before
   * it is forked, so the next question, which may already be behind this one, sees it.
   */
  const waiting = <E, R>(ctx: CallContext, now: number, answering: Effect.Effect<void, E, R>): Effect.Effect<void, E, R> => {
    const before = waitingSince.get(ctx)
    waitingSince.set(ctx, { count: (before?.count ?? 0) + 1, since: before?.since ?? now })
    return Effect.ensuring(
      answering,
      Effect.sync(() => {
        const left = waitingSince.get(ctx)
        if (left === undefined || left.count <= 1) waitingSince.delete(ctx)
        else waitingSince.set(ctx, { ...left, count: left.count - 1 })
      })
    )
  }

  return { attribute, waiting }
}
