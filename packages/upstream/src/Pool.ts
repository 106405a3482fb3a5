/**
 * The Pool keeps the upstream sessions the gateway calls through: one pool per server (by name),
 * holding instances by scope key (who the session is for: everyone, one host session, or one call)
 * and by era lane (modern, legacy). An instance is one started Session and the scope that owns it;
 * closing that scope ends the process or the HTTP session.
 *
 * - Concurrent calls for the same key share one instance, and concurrent first calls share one
 *   start. Each lane admits at most `max` live instances (a permit each, held until the instance's
 *   scope has closed); a new key in a full lane evicts that lane's least-recently-used idle instance,
 *   or waits for one to become idle for at most `startTimeout`.
 * - Instances with no call in flight for `idleTimeout` are closed. `call` keys are closed as soon as
 *   their call ends.
 * - A failed start is remembered per lane: calls fail fast until a cooldown (base, doubling with
 *   consecutive failures, capped) has passed; a successful start resets it.
 * - An instance whose connection closes on its own has crashed: the calls in flight fail with an
 *   error naming the server and its stderr tail, the instance is dropped and the next call starts a
 *   new one.
 * - `follow` (seed 000): the server's own session (prefer-discover) lives in the modern lane; callers
 *   that reached mcpx-fx on a revision before 2026-07-28 use a second, legacy-only session
 *   (force-initialize) in the legacy lane, unless the server's own session settled legacy, which
 *   they then share. When the legacy-only start is refused, that is remembered for the pool's
 *   lifetime and legacy callers share the server's own session. The lanes share no instance,
 *   permit or fiber, so a legacy call the server never answers cannot hold up a modern one.
 *
 * Interruption is the cancellation model: interrupting `withSession` interrupts the caller's work
 * (which cancels its upstream request) and releases the instance without closing it.
 */
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Revision from "@mcpx-fx/protocol/Revision"
import * as RevisionSchema from "@mcpx-fx/protocol/RevisionSchema"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberMap from "effect/FiberMap"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type Abort, abortable } from "./Abortable.js"
import { canonicalJson } from "./internal/canonicalJson.js"
import type { Preference } from "./Preference.js"
import { type ProbeOptions, type ProbeReport, Prober, type Started } from "./Prober.js"
import { processIdentity, type ServerDefinition } from "./ServerDefinition.js"
import type { EraSource, Session } from "./Session.js"
import { type Connection, TransportClosed } from "./Transport.js"

// ---------------------------------------------------------------------------------------------
// Callers, servers and settings

/**
 * Who an instance is kept for. Only equality matters: `global` is one instance for everyone,
 * `session` one per host session id, and `call` a fresh instance for each call, closed after it.
 */
export type ScopeKey =
  | { readonly kind: "global" }
  | { readonly kind: "session"; readonly id: string }
  | { readonly kind: "call" }

/** Constructors for scope keys. */
export const ScopeKey: {
  readonly global: ScopeKey
  readonly session: (id: string) => ScopeKey
  readonly call: ScopeKey
} = {
  global: { kind: "global" },
  session: (id) => ({ kind: "session", id }),
  call: { kind: "call" }
}

/** An era lane: where the server's own session lives (modern), or `follow`'s legacy-only session. */
export const Lane = Schema.Literal("modern", "legacy")
/** An era lane. */
export type Lane = typeof Lane.Type

/** Per-server pool settings (`pool.max`, `pool.idleTimeout`, …). */
export interface PoolSettings {
  /** Live instances per lane; a new key beyond it evicts the lane's least-recently-used idle one. */
  readonly max: number
  /** How long an instance with no call in flight is kept. */
  readonly idleTimeout: Duration.DurationInput
  /** How long a start may take, and how long a caller waits for a saturated lane. */
  readonly startTimeout: Duration.DurationInput
  /** The cooldown after the first failed start; it doubles with each further failure. */
  readonly cooldownBase: Duration.DurationInput
  /** The longest cooldown. */
  readonly cooldownCap: Duration.DurationInput
}

/** The settings used where a server sets none. */
export const defaultSettings: PoolSettings = {
  max: 1,
  idleTimeout: "5 minutes",
  startTimeout: "60 seconds",
  cooldownBase: "1 second",
  cooldownCap: "30 seconds"
}

/**
 * A server as the pool needs it: its definition, how to start it (`probe.preference` is the
 * effective preference: the server's own `protocol` key, else `upstream.protocol`) and its pool
 * settings. A server whose definition, preference or settings change gets a fresh pool; the old
 * one's instances close as soon as they are idle.
 */
export interface PoolServer {
  readonly definition: ServerDefinition
  readonly probe: ProbeOptions
  readonly settings?: Partial<PoolSettings>
}

/**
 * Who is calling: the scope key, and the protocol revision the caller reached mcpx-fx with. No
 * revision (the CLI, `/v1` direct, schema refreshes) counts as modern.
 */
export interface Caller {
  readonly key: ScopeKey
  readonly revision?: string
}

/**
 * The lane a caller asks for: `legacy` only under `follow` for a revision before 2026-07-28.
 * The pool may still serve it from the modern lane (a server that settled legacy, or a refused
 * legacy-only start).
 */
export const requestedLane = (preference: Preference, revision: string | undefined): Lane =>
  preference === "follow" && revision !== undefined && !Revision.atLeast(revision, Revision.ModernRevisions[0])
    ? "legacy"
    : "modern"

// ---------------------------------------------------------------------------------------------
// Errors and events

/** Why a call could not be served. */
export const PoolErrorReason = Schema.Literal("start-failed", "cooling-down", "saturated", "crashed", "stopped")
/** Why a call could not be served. */
export type PoolErrorReason = typeof PoolErrorReason.Type

/** The pool could not serve a call; the message names the server and what to expect next. */
export class PoolError extends Schema.TaggedError<PoolError>("@mcpx-fx/upstream/PoolError")("PoolError", {
  server: Schema.String,
  lane: Lane,
  reason: PoolErrorReason,
  /** The failure itself: the start error, the crash, or what the lane was waiting on. */
  detail: Schema.String,
  /** start-failed and cooling-down: when the next start will be tried (absent: never). */
  retryInMs: Schema.optionalWith(Schema.Number, { exact: true }),
  /** crashed: the last bytes the upstream wrote on stderr. */
  stderrTail: Schema.optionalWith(Schema.String, { exact: true }),
  /** start-failed because the server needs a login (`mcpx-fx auth login`): no cooldown, the next call tries again. */
  authorizationRequired: Schema.optionalWith(Schema.Boolean, { exact: true })
}) {
  override get message(): string {
    const where = this.lane === "legacy" ? `${this.server} (legacy-only session)` : this.server
    const retry = this.retryInMs === undefined ? "" : `; next start in ${formatMs(this.retryInMs)}`
    switch (this.reason) {
      case "start-failed":
        return `upstream ${where} failed to start: ${this.detail}${retry}`
      case "cooling-down":
        return `upstream ${where} is not started again yet after a failed start (${this.detail})${retry}`
      case "saturated":
        return `upstream ${where}: ${this.detail}`
      case "crashed": {
        const tail = this.stderrTail !== undefined && this.stderrTail.trim().length > 0
          ? `; stderr: ${this.stderrTail.trim()}`
          : "; it wrote nothing on stderr"
        return `upstream ${where} crashed: ${this.detail}${tail}`
      }
      case "stopped":
        return `upstream ${where} was stopped during the call (${this.detail})`
    }
  }
}

/**
 * Set when the pool's user ends with one command (`mcpx-fx tools`, `call`): that command reports a
 * failed start in its own output, and no later start will come. A failed start is then logged at
 * debug level only, and its PoolError names no retry time. A daemon or `serve` leaves it unset:
 * there the log is where a failed start shows, and the next start is real.
 */
export class OneShot extends Context.Reference<OneShot>()("@mcpx-fx/upstream/Pool/OneShot", { defaultValue: () => false }) {}

/** Why an instance was closed. */
export const StopReason = Schema.Literal("idle", "released", "evicted", "restart", "stop", "crash", "reconfigured")
/** Why an instance was closed. */
export type StopReason = typeof StopReason.Type

const EraSourceSchema = Schema.Literal("probe", "cache", "forced")
const Wire = Schema.Literal("stdio", "streamable-http", "http+sse")

/** An instance started: its era, how it was decided and how long the start took. */
export const ServerStartEvent = Schema.Struct({
  type: Schema.Literal("server.start"),
  server: Schema.String,
  lane: Lane,
  instance: Schema.String,
  key: Schema.String,
  era: RevisionSchema.EraSchema,
  negotiated: RevisionSchema.RevisionSchema,
  eraSource: EraSourceSchema,
  wire: Wire,
  durationMs: Schema.Number,
  at: Schema.Number
})

/** An instance was closed (after a crash too, so starts and stops pair up). */
export const ServerStopEvent = Schema.Struct({
  type: Schema.Literal("server.stop"),
  server: Schema.String,
  lane: Lane,
  instance: Schema.String,
  key: Schema.String,
  reason: StopReason,
  calls: Schema.Number,
  uptimeMs: Schema.Number,
  at: Schema.Number
})

/** A start found the era cache wrong; the cache has been rewritten. */
export const ServerEraStaleEvent = Schema.Struct({
  type: Schema.Literal("server.era.stale"),
  server: Schema.String,
  instance: Schema.String,
  cached: RevisionSchema.EraSchema,
  cachedVersion: RevisionSchema.RevisionSchema,
  cachedAt: Schema.Number,
  era: RevisionSchema.EraSchema,
  negotiated: RevisionSchema.RevisionSchema,
  at: Schema.Number
})

/** An instance's connection closed on its own (the process exited, the session ended). */
export const ServerCrashEvent = Schema.Struct({
  type: Schema.Literal("server.crash"),
  server: Schema.String,
  lane: Lane,
  instance: Schema.String,
  key: Schema.String,
  reason: Schema.String,
  stderrTail: Schema.String,
  at: Schema.Number
})

/**
 * A start failed. `retryInMs` is the cooldown before the next attempt; it is absent when the
 * failure is remembered for the pool's lifetime (a refused legacy-only start under `follow`).
 */
export const ServerStartFailedEvent = Schema.Struct({
  type: Schema.Literal("server.start.failed"),
  server: Schema.String,
  lane: Lane,
  key: Schema.String,
  reason: Schema.String,
  failures: Schema.Number,
  retryInMs: Schema.optionalWith(Schema.Number, { exact: true }),
  at: Schema.Number
})

/** Every lifecycle event the pool publishes. */
export const PoolEvent = Schema.Union(
  ServerStartEvent,
  ServerStopEvent,
  ServerEraStaleEvent,
  ServerCrashEvent,
  ServerStartFailedEvent
)
/** Every lifecycle event the pool publishes. */
export type PoolEvent = typeof PoolEvent.Type

/**
 * A notification an upstream instance sent outside any call (list_changed, resources/updated, a
 * log message), with the instance it came from. URIs are the upstream's own.
 */
export interface UpstreamNotification {
  readonly server: string
  readonly lane: Lane
  readonly instance: string
  readonly key: string
  readonly notification: JsonRpc.Notification
}

// ---------------------------------------------------------------------------------------------
// Status

/** One instance, as `status` shows it (no process ids: they mean nothing to a remote caller). */
export interface InstanceStatus {
  /** `<server>#<n>`. */
  readonly id: string
  readonly lane: Lane
  /** The scope key, rendered: `global`, `session:<id>` or `call:<n>`. */
  readonly key: string
  /** queued: waiting for a permit in a full lane; starting: being probed; ready: serving. */
  readonly state: "queued" | "starting" | "ready"
  readonly era?: Revision.Era
  readonly negotiated?: Revision.Revision
  readonly eraSource?: EraSource
  readonly wire?: Connection["wire"]
  /** Calls in flight. */
  readonly busy: number
  /** Calls served so far. */
  readonly calls: number
  readonly startedAt?: number
  /** Since when no call has been in flight (epoch ms); absent while busy. */
  readonly idleSince?: number
  readonly lastUsed: number
}

/** One lane of one server. */
export interface LaneStatus {
  readonly lane: Lane
  readonly max: number
  /** Instances holding a permit, those still closing included. */
  readonly live: number
  /** Keys waiting for a permit (each with its callers). */
  readonly queued: number
  /** Set while failed starts are being cooled down. */
  readonly cooldown?: { readonly failures: number; readonly lastFailure: string; readonly retryInMs: number }
}

/** One server's pool. */
export interface PoolStatus {
  readonly server: string
  readonly preference: Preference
  readonly lanes: ReadonlyArray<LaneStatus>
  readonly instances: ReadonlyArray<InstanceStatus>
  /** `follow`: why the legacy-only start was refused (remembered for the pool's lifetime). */
  readonly legacyRefused?: string
  /** The last report of the server's own session (the modern lane). */
  readonly report?: ProbeReport
}

/** What `restart` did. */
export interface RestartResult {
  readonly server: string
  readonly stopped: number
  /** Keys started again (by lane and rendered key). */
  readonly started: ReadonlyArray<{ readonly lane: Lane; readonly key: string }>
  /** Keys that did not start again, with the error. */
  readonly failed: ReadonlyArray<{ readonly lane: Lane; readonly key: string; readonly error: PoolError }>
}

/** How a call through `withSession` may be cut short besides its instance going away. */
export interface WithSessionOptions<E2> {
  /**
   * Called as the call begins with a way to end it at once with an error (a deadline, say);
   * answers how to let go of it, called when the call ends.
   */
  readonly cutShort?: (abort: Abort<E2>) => () => void
}

// ---------------------------------------------------------------------------------------------
// The service

/** Upstream sessions by server, scope key and era lane. */
export class Pool extends Context.Tag("@mcpx-fx/upstream/Pool")<Pool, {
  /**
   * Runs `use` with a session for this caller, starting one if needed, and releases it afterwards
   * (also on interruption, which does not close the instance). Fails with a PoolError when no
   * session can be had, or when the upstream crashes or is stopped during the call.
   */
  readonly withSession: <A, E, R, E2 = never>(
    server: PoolServer,
    caller: Caller,
    use: (session: Session) => Effect.Effect<A, E, R>,
    options?: WithSessionOptions<E2>
  ) => Effect.Effect<A, E | E2 | PoolError, R>
  /** Every server's instances, lanes and cooldowns, by server name. */
  readonly snapshot: Effect.Effect<ReadonlyArray<PoolStatus>>
  /** The last report of a server's own session (`mcpx-fx protocol`). */
  readonly report: (server: string) => Effect.Effect<Option.Option<ProbeReport>>
  /** The last report of every server's own session, by server name. */
  readonly reports: Effect.Effect<ReadonlyArray<ProbeReport>>
  /**
   * Stops every instance of the server (calls in flight fail as stopped), forgets its cooldowns
   * and a refused legacy-only start, then starts the non-`call` keys again unless `lazy`.
   */
  readonly restart: (server: PoolServer, options?: { readonly lazy?: boolean }) => Effect.Effect<RestartResult>
  /** Stops every instance of the server and forgets its pool; answers how many were stopped. */
  readonly stop: (server: string) => Effect.Effect<number>
  /** Lifecycle events from now on. */
  readonly events: Stream.Stream<PoolEvent>
  /** A subscription to lifecycle events that is in place once this returns. */
  readonly subscribe: Effect.Effect<Queue.Dequeue<PoolEvent>, never, Scope.Scope>
  /** A subscription, in place once this returns, to what every live instance sends outside its calls. */
  readonly notifications: Effect.Effect<Queue.Dequeue<UpstreamNotification>, never, Scope.Scope>
}>() {
  /** The Pool on a Prober; instances live until their pool, or the layer, is closed. */
  static readonly layer: Layer.Layer<Pool, never, Prober> = Layer.scoped(
    Pool,
    Effect.suspend(() => make)
  )
}

// ---------------------------------------------------------------------------------------------
// Internal state. Every change to it happens inside one synchronous block (Effect.sync), which
// no other fiber can interleave with; waiting happens outside those blocks.

interface Settings {
  readonly max: number
  readonly idleMs: number
  readonly startMs: number
  readonly cooldownBaseMs: number
  readonly cooldownCapMs: number
}

interface Key {
  readonly scope: ScopeKey
  /** Rendered; `call` keys get a fresh number per call. */
  readonly id: string
}

/** Why an instance is going away: a StopReason, or one of those that never started. */
type Retiring = StopReason | "start-failed" | "abandoned" | "saturated"

interface Instance {
  readonly id: string
  readonly key: Key
  /** Fails with the PoolError every caller of this instance gets when no session comes of it. */
  readonly ready: Deferred.Deferred<Started, PoolError>
  /** Set when calls in flight must end (a crash, or a deliberate stop), with what they end with. */
  gone: PoolError | undefined
  /** The calls using the session now, each ended at once when the instance is gone. */
  readonly users: Set<Abort<PoolError>>
  readonly stopped: Deferred.Deferred<void>
  /** Completed when the instance is given its permit, which is its scope. */
  readonly permitted: Deferred.Deferred<void>
  /** Owns the session and the permit; closing it gives the permit back. */
  scope: Scope.CloseableScope | undefined
  started: Started | undefined
  /** Set once `ready` has succeeded: a caller can then lease the session in place. */
  serving: Started | undefined
  startedAt: number | undefined
  starting: Fiber.RuntimeFiber<void> | undefined
  busy: number
  calls: number
  lastUsed: number
  idleSince: number | undefined
  /** An idle reaper is running for it (it follows `idleSince` itself, so calls need not restart it). */
  reaping: boolean
  retiring: Retiring | undefined
  crash: PoolError | undefined
}

/**
 * A lane's permits are counted by `holders` (at most `max`): one per live instance, held by its
 * scope until that has closed, and handed to `queued` instances oldest first.
 */
interface LaneState {
  readonly lane: Lane
  /** Instances serving a key (queued, starting or ready), by rendered key. */
  readonly instances: Map<string, Instance>
  /** Instances waiting for a permit. */
  readonly queued: Set<Instance>
  /** Instances holding a permit. */
  readonly holders: Set<Instance>
  /** Holders being closed: their permits are on the way back. */
  readonly retiring: Set<Instance>
  readonly reapers: FiberMap.FiberMap<string>
  failures: number
  cooldown: { readonly until: number; readonly reason: string; readonly retryInMs: number } | undefined
  lastReport: ProbeReport | undefined
}

interface ServerPool {
  readonly name: string
  readonly fingerprint: string
  readonly server: PoolServer
  readonly settings: Settings
  readonly scope: Scope.CloseableScope
  /** Starts, which must outlive the caller that triggered them. */
  readonly fibers: FiberSet.FiberSet
  readonly modern: LaneState
  readonly legacy: LaneState
  /** The era the server's own session last settled, if one has started. */
  settledEra: Revision.Era | undefined
  legacyRefused: string | undefined
  /** Reconfigured or stopped: no new caller finds it. */
  retired: boolean
  /** Stopped: nothing starts in it any more. */
  stopped: boolean
}

type Attempt<A> =
  | { readonly _tag: "Used"; readonly value: A }
  | { readonly _tag: "Unavailable"; readonly error: PoolError }
  | { readonly _tag: "Rejected" }

const toMillis = (d: Duration.DurationInput): number => Duration.toMillis(Duration.decode(d))

const resolveSettings = (partial: Partial<PoolSettings> | undefined): Settings => {
  const s = { ...defaultSettings, ...partial }
  return {
    max: Math.max(1, Math.floor(s.max)),
    idleMs: toMillis(s.idleTimeout),
    startMs: toMillis(s.startTimeout),
    cooldownBaseMs: toMillis(s.cooldownBase),
    cooldownCapMs: toMillis(s.cooldownCap)
  }
}

// A definition is immutable and callers hand the same one over call after call, so its canonical
// form is worked out once rather than serialized on every call.
const identities = new WeakMap<ServerDefinition, string>()
const identityOf = (def: ServerDefinition): string => {
  const known = identities.get(def)
  if (known !== undefined) return known
  const identity = canonicalJson(processIdentity(def))
  identities.set(def, identity)
  return identity
}

// What makes two pools for the same name different: how the process is started, the preference
// and the leasing knobs. Client info and probe timeouts do not warrant new processes.
const fingerprintOf = (server: PoolServer, settings: Settings): string =>
  `${server.probe.preference} ${settings.max} ${settings.idleMs} ${settings.startMs} ${settings.cooldownBaseMs} ${settings.cooldownCapMs} ${
    identityOf(server.definition)
  }`

const formatMs = (ms: number): string =>
  ms < 1000 ? `${Math.max(0, Math.round(ms))}ms` : `${Math.round(ms / 100) / 10}s`

const describeClosed = (tc: TransportClosed): string => {
  const exit = tc.exitCode !== undefined && tc.exitCode !== null ? ` (exit code ${tc.exitCode})` : ""
  const signal = tc.signal !== undefined && tc.signal !== null ? ` (signal ${tc.signal})` : ""
  return `${tc.reason}${exit}${signal}`
}

// Refusals that mean "this server does not do legacy-only sessions": remembered, not retried.
const refusalTags: ReadonlySet<string> = new Set([
  "ProbeFailed",
  "DisjointVersionsError",
  "VersionsExhaustedError",
  "UnacceptableVersionError"
])

const errorTag = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "_tag" in e && typeof e._tag === "string" ? e._tag : undefined

const errorMessage = (e: unknown): string =>
  e instanceof Error ? e.message : typeof e === "string" ? e : JSON.stringify(e) ?? String(e)

/** The list changes a modern session declares it can tell of, as a listen filter; none for legacy. */
const listenFilter = (session: Session): JsonObject | undefined => {
  if (session.era !== "modern") return undefined
  const declares = (feature: string) => {
    const f = session.capabilities[feature]
    return isJsonObject(f) && f.listChanged === true
  }
  const filter: JsonObject = {
    ...(declares("tools") ? { toolsListChanged: true } : {}),
    ...(declares("prompts") ? { promptsListChanged: true } : {}),
    ...(declares("resources") ? { resourcesListChanged: true } : {})
  }
  return Object.keys(filter).length === 0 ? undefined : filter
}

/** A start that took longer than `startTimeout`. */
class StartTimedOut extends Error {}

const make = Effect.gen(function*() {
  const prober = yield* Prober
  const oneShot = yield* OneShot
  // When the next start will be tried, as a PoolError names it (nothing under OneShot).
  const retryIn = (ms: number): { readonly retryInMs?: number } => (oneShot ? {} : { retryInMs: ms })
  const layerScope = yield* Effect.scope
  const events = yield* PubSub.sliding<PoolEvent>(1024)
  const notes = yield* PubSub.sliding<UpstreamNotification>(1024)
  // Closers run here rather than in a server's own fibers: stopping a pool closes its scope, and
  // the closers must not be interrupted by that.
  const housekeeping = yield* FiberSet.make()
  const pools = new Map<string, ServerPool>()
  const registry = yield* Effect.makeSemaphore(1)
  let instanceSeq = 0
  let callSeq = 0

  const publish = (event: PoolEvent) => PubSub.publish(events, event)

  const keyFor = (scope: ScopeKey): Key => {
    switch (scope.kind) {
      case "global":
        return { scope, id: "global" }
      case "session":
        return { scope, id: `session:${scope.id}` }
      case "call":
        return { scope, id: `call:${++callSeq}` }
    }
  }

  const stoppedError = (pool: ServerPool, lane: LaneState, why: string) =>
    new PoolError({ server: pool.name, lane: lane.lane, reason: "stopped", detail: why })

  // --- pools

  const makeLane = (lane: Lane, scope: Scope.Scope) =>
    Effect.gen(function*() {
      const state: LaneState = {
        lane,
        instances: new Map(),
        queued: new Set(),
        holders: new Set(),
        retiring: new Set(),
        reapers: yield* FiberMap.make<string>().pipe(Scope.extend(scope)),
        failures: 0,
        cooldown: undefined,
        lastReport: undefined
      }
      return state
    })

  const makePool = (server: PoolServer, settings: Settings, fingerprint: string) =>
    Effect.gen(function*() {
      const scope = yield* Scope.fork(layerScope, ExecutionStrategy.sequential)
      const pool: ServerPool = {
        name: server.definition.name,
        fingerprint,
        server,
        settings,
        scope,
        fibers: yield* FiberSet.make().pipe(Scope.extend(scope)),
        modern: yield* makeLane("modern", scope),
        legacy: yield* makeLane("legacy", scope),
        settledEra: undefined,
        legacyRefused: undefined,
        retired: false,
        stopped: false
      }
      return pool
    })

  // A caller hands over the same PoolServer call after call until something about it changes.
  const resolved = new WeakMap<PoolServer, { readonly settings: Settings; readonly fingerprint: string }>()
  const resolve = (server: PoolServer) => {
    const known = resolved.get(server)
    if (known !== undefined) return known
    const settings = resolveSettings(server.settings)
    const r = { settings, fingerprint: fingerprintOf(server, settings) }
    resolved.set(server, r)
    return r
  }

  const poolFor = (server: PoolServer): Effect.Effect<ServerPool> =>
    Effect.suspend(() => {
      const name = server.definition.name
      const { fingerprint, settings } = resolve(server)
      const found = pools.get(name)
      if (found !== undefined && found.fingerprint === fingerprint) return Effect.succeed(found)
      return registry.withPermits(1)(
        Effect.gen(function*() {
          const again = pools.get(name)
          if (again !== undefined && again.fingerprint === fingerprint) return again
          if (again !== undefined) {
            yield* Effect.logInfo(`upstream ${name} was reconfigured: its instances close once idle`)
            yield* retirePool(again)
          }
          const pool = yield* makePool(server, settings, fingerprint)
          pools.set(name, pool)
          return pool
        })
      )
    })

  const lanesOf = (pool: ServerPool): ReadonlyArray<LaneState> => [pool.modern, pool.legacy]

  // --- closing instances

  /** Marks an instance as going away and unlinks it, so no caller finds it; false if it already was. */
  const markRetiring = (lane: LaneState, inst: Instance, reason: Retiring): boolean => {
    if (inst.retiring !== undefined) return false
    inst.retiring = reason
    if (lane.instances.get(inst.key.id) === inst) lane.instances.delete(inst.key.id)
    lane.queued.delete(inst)
    if (lane.holders.has(inst)) lane.retiring.add(inst)
    return true
  }

  /** Ends the instance's calls in flight with `error`; only the first reason counts. */
  const goneWith = (inst: Instance, error: PoolError) =>
    Effect.sync(() => {
      if (inst.gone !== undefined) return
      inst.gone = error
      const users = [...inst.users]
      inst.users.clear()
      for (const abort of users) abort(error)
    })

  /** Closes a marked instance in the background; `inst.stopped` completes when it is gone. */
  const spawnCloser = (pool: ServerPool, lane: LaneState, inst: Instance) =>
    FiberSet.run(
      housekeeping,
      Effect.gen(function*() {
        const reason = inst.retiring ?? "stop"
        yield* goneWith(inst, stoppedError(pool, lane, `reason: ${reason}`))
        yield* FiberMap.remove(lane.reapers, inst.id)
        if (inst.starting !== undefined) yield* Fiber.interrupt(inst.starting)
        if (inst.scope !== undefined) yield* Scope.close(inst.scope, Exit.void)
        if (inst.started !== undefined && reason !== "start-failed" && reason !== "abandoned" && reason !== "saturated") {
          const now = yield* Clock.currentTimeMillis
          yield* Effect.logInfo(`stopped ${inst.id} (${reason})`)
          yield* publish({
            type: "server.stop",
            server: pool.name,
            lane: lane.lane,
            instance: inst.id,
            key: inst.key.id,
            reason,
            calls: inst.calls,
            uptimeMs: now - (inst.startedAt ?? now),
            at: now
          })
        }
        yield* Deferred.succeed(inst.stopped, undefined)
      }).pipe(
        // Whoever marked the instance relies on this fiber to finish the job.
        Effect.uninterruptible,
        Effect.annotateLogs({ server: pool.name, lane: lane.lane })
      )
    )

  /** Retires every instance of the pool and waits until they are gone. */
  const retireAll = (pool: ServerPool, reason: StopReason) =>
    Effect.gen(function*() {
      const marked = yield* Effect.sync(() =>
        lanesOf(pool).flatMap((lane) =>
          [...lane.instances.values()].filter((inst) => markRetiring(lane, inst, reason)).map((inst) => ({ lane, inst }))
        )
      )
      yield* Effect.forEach(marked, ({ inst, lane }) => spawnCloser(pool, lane, inst), { discard: true })
      yield* Effect.forEach(marked, ({ inst }) => Deferred.await(inst.stopped), { discard: true })
      return marked
    })

  // A reconfigured pool serves no new caller; its instances close as soon as they are idle.
  const retirePool = (pool: ServerPool) =>
    Effect.gen(function*() {
      const idle = yield* Effect.sync(() => {
        pool.retired = true
        return lanesOf(pool).flatMap((lane) =>
          [...lane.instances.values()]
            .filter((inst) => inst.busy === 0 && markRetiring(lane, inst, "reconfigured"))
            .map((inst) => ({ lane, inst }))
        )
      })
      yield* Effect.forEach(idle, ({ inst, lane }) => spawnCloser(pool, lane, inst), { discard: true })
    })

  // --- crashes

  /** The instance's connection closed under a call or on its own: drop it, once. */
  const noteCrash = (pool: ServerPool, lane: LaneState, inst: Instance, tc: TransportClosed) =>
    Effect.gen(function*() {
      if (inst.crash !== undefined) return inst.crash
      if (inst.retiring !== undefined) return stoppedError(pool, lane, `reason: ${inst.retiring}`)
      const tail = tc.stderrTail ?? (inst.started !== undefined ? yield* inst.started.session.stderrTail : "")
      const error = new PoolError({
        server: pool.name,
        lane: lane.lane,
        reason: "crashed",
        detail: describeClosed(tc),
        stderrTail: tail
      })
      const first = yield* Effect.sync(() => {
        if (inst.crash !== undefined || inst.retiring !== undefined) return false
        inst.crash = error
        return markRetiring(lane, inst, "crash")
      })
      if (!first) return inst.crash ?? stoppedError(pool, lane, `reason: ${inst.retiring ?? "stop"}`)
      yield* goneWith(inst, error)
      yield* Effect.logWarning(error.message)
      yield* publish({
        type: "server.crash",
        server: pool.name,
        lane: lane.lane,
        instance: inst.id,
        key: inst.key.id,
        reason: error.detail,
        stderrTail: tail,
        at: yield* Clock.currentTimeMillis
      })
      yield* spawnCloser(pool, lane, inst)
      return error
    }).pipe(Effect.uninterruptible)

  // --- starting instances

  const coolingError = (pool: ServerPool, lane: LaneState, now: number): Option.Option<PoolError> => {
    if (pool.stopped) return Option.some(stoppedError(pool, lane, "reason: stop"))
    const c = lane.cooldown
    return c !== undefined && now < c.until
      ? Option.some(
        new PoolError({ server: pool.name, lane: lane.lane, reason: "cooling-down", detail: c.reason, ...retryIn(c.until - now) })
      )
      : Option.none()
  }

  const lruIdle = (lane: LaneState): Instance | undefined => {
    let oldest: Instance | undefined
    for (const inst of lane.instances.values()) {
      if (inst.busy > 0 || inst.started === undefined) continue
      if (oldest === undefined || inst.lastUsed < oldest.lastUsed) oldest = inst
    }
    return oldest
  }

  /** Whether a key waits for a permit that no closing instance is about to return. */
  const starved = (lane: LaneState) => lane.queued.size > lane.retiring.size

  const startFailed = (pool: ServerPool, lane: LaneState, inst: Instance, error: unknown) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const reason = errorMessage(error)
      const refused = lane.lane === "legacy" && refusalTags.has(errorTag(error) ?? "")
      const failure = yield* Effect.sync((): PoolError | undefined => {
        if (!markRetiring(lane, inst, "start-failed")) return undefined
        if (refused) {
          pool.legacyRefused = reason
          return new PoolError({
            server: pool.name,
            lane: lane.lane,
            reason: "start-failed",
            detail: `${reason} (remembered until the pool restarts)`
          })
        }
        // A login happens elsewhere (`mcpx-fx auth login`), and the next call must see it at once.
        if (errorTag(error) === "AuthorizationRequired") {
          return new PoolError({ server: pool.name, lane: lane.lane, reason: "start-failed", detail: reason, authorizationRequired: true })
        }
        lane.failures += 1
        const retryInMs = Math.min(pool.settings.cooldownBaseMs * 2 ** (lane.failures - 1), pool.settings.cooldownCapMs)
        lane.cooldown = { until: now + retryInMs, reason, retryInMs }
        return new PoolError({ server: pool.name, lane: lane.lane, reason: "start-failed", detail: reason, ...retryIn(retryInMs) })
      })
      // Retired while starting: its callers learn that it was stopped.
      if (failure === undefined) return
      if (refused) {
        yield* Effect.logWarning(
          `the legacy-only session was refused (${reason}); legacy callers share the server's own session from now on`
        )
      } else if (oneShot) yield* Effect.logDebug(`start failed (${reason})`)
      else yield* Effect.logWarning(`start failed (${reason}); next attempt in ${formatMs(failure.retryInMs ?? 0)}`)
      yield* publish({
        type: "server.start.failed",
        server: pool.name,
        lane: lane.lane,
        key: inst.key.id,
        reason,
        failures: lane.failures,
        ...(failure.retryInMs !== undefined ? { retryInMs: failure.retryInMs } : {}),
        at: now
      })
      yield* Deferred.fail(inst.ready, failure)
      yield* spawnCloser(pool, lane, inst)
    }).pipe(Effect.uninterruptible)

  const started = (pool: ServerPool, lane: LaneState, inst: Instance, scope: Scope.Scope, result: Started, began: number) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const { report, session } = result
      const evict = yield* Effect.sync(() => {
        inst.started = result
        inst.startedAt = now
        lane.failures = 0
        lane.cooldown = undefined
        lane.lastReport = report
        if (lane.lane === "modern") pool.settledEra = report.era
        // Its callers have all left, and another key waits for its permit.
        return inst.busy === 0 && starved(lane) && markRetiring(lane, inst, "evicted")
      })
      yield* Effect.logInfo(
        `started ${inst.id} for ${inst.key.id}: ${report.era} ${report.negotiated} (${report.eraSource}) in ${now - began}ms`
      )
      // In place before the first caller gets the session, so nothing a call causes is missed.
      const untied = yield* Scope.extend(session.subscribe, scope)
      yield* Queue.take(untied).pipe(
        Effect.flatMap((notification) =>
          PubSub.publish(notes, { server: pool.name, lane: lane.lane, instance: inst.id, key: inst.key.id, notification })
        ),
        Effect.forever,
        Effect.interruptible,
        Effect.forkIn(scope)
      )
      // A modern upstream tells of list changes only on a subscriptions/listen, held open for the
      // instance's life; a legacy one sends them unasked. Its notifications join the untied ones.
      const filter = listenFilter(session)
      if (filter !== undefined) {
        yield* session.request("subscriptions/listen", { notifications: filter }).pipe(
          Effect.catchAll((e) => Effect.logDebug(`${inst.id}: subscriptions/listen ended: ${e.message}`)),
          Effect.interruptible,
          Effect.forkIn(scope)
        )
      }
      yield* Deferred.succeed(inst.ready, result)
      inst.serving = result
      yield* publish({
        type: "server.start",
        server: pool.name,
        lane: lane.lane,
        instance: inst.id,
        key: inst.key.id,
        era: report.era,
        negotiated: report.negotiated,
        eraSource: report.eraSource,
        wire: report.wire,
        durationMs: now - began,
        at: now
      })
      if (report.stale && Option.isSome(report.cached)) {
        yield* publish({
          type: "server.era.stale",
          server: pool.name,
          instance: inst.id,
          cached: report.cached.value.era,
          cachedVersion: report.cached.value.version,
          cachedAt: report.cached.value.at,
          era: report.era,
          negotiated: report.negotiated,
          at: now
        })
      }
      // The watcher lives in the instance's scope, so a deliberate close ends it before the
      // connection reports being closed.
      yield* session.closed.pipe(
        Effect.flatMap((tc) => noteCrash(pool, lane, inst, tc)),
        Effect.interruptible,
        Effect.forkIn(scope)
      )
      if (evict) yield* spawnCloser(pool, lane, inst)
    }).pipe(Effect.uninterruptible)

  /**
   * Hands free permits to queued instances, oldest first. A permit is the instance's scope, made
   * and recorded here in one uninterruptible step that no waiting fiber takes part in, so however
   * a start is interrupted, the permit has an owner whose closing gives it back (and passes it on).
   */
  const grant = (pool: ServerPool, lane: LaneState): Effect.Effect<void> =>
    Effect.gen(function*() {
      while (!pool.stopped && lane.queued.size > 0 && lane.holders.size < pool.settings.max) {
        let holder: Instance | undefined
        let closed = false
        const scope = yield* Scope.fork(pool.scope, ExecutionStrategy.sequential)
        // Added first, so it runs last: the permit returns once the process is gone.
        yield* Scope.addFinalizer(
          scope,
          Effect.suspend(() => {
            closed = true
            if (holder === undefined) return Effect.void
            lane.holders.delete(holder)
            lane.retiring.delete(holder)
            return grant(pool, lane)
          })
        )
        // A scope forked from a closed one is closed already: the pool is going away.
        if (closed) return
        holder = yield* Effect.sync(() => {
          const next = lane.queued.values().next()
          if (next.done === true || pool.stopped || lane.holders.size >= pool.settings.max) return undefined
          lane.queued.delete(next.value)
          lane.holders.add(next.value)
          next.value.scope = scope
          return next.value
        })
        if (holder === undefined) return yield* Scope.close(scope, Exit.void)
        yield* Deferred.succeed(holder.permitted, undefined)
      }
    }).pipe(Effect.uninterruptible)

  /**
   * Waits for a permit (bounded by startTimeout: the lane is saturated), then starts the session.
   * Forked from a claim, which runs with interruption masked: the work is made interruptible
   * inside the `ensuring`, so even a start interrupted before its first step tells its callers.
   */
  const startInstance = (pool: ServerPool, lane: LaneState, inst: Instance) =>
    Effect.interruptible(Effect.gen(function*() {
      yield* grant(pool, lane)
      yield* Deferred.await(inst.permitted).pipe(Effect.timeoutOption(pool.settings.startMs))
      const scope = yield* Effect.uninterruptible(Effect.gen(function*() {
        // Read from the instance rather than the wait: a permit granted as the wait timed out is kept.
        if (inst.scope !== undefined) return inst.scope
        // Retired while it waited: whoever retired it closes it.
        if (!markRetiring(lane, inst, "saturated")) return undefined
        const busy = [...lane.instances.values()].filter((i) => i.busy > 0 && i !== inst).map((i) => i.key.id)
        const error = new PoolError({
          server: pool.name,
          lane: lane.lane,
          reason: "saturated",
          detail: `the ${lane.lane} lane is saturated: its ${pool.settings.max} instance(s) stayed busy for ${
            formatMs(pool.settings.startMs)
          }${busy.length > 0 ? ` (${busy.join(", ")})` : ""}`
        })
        yield* Deferred.fail(inst.ready, error)
        yield* Deferred.succeed(inst.stopped, undefined)
        return undefined
      }))
      if (scope === undefined) return
      const began = yield* Clock.currentTimeMillis
      // A start failed while this key waited for its permit.
      const cooling = coolingError(pool, lane, began)
      if (Option.isSome(cooling)) {
        return yield* Effect.uninterruptible(Effect.gen(function*() {
          if (!markRetiring(lane, inst, "start-failed")) return
          yield* Deferred.fail(inst.ready, cooling.value)
          yield* spawnCloser(pool, lane, inst)
        }))
      }
      const options: ProbeOptions = lane.lane === "legacy"
        ? { ...pool.server.probe, preference: "force-initialize" }
        : pool.server.probe
      const exit = yield* prober.start(pool.server.definition, options).pipe(
        Scope.extend(scope),
        Effect.timeoutFail({
          duration: pool.settings.startMs,
          onTimeout: () => new StartTimedOut(`it did not start within ${formatMs(pool.settings.startMs)}`)
        }),
        Effect.exit
      )
      if (Exit.isSuccess(exit)) return yield* started(pool, lane, inst, scope, exit.value, began)
      const failure = Cause.failureOrCause(exit.cause)
      yield* startFailed(pool, lane, inst, Either.isLeft(failure) ? failure.left : new Error(Cause.pretty(failure.right)))
    })).pipe(
      // However the start ended (interrupted by a stop, or retired under it), its callers are told.
      Effect.ensuring(Effect.suspend(() => {
        inst.starting = undefined
        return Deferred.fail(inst.ready, stoppedError(pool, lane, `reason: ${inst.retiring ?? "stop"}`))
      })),
      Effect.annotateLogs({ server: pool.name, lane: lane.lane, instance: inst.id })
    )

  // --- claiming and releasing

  const takeLease = (inst: Instance, now: number) => {
    inst.busy += 1
    inst.calls += 1
    inst.lastUsed = now
    inst.idleSince = undefined
  }

  /**
   * Leases the key's instance, registering (and starting) a new one when there is none, so that
   * concurrent first callers share one start. A new key in a full lane evicts the lane's
   * least-recently-used idle instance; with none idle, its start waits for a permit.
   */
  const claim = (pool: ServerPool, lane: LaneState, key: Key): Effect.Effect<Instance, PoolError> =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const fiberId = yield* Effect.fiberId
      const step = yield* Effect.sync(() => {
        const existing = lane.instances.get(key.id)
        if (existing !== undefined) {
          takeLease(existing, now)
          return { _tag: "Shared", inst: existing } as const
        }
        const cooling = coolingError(pool, lane, now)
        if (Option.isSome(cooling)) return { _tag: "Cooling", error: cooling.value } as const
        const inst: Instance = {
          id: `${pool.name}#${++instanceSeq}`,
          key,
          ready: Deferred.unsafeMake(fiberId),
          gone: undefined,
          users: new Set(),
          stopped: Deferred.unsafeMake(fiberId),
          permitted: Deferred.unsafeMake(fiberId),
          scope: undefined,
          started: undefined,
          serving: undefined,
          startedAt: undefined,
          starting: undefined,
          busy: 0,
          calls: 0,
          lastUsed: now,
          idleSince: undefined,
          reaping: false,
          retiring: undefined,
          crash: undefined
        }
        takeLease(inst, now)
        lane.instances.set(key.id, inst)
        lane.queued.add(inst)
        const victim = lane.holders.size >= pool.settings.max && starved(lane) ? lruIdle(lane) : undefined
        if (victim !== undefined) markRetiring(lane, victim, "evicted")
        return { _tag: "Created", inst, victim } as const
      })
      if (step._tag === "Shared") return step.inst
      if (step._tag === "Cooling") return yield* step.error
      if (step.victim !== undefined) yield* spawnCloser(pool, lane, step.victim)
      const inst = step.inst
      // The start is the pool's, not this caller's: interrupting the caller leaves it running.
      const fiber = yield* FiberSet.run(pool.fibers, startInstance(pool, lane, inst))
      if (!(yield* Deferred.isDone(inst.ready))) inst.starting = fiber
      return inst
    })

  // One reaper per idle stretch of calls: it sleeps until the latest `idleSince` plus the idle
  // timeout, rather than a fiber being forked (and the last interrupted) on every release. It
  // leaves when the instance is busy at its wake-up; the next release starts another.
  const reaper = (pool: ServerPool, lane: LaneState, inst: Instance) =>
    Effect.gen(function*() {
      for (;;) {
        const now = yield* Clock.currentTimeMillis
        const step = yield* Effect.sync(() => {
          // Measured from when the instance went idle, however late this fiber gets to run.
          const remaining = inst.busy === 0 && inst.idleSince !== undefined ? inst.idleSince + pool.settings.idleMs - now : 0
          if (remaining > 0) return remaining
          inst.reaping = false
          return inst.busy === 0 && inst.idleSince !== undefined && markRetiring(lane, inst, "idle")
        })
        if (typeof step === "number") yield* Effect.sleep(step)
        else return step ? yield* spawnCloser(pool, lane, inst) : undefined
      }
    })

  const release = (pool: ServerPool, lane: LaneState, inst: Instance) =>
    Effect.clockWith((clock) => {
      const now = clock.unsafeCurrentTimeMillis()
      const next = (() => {
        inst.busy -= 1
        inst.lastUsed = now
        if (inst.busy > 0 || inst.retiring !== undefined) return "none" as const
        inst.idleSince = now
        const close = (reason: Retiring) => (markRetiring(lane, inst, reason) ? "close" as const : "none" as const)
        // Nobody wants it any more and it has not even got a permit yet.
        if (lane.queued.has(inst)) return close("abandoned")
        if (inst.key.scope.kind === "call") return close("released")
        if (pool.retired) return close("reconfigured")
        // Another key waits for a permit and every other instance is busy: this one is the LRU idle.
        if (inst.started !== undefined && starved(lane)) return close("evicted")
        if (inst.reaping) return "none" as const
        inst.reaping = true
        return "reap" as const
      })()
      if (next === "close") return Effect.asVoid(spawnCloser(pool, lane, inst))
      if (next === "reap") return Effect.asVoid(FiberMap.run(lane.reapers, inst.id, Effect.interruptible(reaper(pool, lane, inst))))
      return Effect.void
    })

  // The caller's work, ended at once (through `abort`) when the upstream crashes or is stopped
  // under it. A TransportClosed from the session becomes an error that names the server.
  const runUse = <A, E, R>(
    pool: ServerPool,
    lane: LaneState,
    inst: Instance,
    session: Session,
    use: (session: Session) => Effect.Effect<A, E, R>,
    abort: Abort<PoolError>
  ): Effect.Effect<A, E | PoolError, R> =>
    Effect.suspend(() => {
      if (inst.gone !== undefined) return Effect.fail(inst.gone)
      inst.users.add(abort)
      return Effect.catchAll(use(session), (e): Effect.Effect<never, E | PoolError> =>
        e instanceof TransportClosed ? Effect.flatMap(noteCrash(pool, lane, inst, e), Effect.fail) : Effect.fail(e)).pipe(
          Effect.ensuring(Effect.sync(() => void inst.users.delete(abort)))
        )
    })

  /**
   * One lane's try: lease the key's instance, wait for its session, and run `use` unless `accept`
   * turns the session down. Not getting a session is a value, not an error, so the caller can fall
   * back to another lane without mistaking a failure of `use` for it.
   */
  const tryLane = <A, E, R>(
    pool: ServerPool,
    lane: LaneState,
    key: Key,
    use: (session: Session) => Effect.Effect<A, E, R>,
    abort: Abort<PoolError>,
    accept?: (session: Session) => boolean
  ): Effect.Effect<Attempt<A>, E | PoolError, R> =>
    Effect.clockWith((clock) => {
      // Nearly every call finds its key's instance up and serving: it is leased in place, without
      // the claim's bookkeeping for starts and evictions.
      const serving = lane.instances.get(key.id)
      const started = serving?.serving
      if (serving === undefined || started === undefined || (accept !== undefined && !accept(started.session))) {
        return leaseAndUse(pool, lane, key, use, abort, accept)
      }
      return Effect.uninterruptibleMask((restore) => {
        takeLease(serving, clock.unsafeCurrentTimeMillis())
        return restore(runUse(pool, lane, serving, started.session, use, abort)).pipe(
          Effect.exit,
          Effect.flatMap((exit) => Effect.zipRight(release(pool, lane, serving), Effect.map(exit, (value): Attempt<A> => ({ _tag: "Used", value }))))
        )
      })
    })

  const leaseAndUse = <A, E, R>(
    pool: ServerPool,
    lane: LaneState,
    key: Key,
    use: (session: Session) => Effect.Effect<A, E, R>,
    abort: Abort<PoolError>,
    accept?: (session: Session) => boolean
  ): Effect.Effect<Attempt<A>, E | PoolError, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const claimed = yield* Effect.either(claim(pool, lane, key))
        if (Either.isLeft(claimed)) return { _tag: "Unavailable", error: claimed.left } as Attempt<A>
        const inst = claimed.right
        const exit = yield* restore(
          Effect.gen(function*() {
            const ready = yield* Effect.either(Deferred.await(inst.ready))
            if (Either.isLeft(ready)) return { _tag: "Unavailable", error: ready.left } as Attempt<A>
            const session = ready.right.session
            if (accept !== undefined && !accept(session)) return { _tag: "Rejected" } as Attempt<A>
            const value = yield* runUse(pool, lane, inst, session, use, abort)
            return { _tag: "Used", value } as Attempt<A>
          })
        ).pipe(Effect.exit)
        yield* release(pool, lane, inst)
        return yield* exit
      })
    )

  const settle = <A>(attempt: Attempt<A>, pool: ServerPool): Effect.Effect<A, PoolError> => {
    switch (attempt._tag) {
      case "Used":
        return Effect.succeed(attempt.value)
      case "Unavailable":
        return Effect.fail(attempt.error)
      case "Rejected":
        return Effect.dieMessage(`${pool.name}: a session was turned down with nowhere else to go`)
    }
  }

  // A legacy-only session that cannot be had is no reason to fail a call the server's own session can serve.
  const legacyFallsBack = (e: PoolError): boolean => e.reason === "start-failed" || e.reason === "cooling-down"

  const withSession = <A, E, R, E2 = never>(
    server: PoolServer,
    caller: Caller,
    use: (session: Session) => Effect.Effect<A, E, R>,
    options?: WithSessionOptions<E2>
  ): Effect.Effect<A, E | E2 | PoolError, R> =>
    abortable<A, E | PoolError, R, E2 | PoolError>((abort) => {
      const cutShort = options?.cutShort
      if (cutShort === undefined) return routed(server, caller, use, abort)
      return Effect.suspend(() => {
        const cancel = cutShort(abort)
        return Effect.ensuring(routed(server, caller, use, abort), Effect.sync(cancel))
      })
    })

  const routed = <A, E, R>(
    server: PoolServer,
    caller: Caller,
    use: (session: Session) => Effect.Effect<A, E, R>,
    abort: Abort<PoolError>
  ): Effect.Effect<A, E | PoolError, R> =>
    Effect.gen(function*() {
      const pool = yield* poolFor(server)
      const key = keyFor(caller.key)
      const onModern = Effect.flatMap(tryLane(pool, pool.modern, key, use, abort), (a) => settle(a, pool))
      if (requestedLane(server.probe.preference, caller.revision) === "modern") return yield* onModern

      const onLegacy = Effect.flatMap(tryLane(pool, pool.legacy, key, use, abort), (a) => {
        if (a._tag === "Unavailable" && legacyFallsBack(a.error)) {
          return Effect.zipRight(
            Effect.logDebug(`${pool.name}: no legacy-only session (${a.error.detail}); using the server's own session`),
            onModern
          )
        }
        return settle(a, pool)
      })
      const now = yield* Clock.currentTimeMillis
      const route = yield* Effect.sync(() => {
        if (pool.legacyRefused !== undefined || pool.settledEra === "legacy") return "modern" as const
        if (Option.isSome(coolingError(pool, pool.legacy, now))) return "modern" as const
        return pool.settledEra === "modern" ? "legacy" as const : "discover" as const
      })
      switch (route) {
        case "modern":
          return yield* onModern
        case "legacy":
          return yield* onLegacy
        case "discover":
          // The server's own session has to exist anyway; if it settles legacy, it is the one.
          return yield* Effect.flatMap(
            tryLane(pool, pool.modern, key, use, abort, (s) => s.era === "legacy"),
            (a) => (a._tag === "Used" ? Effect.succeed(a.value) : onLegacy)
          )
      }
    })

  // --- status and control

  const instanceStatus = (lane: LaneState, inst: Instance): InstanceStatus => {
    const s = inst.started?.session
    return {
      id: inst.id,
      lane: lane.lane,
      key: inst.key.id,
      state: s !== undefined ? "ready" : lane.queued.has(inst) ? "queued" : "starting",
      ...(s !== undefined ? { era: s.era, negotiated: s.negotiated, eraSource: s.eraSource, wire: s.wire } : {}),
      busy: inst.busy,
      calls: inst.calls,
      ...(inst.startedAt !== undefined ? { startedAt: inst.startedAt } : {}),
      ...(inst.idleSince !== undefined ? { idleSince: inst.idleSince } : {}),
      lastUsed: inst.lastUsed
    }
  }

  const laneStatus = (pool: ServerPool, lane: LaneState, now: number): LaneStatus => ({
    lane: lane.lane,
    max: pool.settings.max,
    live: lane.holders.size,
    queued: lane.queued.size,
    ...(lane.cooldown !== undefined && now < lane.cooldown.until
      ? { cooldown: { failures: lane.failures, lastFailure: lane.cooldown.reason, retryInMs: lane.cooldown.until - now } }
      : {})
  })

  const poolStatus = (pool: ServerPool, now: number): PoolStatus => {
    const lanes = pool.server.probe.preference === "follow" ? [pool.modern, pool.legacy] : [pool.modern]
    return {
      server: pool.name,
      preference: pool.server.probe.preference,
      lanes: lanes.map((lane) => laneStatus(pool, lane, now)),
      instances: lanes.flatMap((lane) => [...lane.instances.values()].map((inst) => instanceStatus(lane, inst))),
      ...(pool.legacyRefused !== undefined ? { legacyRefused: pool.legacyRefused } : {}),
      ...(pool.modern.lastReport !== undefined ? { report: pool.modern.lastReport } : {})
    }
  }

  const sortedPools = () => [...pools.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))

  const snapshot = Effect.map(
    Clock.currentTimeMillis,
    (now): ReadonlyArray<PoolStatus> => sortedPools().map((pool) => poolStatus(pool, now))
  )

  const reports = Effect.sync((): ReadonlyArray<ProbeReport> =>
    sortedPools().flatMap((pool) => (pool.modern.lastReport !== undefined ? [pool.modern.lastReport] : []))
  )

  const report = (server: string) => Effect.sync(() => Option.fromNullable(pools.get(server)?.modern.lastReport))

  const stop = Effect.fn("Pool.stop")(function*(server: string) {
    const pool = pools.get(server)
    if (pool === undefined) return 0
    pools.delete(server)
    pool.retired = true
    pool.stopped = true
    const stopped = yield* retireAll(pool, "stop")
    yield* Scope.close(pool.scope, Exit.void)
    return stopped.filter(({ inst }) => inst.started !== undefined).length
  })

  const restart = Effect.fn("Pool.restart")(function*(server: PoolServer, options?: { readonly lazy?: boolean }) {
    const pool = yield* poolFor(server)
    const stopped = yield* retireAll(pool, "restart")
    yield* Effect.sync(() => {
      for (const lane of lanesOf(pool)) {
        lane.failures = 0
        lane.cooldown = undefined
      }
      pool.legacyRefused = undefined
    })
    const again = options?.lazy === true ? [] : stopped.filter(({ inst }) => inst.key.scope.kind !== "call")
    const results = yield* Effect.forEach(
      again,
      ({ inst, lane }) =>
        tryLane(pool, lane, inst.key, () => Effect.void, () => {}).pipe(
          Effect.catchAll((error) => Effect.succeed<Attempt<void>>({ _tag: "Unavailable", error })),
          Effect.map((attempt) => ({ lane: lane.lane, key: inst.key.id, attempt }))
        ),
      { concurrency: "unbounded" }
    )
    const result: RestartResult = {
      server: pool.name,
      stopped: stopped.filter(({ inst }) => inst.started !== undefined).length,
      started: results.filter((r) => r.attempt._tag === "Used").map(({ key, lane }) => ({ lane, key })),
      failed: results.flatMap(({ attempt, key, lane }) =>
        attempt._tag === "Unavailable" ? [{ lane, key, error: attempt.error }] : []
      )
    }
    return result
  })

  return Pool.of({
    withSession,
    snapshot,
    report,
    reports,
    restart,
    stop,
    events: Stream.fromPubSub(events),
    subscribe: PubSub.subscribe(events),
    notifications: PubSub.subscribe(notes)
  })
})
