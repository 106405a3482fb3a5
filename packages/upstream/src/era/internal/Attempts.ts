/**
 * The attempts both executors make the same way on one connection: initialize first (then discover,
 * or fail), initialize alone, discover alone. Only how `initialize` is sent differs (HTTP may move to
 * the HTTP+SSE transport), so the executor hands that in.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Negotiation } from "../Negotiator.js"
import type { ProbeError, Started } from "../ProbeModel.js"
import type { EraSource } from "../../session/SessionModel.js"
import type { Opened } from "./ProbeExchanges.js"
import type { Opening, Run } from "./ProbeRun.js"

/** How an executor sends `initialize` on a connection, and the connection it was answered on. */
export type InitializeOn = (
  at: Opening,
  negotiation: Negotiation
) => Effect.Effect<{ readonly opened: Opened; readonly at: Opening }, ProbeError, Scope.Scope>

/**
 * `initialize` alone, on a new connection: under force-initialize, and on the fresh process that
 * replaces one that exited during the probe (`remember`: the server is recorded legacy-only, since
 * discover is what it cannot take).
 */
export const initializeOnly = (
  run: Run,
  initializeOn: InitializeOn,
  wire: "http+sse" | undefined,
  eraSource: EraSource,
  remember: boolean
): Effect.Effect<Started, ProbeError, Scope.Scope> =>
  Effect.gen(function*() {
    const first = yield* run.open(wire)
    const { at, opened } = yield* initializeOn(first, yield* run.negotiator.begin)
    if (opened._tag === "Refused") return yield* run.fail(opened.why)
    return yield* run.finish(at, opened.established, eraSource, remember ? run.observe(at.conn, opened.established, true) : undefined)
  })

/**
 * The plan's initialize-first attempts. A cached legacy server that answers is not recorded again;
 * a refusal leads to discover on the same connection (or fails the start under force-initialize).
 */
export const initializeFirst = (run: Run, initializeOn: InitializeOn): Effect.Effect<Started, ProbeError, Scope.Scope> => {
  const { plan } = run
  if (plan.then === "fail") return initializeOnly(run, initializeOn, plan.wire, "forced", false)
  return Effect.gen(function*() {
    const first = yield* run.open(plan.wire)
    const negotiation = yield* run.negotiator.begin
    const { opened, at } = yield* initializeOn(first, negotiation)
    const fromCache = plan.source === "cache"
    if (opened._tag === "Legacy") {
      return yield* fromCache
        ? run.finish(at, opened.established, "cache", undefined)
        : run.finish(at, opened.established, "probe", run.observe(at.conn, opened.established, false))
    }
    if (fromCache) yield* run.note(`the cached era did not hold (${opened.why}): probing in the normal order`)
    const outcome = yield* run.discover(at.conn, negotiation)
    if (outcome._tag === "Legacy") return yield* run.fail(`${opened.why}, and ${outcome.why}`)
    return yield* run.finish(at, outcome.established, "probe", run.observe(at.conn, outcome.established, true))
  })
}

/** force-discover: `server/discover` alone; a legacy answer fails the start. */
export const discoverOnly = (run: Run): Effect.Effect<Started, ProbeError, Scope.Scope> =>
  Effect.gen(function*() {
    const first = yield* run.open()
    const outcome = yield* run.discover(first.conn, yield* run.negotiator.begin)
    if (outcome._tag === "Legacy") return yield* run.fail(`it does not speak 2026-07-28: ${outcome.why}`)
    return yield* run.finish(first, outcome.established, "forced", undefined)
  })
