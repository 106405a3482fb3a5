/**
 * A full lane whose instances are held by calls parked on their callers' answers: a 2026-07-28
 * host that walks away from an `input_required` round leaves its upstream call waiting (and its
 * process held) for `questions.ttl`. When another key waits for a permit, the instance whose
 * calls have all waited longest is handed over: its calls are ended on their callers' behalf
 * (Session.parked), its lease is released, and the lane's starved key takes its permit (release
 * evicts an idle instance while a key is starved). So an abandoned round never costs another
 * caller its call; the caller who left is refused when it comes back late, and calls again.
 */
import * as Effect from "effect/Effect"
import type { ParkedCalls } from "../../session/SessionModel.js"
import { type Instance, type LaneState, starved } from "./PoolState.js"

/** How often a key waiting for a permit looks again for an instance held only by parked calls. */
export const ParkedCheckEvery = 1_000

/** The lane's instance held longest only by parked calls, while a key waits for a permit. */
const parkedHolder = (lane: LaneState): { readonly inst: Instance; readonly calls: ParkedCalls } | undefined => {
  if (!starved(lane)) return undefined
  let found: { readonly inst: Instance; readonly calls: ParkedCalls } | undefined
  for (const inst of lane.holders) {
    if (inst.retiring !== undefined || inst.busy === 0) continue
    const calls = inst.serving?.session.parked?.()
    if (calls !== undefined && (found === undefined || calls.since < found.calls.since)) found = { inst, calls }
  }
  return found
}

/**
 * Ends the parked calls of one instance of a lane that a key waits on, if there is such an
 * instance; its permit then passes to the waiting key once its calls have let go of it.
 */
export const handOverParked = (lane: LaneState, waiting: Instance): Effect.Effect<void> =>
  Effect.suspend(() => {
    const found = parkedHolder(lane)
    if (found === undefined) return Effect.void
    return Effect.zipRight(
      Effect.logInfo(
        `${found.inst.id} (${found.inst.key.id}) is held only by calls waiting on callers who have not answered their questions; ` +
          `they are ended so that ${waiting.key.id} can have a process`
      ),
      found.calls.giveWay
    )
  })
