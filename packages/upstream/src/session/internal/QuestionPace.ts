/**
 * How fast a session answers its server's questions. A server that asks again the moment it is
 * answered (a tool whose call ended, re-asking each refusal at once) got ~2,500 answers a second
 * for minutes, at 61 % of a core, with nothing in the log. Answers are let out at a steady rate
 * past a burst (a token bucket on the Clock): far beyond what a host answers, so no real exchange
 * waits, while a loop is slowed to that rate and named in the log once a minute.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

/** Answers let out at once before the pace applies. */
export const Burst = 50
/** Answers a second past the burst. */
export const PerSecond = 20

const LogEvery = Duration.toMillis(Duration.minutes(1))

/** The pace of one session's answers to server `name`. */
export const make = (name: string) => {
  let tokens = Burst
  let at: number | undefined
  let slowed = 0
  let loggedAt: number | undefined

  /** Waits until the next answer may go out. */
  const take: Effect.Effect<void> = Effect.flatMap(Clock.currentTimeMillis, (now) => {
    tokens = Math.min(Burst, tokens + ((now - (at ?? now)) / 1000) * PerSecond)
    at = now
    tokens -= 1
    if (tokens >= 0) return Effect.void
    slowed++
    // The answers waiting already have taken the tokens before this one's: it goes after them.
    const wait = Effect.sleep(Duration.millis((-tokens / PerSecond) * 1000))
    if (loggedAt !== undefined && now - loggedAt < LogEvery) return wait
    loggedAt = now
    const count = slowed
    slowed = 0
    return Effect.zipRight(
      Effect.logWarning(
        `${name} asks faster than ${PerSecond} questions a second past a burst of ${Burst} (${count} answers slowed since the last ` +
          "warning); its answers are paced, and a tool that keeps asking after its call ended is the usual cause"
      ),
      wait
    )
  })
  return { take }
}
