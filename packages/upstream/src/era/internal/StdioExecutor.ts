/**
 * Carries a plan out on one stdio child process, over its stdin/stdout. Discover first: initialize
 * is sent alongside a discover still unanswered after the plan's bound, and once initialize has
 * been answered the process is legacy for its lifetime, whatever discover says (the era cache
 * records the server, not the process: a server that answered discover as well is recorded
 * modern). A process that exits during the probe is left to its scope and replaced by a fresh one
 * spoken to legacy only.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { CachedProbeFactor, type ProbeError, type Started } from "../ProbeModel.js"
import { discoverOnly, initializeFirst, type InitializeOn, initializeOnly } from "./Attempts.js"
import { discoverRacing } from "./DiscoverRace.js"
import type { Run } from "./ProbeRun.js"

/** A process has no other wire to move to: initialize is answered where it was sent. */
const initializeOn = (run: Run): InitializeOn => (at, negotiation) => Effect.map(run.initialize(at.conn, negotiation), (opened) => ({ opened, at }))

/** Runs `run.plan` on a stdio server. */
export const executeStdio = (run: Run): Effect.Effect<Started, ProbeError, Scope.Scope> => {
  const { plan } = run
  if (plan.first === "initialize") return initializeFirst(run, initializeOn(run))
  if (plan.then === "fail") return discoverOnly(run)
  const attempt = discoverFirst(run)
  if (!plan.restart) return attempt
  return Effect.catchTag(attempt, "TransportClosed", (e) =>
    Effect.gen(function*() {
      yield* run.note(`the process exited during the probe (${e.message}): starting a fresh one legacy-only`)
      return yield* initializeOnly(run, initializeOn(run), undefined, "probe", true)
    }))
}

/** How long discover may stay unanswered before initialize is sent alongside. */
const boundOf = (run: Run): Duration.DurationInput => {
  const probeTimeout = Duration.decode(run.options.probeTimeout)
  return run.plan.bound === "cached"
    ? run.options.cachedProbeTimeout ?? Duration.times(probeTimeout, CachedProbeFactor)
    : probeTimeout
}

const discoverFirst = (run: Run): Effect.Effect<Started, ProbeError, Scope.Scope> =>
  Effect.gen(function*() {
    const first = yield* run.open()
    const negotiation = yield* run.negotiator.begin
    const probed = yield* discoverRacing(run, first, negotiation, boundOf(run))
    if (probed.opened?._tag === "Legacy") {
      // Initialized, this process is legacy whatever discover said; the cache describes the server.
      const record = probed.outcome._tag === "Modern"
        ? run.observe(first.conn, probed.outcome.established, false)
        : run.observe(first.conn, probed.opened.established, true)
      return yield* run.finish(first, probed.opened.established, "probe", record, probed.pending)
    }
    if (probed.outcome._tag === "Modern") {
      const established = probed.outcome.established
      const refused = probed.opened?._tag === "Refused"
      return yield* run.finish(first, established, run.plan.source, run.observe(first.conn, established, refused))
    }
    const { opened, at } = probed.opened !== undefined
      ? { opened: probed.opened, at: first }
      : yield* initializeOn(run)(first, negotiation)
    if (opened._tag === "Refused") return yield* run.fail(`${probed.outcome.why}, and ${opened.why}`)
    return yield* run.finish(at, opened.established, "probe", run.observe(at.conn, opened.established, true))
  })
