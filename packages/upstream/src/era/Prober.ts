/**
 * Decides an upstream's era, the way seed 000 and the specification say, and hands back a
 * negotiated Session together with a report of what was sent and what decided it.
 *
 * stdio: `server/discover` first with the full `_meta`. A DiscoverResult or a modern error
 * (-32020/-32021/-32022) means modern; any other error, or a success that is not a DiscoverResult,
 * means legacy. With no answer within `probeTimeout`, `initialize` is sent alongside the pending
 * discover, which is not abandoned: the commonest slow server is a modern one that npx is still
 * downloading. `initialize` is never cancelled, and once it has been answered the process is
 * legacy for its lifetime (its calls and its questions), since an `initialize` selects legacy
 * semantics for the stdio process. The era cache records the server, not the process: a server
 * that answered discover as well is recorded modern (it is dual); one whose discover has not
 * answered is recorded legacy, and recorded modern again if that discover answers later in the
 * process's life. A process that exits during the probe is restarted and spoken to legacy-only.
 *
 * With the era cache on, later starts try the cached era first, where that cannot change the result
 * (seed 000: "the result is the same"): the record names the era the preference tries first, or
 * says the server refused the other one (`exclusive`). A dual server learned modern under
 * prefer-discover is still legacy under prefer-initialize. A cached modern server gets
 * `server/discover` alone, and `initialize` only if discover is refused the legacy way, the
 * process exits, or no answer comes within `cachedProbeTimeout` (ten times `probeTimeout` unless
 * set); a cached legacy server gets `initialize` first and no discover at all, unless it refuses.
 * A cache that proves wrong is rewritten and the report says `stale`.
 *
 * HTTP: status codes decide and there is no timeout. A 4xx with a modern error is modern, any
 * other 4xx falls back to `initialize`; 5xx and connection failures are errors and nothing is
 * cached. `initialize` refused with a bare 400/404/405 falls back to the 2024-11-05 HTTP+SSE
 * transport.
 *
 * A start reads the cache, makes a plan (ProbePlan.ts: pure, which attempts in which order) and
 * hands it to the executor for the definition's transport (internal/StdioExecutor.ts,
 * internal/HttpExecutor.ts), which share the exchanges and the session's making (internal/ProbeRun.ts).
 */
import * as Tracing from "@mcpx-fx/protocol/Tracing"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { EraCache, type EraRecord } from "./EraCache.js"
import { executeHttp } from "./internal/HttpExecutor.js"
import { makeRun, type RunServices } from "./internal/ProbeRun.js"
import * as StartSpan from "./internal/StartSpan.js"
import { executeStdio } from "./internal/StdioExecutor.js"
import { Negotiator } from "./Negotiator.js"
import type { ProbeError, ProbeOptions, Started } from "./ProbeModel.js"
import { plan, readsCache } from "./ProbePlan.js"
import type { ServerDefinition } from "../ServerDefinition.js"
import { Transport } from "../transport/Transport.js"

/** Starts upstream sessions, deciding each one's era. */
export class Prober extends Context.Tag("@mcpx-fx/upstream/Prober")<Prober, {
  readonly start: (def: ServerDefinition, options: ProbeOptions) => Effect.Effect<Started, ProbeError, Scope.Scope>
}>() {
  /** The Prober on the given Transport, EraCache and Negotiator. */
  static readonly layer: Layer.Layer<Prober, never, Transport | EraCache | Negotiator> = Layer.effect(
    Prober,
    Effect.gen(function*() {
      const transport = yield* Transport
      const cache = yield* EraCache
      const negotiator = yield* Negotiator
      // Read once, here: a start may run in a host request's fiber, which carries no services.
      const tracing = yield* Tracing.Tracing
      const services: RunServices = { transport, cache, negotiator, tracing }
      return {
        start: (def, options) => tracing ? StartSpan.traced(def, options, start(def, options, services)) : start(def, options, services)
      }
    })
  )
}

/** Reads the cache, plans, and hands the plan to the executor for the definition's transport. */
const start = (def: ServerDefinition, options: ProbeOptions, services: RunServices): Effect.Effect<Started, ProbeError, Scope.Scope> =>
  Effect.gen(function*() {
    const began = yield* Clock.currentTimeMillis
    const input = {
      transport: def.transport,
      preference: options.preference,
      ignoreCache: options.ignoreCache === true,
      distrustCache: options.distrustCache === true
    }
    const cached = readsCache(input) ? yield* services.cache.get(def) : Option.none<EraRecord>()
    const planned = plan(input, cached)
    const run = yield* makeRun(def, options, services, planned, cached, began)
    for (const text of planned.notes) yield* run.note(text)
    if (planned.forget) yield* services.cache.invalidate(def)
    return yield* (def.transport === "stdio" ? executeStdio(run) : executeHttp(run))
  })
