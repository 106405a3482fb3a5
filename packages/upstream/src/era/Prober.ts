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
 */
import type * as Revision from "@mcpx-fx/protocol/Revision"
import * as Tracing from "@mcpx-fx/protocol/Tracing"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { EraCache, type EraObservation, type EraRecord } from "./EraCache.js"
import * as StartSpan from "./internal/StartSpan.js"
import { ClosedDuringProbe, isClosed, makeExchanges, type Opened, type Outcome, refusedBy } from "./internal/ProbeExchanges.js"
import { type Negotiation, Negotiator } from "./Negotiator.js"
import { usesEraCache } from "./Preference.js"
import { type ProbeError, ProbeFailed, type ProbeOptions, type ProbeReport, type Started, CachedProbeFactor, type LateEra } from "./ProbeModel.js"
import type { ServerDefinition } from "../ServerDefinition.js"
import { makeSession } from "../session/Session.js"
import type { EraSource, Established } from "../session/SessionModel.js"
import { RefusedAgain } from "../session/SessionErrors.js"
import { type Connection, Transport, TransportClosed } from "../transport/Transport.js"



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
      return {
        start: (def, options) =>
          tracing
            ? StartSpan.traced(def, options, start(def, options, transport, cache, negotiator, true))
            : start(def, options, transport, cache, negotiator, false)
      }
    })
  )
}

const start = (
  def: ServerDefinition,
  options: ProbeOptions,
  transport: Context.Tag.Service<Transport>,
  cache: Context.Tag.Service<EraCache>,
  negotiator: Context.Tag.Service<Negotiator>,
  tracing: boolean
): Effect.Effect<Started, ProbeError, Scope.Scope> =>
  Effect.gen(function*() {
    const began = yield* Clock.currentTimeMillis
    const steps: Array<string> = []
    const note = (text: string) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        steps.push(`+${now - began}ms ${text}`)
      })
    const fail = (reason: string) =>
      new ProbeFailed({ server: def.name, preference: options.preference, reason, steps: [...steps] })
    const parent = yield* Effect.scope
    const isStdio = def.transport === "stdio"
    const { discover, initialize } = makeExchanges({ note, fail, session: options.session })

    const openIn = (wire?: "http+sse") =>
      Effect.gen(function*() {
        const scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
        const conn = yield* transport.open(def, wire === undefined ? {} : { wire }).pipe(Scope.extend(scope))
        return { conn, scope }
      })

    const closedToProbe = <A, E, R>(self: Effect.Effect<A, E, R>) =>
      Effect.catchIf(
        self,
        (e): e is E & { readonly _tag: "TransportClosed"; readonly message: string } =>
          isStdio && typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "TransportClosed",
        (e) => Effect.fail(new ClosedDuringProbe({ reason: e.message }))
      )

    // HTTP: a bare refusal of initialize means the endpoint predates Streamable HTTP.
    const initializeAnyWire = (first: { conn: Connection; scope: Scope.CloseableScope }, negotiation: Negotiation) =>
      initialize(first.conn, negotiation).pipe(
        Effect.map((opened) => ({ opened, at: first })),
        Effect.catchTag("LegacyHTTPRefusedError", (e) =>
          Effect.gen(function*() {
            yield* note(`initialize refused with a bare HTTP ${e.status}: trying the 2024-11-05 HTTP+SSE transport`)
            yield* Scope.close(first.scope, Exit.void)
            const sse = yield* openIn("http+sse")
            const opened = yield* initialize(sse.conn, yield* negotiator.begin)
            return { opened, at: sse }
          }))
      )

    type Opening = { readonly conn: Connection; readonly scope: Scope.CloseableScope }

    // What the race on one stdio process found: the server's era (for the cache), what initialize
    // did on this process if it was sent and answered, and a discover still unanswered when
    // initialize settled the process legacy (it keeps running, in the process's scope).
    interface Raced {
      readonly outcome: Outcome
      readonly opened: Opened | undefined
      readonly pending: Fiber.Fiber<Outcome, ProbeError> | undefined
    }

    // stdio, discover first: initialize joins a discover that is slow to answer. Neither request
    // is abandoned: the discover may still tell us the server is modern, and an initialize must
    // not be cancelled (once answered, it has made this process legacy).
    const discoverRacing = (at: Opening, negotiation: Negotiation, bound: Duration.DurationInput) =>
      Effect.gen(function*() {
        const discovering = yield* Effect.forkIn(discover(at.conn, negotiation), at.scope)
        const early = yield* Fiber.join(discovering).pipe(Effect.timeoutOption(bound))
        if (Option.isSome(early)) return { outcome: early.value, opened: undefined, pending: undefined } satisfies Raced
        yield* note(`no answer to discover within ${Duration.format(Duration.decode(bound))}: sending initialize alongside`)
        const initializing = yield* Effect.forkIn(initialize(at.conn, negotiation), at.scope)
        const first = yield* Effect.raceFirst(
          Effect.map(Fiber.await(discovering), (exit) => ({ _tag: "Discover", exit }) as const),
          Effect.map(Fiber.await(initializing), (exit) => ({ _tag: "Initialize", exit }) as const)
        )
        if (first._tag === "Initialize") {
          const exit = first.exit
          // A dead process ends the probe for both; any other failure leaves the era to discover.
          if (Exit.isFailure(exit) && isClosed(exit.cause)) return yield* Effect.failCause(exit.cause)
          if (Exit.isSuccess(exit) && exit.value._tag === "Legacy") {
            const opened = exit.value
            const answered = yield* Fiber.poll(discovering)
            if (Option.isNone(answered)) {
              yield* note(`initialize answered first: this process is legacy; its discover is still awaited`)
              return {
                outcome: { _tag: "Legacy", why: "initialize answered first" },
                opened,
                pending: discovering
              } satisfies Raced
            }
            const outcome = yield* answered.value
            yield* note(`initialize answered: this process is legacy`)
            return { outcome, opened, pending: undefined } satisfies Raced
          }
          const outcome = yield* Fiber.join(discovering)
          if (Exit.isSuccess(exit)) return { outcome, opened: exit.value, pending: undefined } satisfies Raced
          if (outcome._tag === "Legacy") return yield* Effect.failCause(exit.cause)
          return { outcome, opened: refusedBy(exit.cause), pending: undefined } satisfies Raced
        }
        const outcome = yield* first.exit
        if (outcome._tag === "Legacy") {
          return { outcome, opened: yield* Fiber.join(initializing), pending: undefined } satisfies Raced
        }
        // Modern, with initialize in flight: an answer makes this process legacy, while a refusal
        // (a modern-only server may name only versions discover already used) changes nothing.
        const settled = yield* Fiber.await(initializing).pipe(Effect.timeoutOption(options.probeTimeout))
        if (Option.isSome(settled)) {
          const exit = settled.value
          if (Exit.isFailure(exit)) {
            if (isClosed(exit.cause)) return yield* Effect.failCause(exit.cause)
            const opened = refusedBy(exit.cause)
            yield* note(`initialize failed after discover answered (${opened.why}): the server is modern`)
            return { outcome, opened, pending: undefined } satisfies Raced
          }
          if (exit.value._tag === "Legacy") yield* note(`initialize answered too: this process is legacy, the server dual`)
          return { outcome, opened: exit.value, pending: undefined } satisfies Raced
        }
        yield* note(`initialize still unanswered: it is left pending, not cancelled`)
        yield* Fiber.join(initializing).pipe(
          Effect.flatMap((late) =>
            late._tag === "Legacy"
              ? Effect.logWarning(`${def.name} answered initialize after its session settled modern; it stays modern`)
              : Effect.void
          ),
          Effect.ignore,
          Effect.forkIn(at.scope)
        )
        return { outcome, opened: undefined, pending: undefined } satisfies Raced
      })

    const useCache = usesEraCache(options.preference) && options.ignoreCache !== true
    const cached = useCache ? yield* cache.get(def) : Option.none<EraRecord>()
    if (Option.isSome(cached)) {
      yield* note(`era cache says ${cached.value.era} ${cached.value.version} (learned ${new Date(cached.value.at).toISOString()})`)
    }
    // The cache may only take a start straight to what this preference would find without it: a
    // record of the era the preference tries first, or of a server known to refuse the other era.
    // (A dual server learned modern under prefer-discover is still legacy under prefer-initialize.)
    const firstEra: Revision.Era = options.preference === "prefer-initialize" ? "legacy" : "modern"
    const consulted = Option.filter(cached, (r) => r.era === firstEra || r.exclusive === true)
    if (Option.isSome(cached) && Option.isNone(consulted)) {
      yield* note(`${options.preference} tries ${firstEra} first, and the cache does not say the server refuses it: probing in the normal order`)
    }
    const distrusted = options.distrustCache === true && Option.isSome(cached)
    if (distrusted) {
      yield* note(`the cached era failed: forgetting it and probing again`)
      yield* cache.invalidate(def)
    }
    // What chooses the order: the cache, unless it has just failed.
    const trusted = distrusted ? Option.none<EraRecord>() : consulted

    /** What the cache learns; `exclusive`: the other era's opening request was refused or never answered. */
    const observe = (conn: Connection, established: Omit<Established, "eraSource">, exclusive: boolean): EraObservation =>
      ({
        era: established.era,
        version: established.negotiated,
        ...(conn.wire === "stdio" ? {} : { transport: conn.wire }),
        ...(exclusive ? { exclusive } : {})
      }) as EraObservation

    /**
     * Makes the session. `record` is what the cache learns (nothing: leave it as it is); it can
     * differ from the session's own era when a dual server's process was initialized. `pending` is
     * a discover that may still answer modern, in which case the cache is rewritten then.
     */
    const finish = (
      at: Opening,
      established: Omit<Established, "eraSource">,
      eraSource: EraSource,
      record: EraObservation | undefined,
      pending?: Fiber.Fiber<Outcome, ProbeError>
    ) =>
      Effect.gen(function*() {
        const { conn } = at
        const recordedEra = record?.era ?? established.era
        const stale = Option.isSome(consulted) && consulted.value.era !== recordedEra
        if (stale) yield* note(`the cached era was wrong: rewriting the cache`)
        const written = record !== undefined && useCache ? Option.some(yield* cache.set(def, record)) : Option.none()
        if (Option.isNone(written) && stale) yield* cache.invalidate(def)
        const lateEra = yield* Deferred.make<LateEra>()
        if (pending !== undefined && Option.isSome(written)) {
          yield* Fiber.join(pending).pipe(
            Effect.flatMap((outcome) =>
              outcome._tag !== "Modern" ? Effect.void : Effect.gen(function*() {
                const found = yield* cache.set(def, observe(conn, outcome.established, false))
                yield* Effect.logInfo(`${def.name}: its discover answered after initialize; the server is recorded modern`)
                yield* Deferred.succeed(lateEra, { cached: written.value, found })
              })
            ),
            Effect.ignore,
            Effect.forkIn(at.scope)
          )
        }
        // Only a legacy HTTP session can be forgotten by its server; it is opened again the same way.
        const reinitialize = established.era === "legacy" && conn.wire !== "stdio"
          ? Effect.flatMap(negotiator.begin, (n) => initialize(conn, n)).pipe(
            Effect.flatMap((opened) =>
              opened._tag === "Legacy"
                ? Effect.void
                : Effect.fail(new RefusedAgain({ reason: `${def.name} refused to initialize again: ${opened.why}` }))
            ),
            Effect.catchTags({
              ProbeFailed: (e) => Effect.fail(new TransportClosed({ reason: `${def.name} could not initialize again: ${e.message}` })),
              DisjointVersionsError: (e) => Effect.fail(new RefusedAgain({ reason: `${def.name}: ${e.message}` })),
              VersionsExhaustedError: (e) => Effect.fail(new RefusedAgain({ reason: `${def.name}: ${e.message}` })),
              UnacceptableVersionError: (e) => Effect.fail(new RefusedAgain({ reason: `${def.name}: ${e.message}` }))
            })
          )
          : undefined
        const traced = tracing ? { url: def.transport === "http" ? def.url : undefined, lane: options.lane } : undefined
        const session = yield* makeSession(def.name, conn, { ...established, eraSource }, options.session, reinitialize, traced)
        const now = yield* Clock.currentTimeMillis
        const report: ProbeReport = {
          server: def.name,
          preference: options.preference,
          era: established.era,
          negotiated: established.negotiated,
          eraSource,
          wire: conn.wire,
          durationMs: now - began,
          steps: [...steps],
          cached,
          stale
        }
        return { session, report, lateEra: Deferred.await(lateEra) } satisfies Started
      })

    const legacyOnly = (eraSource: EraSource, remember: boolean) =>
      Effect.gen(function*() {
        const first = yield* openIn(cachedWire(trusted))
        const { opened, at } = yield* initializeAnyWire(first, yield* negotiator.begin)
        if (opened._tag === "Refused") return yield* fail(opened.why)
        // Remembered only after the process exited on the probe: discover is what it cannot take.
        return yield* finish(at, opened.established, eraSource, remember ? observe(at.conn, opened.established, true) : undefined)
      })

    const discoverThenInitialize = (eraSourceIfModern: EraSource, bound: Duration.DurationInput) =>
      Effect.gen(function*() {
        const first = yield* openIn()
        const negotiation = yield* negotiator.begin
        const probed: Raced = isStdio
          ? yield* discoverRacing(first, negotiation, bound)
          : { outcome: yield* discover(first.conn, negotiation), opened: undefined, pending: undefined }
        if (probed.opened?._tag === "Legacy") {
          // Initialized, this process is legacy whatever discover said; the cache describes the server.
          const record = probed.outcome._tag === "Modern"
            ? observe(first.conn, probed.outcome.established, false)
            : observe(first.conn, probed.opened.established, true)
          return yield* finish(first, probed.opened.established, "probe", record, probed.pending)
        }
        if (probed.outcome._tag === "Modern") {
          const established = probed.outcome.established
          const refused = probed.opened?._tag === "Refused"
          return yield* finish(first, established, eraSourceIfModern, observe(first.conn, established, refused))
        }
        const { opened, at } = probed.opened !== undefined
          ? { opened: probed.opened, at: first }
          : yield* initializeAnyWire(first, negotiation)
        if (opened._tag === "Refused") return yield* fail(`${probed.outcome.why}, and ${opened.why}`)
        return yield* finish(at, opened.established, "probe", observe(at.conn, opened.established, true))
      })

    const probeTimeout = Duration.decode(options.probeTimeout)
    const cachedBound = options.cachedProbeTimeout ?? Duration.times(probeTimeout, CachedProbeFactor)
    const cachedModern = Option.isSome(trusted) && trusted.value.era === "modern"

    const byPreference = Effect.gen(function*() {
      switch (options.preference) {
        case "force-initialize":
          return yield* legacyOnly("forced", false)
        case "force-discover": {
          const first = yield* openIn()
          const outcome = yield* discover(first.conn, yield* negotiator.begin)
          if (outcome._tag === "Legacy") return yield* fail(`it does not speak 2026-07-28: ${outcome.why}`)
          return yield* finish(first, outcome.established, "forced", undefined)
        }
        case "prefer-initialize":
        case "prefer-discover":
        case "follow":
          if (Option.isSome(trusted) && trusted.value.era === "legacy") return yield* cachedLegacyFirst
          if (options.preference === "prefer-initialize" && !cachedModern) return yield* initializeThenDiscover
          return yield* closedToProbe(
            cachedModern ? discoverThenInitialize("cache", cachedBound) : discoverThenInitialize("probe", probeTimeout)
          ).pipe(
            Effect.catchTag("ClosedDuringProbe", (e) =>
              Effect.gen(function*() {
                yield* note(`the process exited during the probe (${e.reason}): starting a fresh one legacy-only`)
                return yield* legacyOnly("probe", true)
              }))
          )
      }
    })

    const initializeThenDiscover = Effect.gen(function*() {
      const first = yield* openIn()
      const negotiation = yield* negotiator.begin
      const { opened, at } = yield* initializeAnyWire(first, negotiation)
      if (opened._tag === "Legacy") return yield* finish(at, opened.established, "probe", observe(at.conn, opened.established, false))
      const outcome = yield* discover(at.conn, negotiation)
      if (outcome._tag === "Legacy") return yield* fail(`${opened.why}, and ${outcome.why}`)
      return yield* finish(at, outcome.established, "probe", observe(at.conn, outcome.established, true))
    })

    // A cached legacy server gets initialize first and no discover at all, unless it refuses.
    const cachedLegacyFirst = Effect.gen(function*() {
      const first = yield* openIn(cachedWire(trusted))
      const negotiation = yield* negotiator.begin
      const { opened, at } = yield* initializeAnyWire(first, negotiation)
      if (opened._tag === "Legacy") return yield* finish(at, opened.established, "cache", undefined)
      yield* note(`the cached era did not hold (${opened.why}): probing in the normal order`)
      const outcome = yield* discover(at.conn, negotiation)
      if (outcome._tag === "Legacy") return yield* fail(`${opened.why}, and ${outcome.why}`)
      return yield* finish(at, outcome.established, "probe", observe(at.conn, outcome.established, true))
    })

    return yield* byPreference
  })

const cachedWire = (cached: Option.Option<EraRecord>): "http+sse" | undefined =>
  Option.isSome(cached) && cached.value.transport === "http+sse" ? "http+sse" : undefined
