/**
 * Carries a plan out on an HTTP upstream: Streamable HTTP POSTs, where status codes decide and
 * there is no timeout. A 4xx to discover with a modern error is modern, any other 4xx falls back to
 * `initialize`; 5xx and connection failures are errors and nothing is cached. `initialize` refused
 * with a bare 400/404/405 moves to the 2024-11-05 HTTP+SSE transport, on a new connection.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type { ProbeError, Started } from "../ProbeModel.js"
import { discoverOnly, initializeFirst, type InitializeOn } from "./Attempts.js"
import type { Run } from "./ProbeRun.js"

/** `initialize`, and again over HTTP+SSE if the plan allows and the endpoint predates Streamable HTTP. */
const initializeOn = (run: Run): InitializeOn => (first, negotiation) => {
  const sent = Effect.map(run.initialize(first.conn, negotiation), (opened) => ({ opened, at: first }))
  if (!run.plan.sseFallback) return sent
  return Effect.catchTag(sent, "LegacyHTTPRefusedError", (e) =>
    Effect.gen(function*() {
      yield* run.note(`initialize refused with a bare HTTP ${e.status}: trying the 2024-11-05 HTTP+SSE transport`)
      yield* Scope.close(first.scope, Exit.void)
      const sse = yield* run.open("http+sse")
      const opened = yield* run.initialize(sse.conn, yield* run.negotiator.begin)
      return { opened, at: sse }
    }))
}

/** Runs `run.plan` on an HTTP server. */
export const executeHttp = (run: Run): Effect.Effect<Started, ProbeError, Scope.Scope> => {
  const { plan } = run
  if (plan.first === "initialize") return initializeFirst(run, initializeOn(run))
  if (plan.then === "fail") return discoverOnly(run)
  return Effect.gen(function*() {
    const first = yield* run.open()
    const negotiation = yield* run.negotiator.begin
    const outcome = yield* run.discover(first.conn, negotiation)
    if (outcome._tag === "Modern") {
      return yield* run.finish(first, outcome.established, plan.source, run.observe(first.conn, outcome.established, false))
    }
    const { opened, at } = yield* initializeOn(run)(first, negotiation)
    if (opened._tag === "Refused") return yield* run.fail(`${outcome.why}, and ${opened.why}`)
    return yield* run.finish(at, opened.established, "probe", run.observe(at.conn, opened.established, true))
  })
}
