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
import * as Capabilities from "@mcpx-fx/protocol/Capabilities"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Meta from "@mcpx-fx/protocol/Meta"
import * as Revision from "@mcpx-fx/protocol/Revision"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { EraCache, type EraObservation, type EraRecord } from "./EraCache.js"
import { modernHeaders, type UnsendableRequest } from "./ModernHeaders.js"
import { type Negotiation, type NegotiationError, Negotiator } from "./Negotiator.js"
import { type Preference, usesEraCache } from "./Preference.js"
import type { ServerDefinition } from "./ServerDefinition.js"
import { type EraSource, type Established, makeSession, RefusedAgain, type Session, type SessionOptions } from "./Session.js"
import { type Connection, Transport, TransportClosed, type TransportError } from "./Transport.js"

/** What the Prober needs besides the definition. */
export interface ProbeOptions {
  /** The effective preference: the server's own `protocol` key, else `upstream.protocol`. */
  readonly preference: Preference
  /** stdio only: how long discover may stay unanswered before `initialize` is sent alongside. */
  readonly probeTimeout: Duration.DurationInput
  /**
   * stdio only, for a server the era cache says is modern: how long its discover may stay
   * unanswered before `initialize` is sent alongside. Default: ten times `probeTimeout`, so a
   * known-modern server that is slow to start is not initialized, while one that became legacy
   * and ignores discover costs that wait once.
   */
  readonly cachedProbeTimeout?: Duration.DurationInput
  /** Ignore the era cache for this start (`mcpx-fx probe`): neither read it nor trust it. */
  readonly ignoreCache?: boolean
  /**
   * The era the cache names has just failed (the Pool saw a modern HTTP upstream refuse modern
   * requests): forget it and probe in the normal order, then cache what is found. The report
   * still names the forgotten record, so a changed era is told as stale.
   */
  readonly distrustCache?: boolean
  readonly session: SessionOptions
}

/** What a start found out, for `mcpx-fx probe`, `/v1/protocol` and the `server.era.stale` event. */
export interface ProbeReport {
  readonly server: string
  readonly preference: Preference
  readonly era: Revision.Era
  readonly negotiated: Revision.Revision
  readonly eraSource: EraSource
  readonly wire: Connection["wire"]
  readonly durationMs: number
  /** What was sent and what each answer meant, in order, with milliseconds since the start. */
  readonly steps: ReadonlyArray<string>
  /** The cached record the start began with, if the cache was consulted and held one. */
  readonly cached: Option.Option<EraRecord>
  /** The cached era proved wrong; the cache was rewritten. */
  readonly stale: boolean
}

/**
 * The era cache was rewritten after the start: the discover that `initialize` beat answered
 * later, in the process's life. The session stays legacy; the server is recorded modern.
 */
export interface LateEra {
  /** What the start had recorded. */
  readonly cached: EraRecord
  /** What the cache says now. */
  readonly found: EraRecord
}

/** A started upstream: the session and how its era was decided. */
export interface Started {
  readonly session: Session
  readonly report: ProbeReport
  /** Completes if the era cache is rewritten later in this session's life (see LateEra); never otherwise. */
  readonly lateEra: Effect.Effect<LateEra>
}

/** How much longer than `probeTimeout` a discover to a server cached modern may take. */
export const CachedProbeFactor = 10

/** The era could not be settled: the reason says what was tried and what each answer was. */
export class ProbeFailed extends Schema.TaggedError<ProbeFailed>("@mcpx-fx/upstream/ProbeFailed")("ProbeFailed", {
  server: Schema.String,
  preference: Schema.String,
  reason: Schema.String,
  steps: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `cannot start ${this.server} (upstream.protocol=${this.preference}): ${this.reason}`
  }
}

/** The stdio process exited while its era was being probed. */
class ClosedDuringProbe extends Data.TaggedError("ClosedDuringProbe")<{ readonly reason: string }> {}

type Outcome =
  | { readonly _tag: "Modern"; readonly established: Omit<Established, "eraSource"> }
  | { readonly _tag: "Legacy"; readonly why: string }

type Opened =
  | { readonly _tag: "Legacy"; readonly established: Omit<Established, "eraSource"> }
  | { readonly _tag: "Refused"; readonly why: string; readonly modernEvidence: boolean }

/** Everything a start can fail with. */
export type ProbeError = ProbeFailed | NegotiationError | TransportError | UnsendableRequest

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
      return { start: (def, options) => start(def, options, transport, cache, negotiator) }
    })
  )
}

const modernErrorCodes: ReadonlyArray<number> = ErrorCode.ModernErrorCodes

const legacyCapabilities = (caps: JsonObject): JsonObject => Capabilities.clientCapabilitiesFor("2025-11-25", caps)

const start = (
  def: ServerDefinition,
  options: ProbeOptions,
  transport: Context.Tag.Service<Transport>,
  cache: Context.Tag.Service<EraCache>,
  negotiator: Context.Tag.Service<Negotiator>
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
    const clientInfo = options.session.clientInfo
    const caps = options.session.clientCapabilities

    const openIn = (wire?: "http+sse") =>
      Effect.gen(function*() {
        const scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
        const conn = yield* transport.open(def, wire === undefined ? {} : { wire }).pipe(Scope.extend(scope))
        return { conn, scope }
      })

    // One request, answered by its final message. Questions during a probe are answered alone.
    const ask = (conn: Connection, req: JsonRpc.Request, era: Revision.Era, headers: Record<string, string>) =>
      conn.request(req, { era, headers }).pipe(
        Stream.runCollect,
        Effect.map((c) => Chunk.last(c).pipe(Option.map((p) => p.message), Option.filter(JsonRpc.isResponse))),
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(fail(`${req.method} ended without a response`)),
          onSome: Effect.succeed
        }))
      )

    const closedToProbe = <A, E, R>(self: Effect.Effect<A, E, R>) =>
      Effect.catchIf(
        self,
        (e): e is E & { readonly _tag: "TransportClosed"; readonly message: string } =>
          isStdio && typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "TransportClosed",
        (e) => Effect.fail(new ClosedDuringProbe({ reason: e.message }))
      )

    let ids = 0
    const discover = (conn: Connection, negotiation: Negotiation) =>
      Effect.gen(function*() {
        while (true) {
          const version = yield* negotiation.offer("modern")
          const params = { _meta: Meta.requestMeta({ protocolVersion: version, clientCapabilities: caps, clientInfo }) }
          yield* note(`sent server/discover (${version})`)
          const headers = conn.wire === "stdio" ? {} : yield* modernHeaders("server/discover", params, new Map())
          const answer = yield* ask(
            conn,
            JsonRpc.request(`mcpx-probe-${++ids}`, "server/discover", params),
            "modern",
            headers
          ).pipe(
            Effect.map(Either.right),
            Effect.catchTag("HTTPStatusError", (e) => Effect.succeed(Either.left(e)))
          )
          if (answer._tag === "Left") {
            const e = answer.left
            if (e.status >= 500) return yield* fail(`server/discover answered HTTP ${e.status}; not cached`)
            if (e.rpcError !== undefined && modernErrorCodes.includes(e.rpcError.code)) {
              yield* note(`HTTP ${e.status} with modern error ${e.rpcError.code}: modern`)
              return modernWithout(version)
            }
            yield* note(`HTTP ${e.status} without a modern error: legacy`)
            return { _tag: "Legacy", why: `server/discover answered HTTP ${e.status}` } as Outcome
          }
          const m = answer.right
          if (JsonRpc.isErrorResponse(m)) {
            const { code, message, data } = m.error
            if (code === ErrorCode.UnsupportedProtocolVersion) {
              const step = yield* negotiation.onUnsupportedVersion("modern", data)
              if (step._tag === "Retry") {
                yield* note(`-32022: retrying with ${step.version}`)
                continue
              }
              yield* note(`-32022 naming only legacy versions: legacy`)
              return { _tag: "Legacy", why: "its -32022 named only legacy versions" } as Outcome
            }
            if (modernErrorCodes.includes(code)) {
              yield* note(`error ${code} (${message}): modern`)
              return modernWithout(version)
            }
            yield* note(`error ${code} (${message}): legacy`)
            return { _tag: "Legacy", why: `server/discover answered error ${code}` } as Outcome
          }
          const result = (m as JsonRpc.SuccessResponse).result
          if (!Array.isArray(result.supportedVersions)) {
            yield* note(`a success that is not a DiscoverResult: legacy`)
            return { _tag: "Legacy", why: "server/discover succeeded without supportedVersions" } as Outcome
          }
          const negotiated = yield* negotiation.acceptDiscover(result.supportedVersions.filter(isString))
          yield* note(`DiscoverResult supporting ${result.supportedVersions.join(", ")}: modern ${negotiated}`)
          return {
            _tag: "Modern",
            established: {
              era: "modern",
              negotiated,
              serverInfo: serverInfoOf(result),
              capabilities: isJsonObject(result.capabilities) ? result.capabilities : {},
              instructions: typeof result.instructions === "string" ? result.instructions : undefined
            }
          } as Outcome
        }
      })

    const initialize = (conn: Connection, negotiation: Negotiation): Effect.Effect<Opened, ProbeError> =>
      Effect.gen(function*() {
        while (true) {
          const version = yield* negotiation.offer("legacy")
          yield* note(`sent initialize (${version})`)
          const m = yield* ask(
            conn,
            JsonRpc.request(`mcpx-init-${++ids}`, "initialize", {
              protocolVersion: version,
              capabilities: legacyCapabilities(caps),
              clientInfo
            }),
            "legacy",
            {}
          )
          if (JsonRpc.isErrorResponse(m)) {
            const { code, message, data } = m.error
            const supported = isJsonObject(data) && Array.isArray(data.supported)
            if (supported) {
              const step = yield* negotiation.onUnsupportedVersion("legacy", data)
              if (step._tag === "Retry") {
                yield* note(`initialize refused (${code}); retrying with ${step.version}`)
                continue
              }
              yield* note(`initialize refused naming only modern versions`)
              return { _tag: "Refused", why: `initialize refused: ${message}`, modernEvidence: true } as Opened
            }
            yield* note(`initialize refused with error ${code} (${message})`)
            return {
              _tag: "Refused",
              why: `initialize refused with error ${code}: ${message}`,
              modernEvidence: modernErrorCodes.includes(code)
            } as Opened
          }
          const result = (m as JsonRpc.SuccessResponse).result
          const negotiated = yield* negotiation.acceptInitialize(result.protocolVersion)
          yield* conn.notify(JsonRpc.notification("notifications/initialized"), {
            era: "legacy",
            headers: Revision.atLeast(negotiated, "2025-06-18") ? { "MCP-Protocol-Version": negotiated } : {}
          })
          yield* note(`initialize answered ${negotiated}: legacy`)
          return {
            _tag: "Legacy",
            established: {
              era: "legacy",
              negotiated,
              serverInfo: isJsonObject(result.serverInfo) ? result.serverInfo : undefined,
              capabilities: isJsonObject(result.capabilities) ? result.capabilities : {},
              instructions: typeof result.instructions === "string" ? result.instructions : undefined
            }
          } as Opened
        }
      })

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
        const session = yield* makeSession(def.name, conn, { ...established, eraSource }, options.session, reinitialize)
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

const isClosed = (cause: Cause.Cause<unknown>): boolean =>
  Option.exists(Cause.failureOption(cause), (e) => typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "TransportClosed")

const cachedWire = (cached: Option.Option<EraRecord>): "http+sse" | undefined =>
  Option.isSome(cached) && cached.value.transport === "http+sse" ? "http+sse" : undefined

const modernWithout = (version: Revision.ModernRevision): Outcome => ({
  _tag: "Modern",
  established: { era: "modern", negotiated: version, serverInfo: undefined, capabilities: {}, instructions: undefined }
})

const serverInfoOf = (result: JsonObject): JsonObject | undefined => {
  const meta = Meta.metaOf(result)
  const info = meta?.[Meta.ServerInfoKey]
  return isJsonObject(info) ? info : isJsonObject(result.serverInfo) ? result.serverInfo : undefined
}

const isString = (u: unknown): u is string => typeof u === "string"

const messageOf = (u: unknown): string => (u instanceof Error ? u.message : String(u))

/** An initialize that failed short of the process exiting: for the era, a refusal. */
const refusedBy = (cause: Cause.Cause<unknown>): Extract<Opened, { _tag: "Refused" }> => ({
  _tag: "Refused",
  why: messageOf(Cause.squash(cause)),
  modernEvidence: false
})
