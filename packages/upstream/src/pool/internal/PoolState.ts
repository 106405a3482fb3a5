/**
 * The Pool's internal state: per server a pool of two lanes, per lane its instances, permits and
 * cooldown, and the pure functions that read or mark that state. Every change to it happens inside
 * one synchronous block (Effect.sync), which no other fiber can interleave with; waiting happens
 * outside those blocks.
 */
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import type * as Revision from "@mcpx-fx/protocol/Revision"
import type * as Cause from "effect/Cause"
import type * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import type * as Fiber from "effect/Fiber"
import type * as FiberMap from "effect/FiberMap"
import type * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { Abort } from "@mcpx-fx/cancel/Abortable"
import type { Members } from "@mcpx-fx/cancel/InFlight"
import { canonicalJson } from "../../internal/canonicalJson.js"
import { PoolError, type StopReason } from "../PoolEvents.js"
import { defaultSettings, type Lane, type PoolServer, type PoolSettings, type ScopeKey } from "../PoolModel.js"
import type { InstanceStatus, LaneStatus, PoolStatus } from "../PoolStatus.js"
import type { ProbeReport, Started } from "../../era/ProbeModel.js"
import { processIdentity, type ServerDefinition } from "../../ServerDefinition.js"
import type { Session } from "../../session/SessionModel.js"
import type { TransportClosed } from "../../transport/Transport.js"

export interface Settings {
  readonly max: number
  readonly idleMs: number
  readonly startMs: number
  readonly cooldownBaseMs: number
  readonly cooldownCapMs: number
  readonly hangCheckMs: number
  readonly pingTimeoutMs: number
}

export interface Key {
  readonly scope: ScopeKey
  /** Rendered; `call` keys get a fresh number per call. */
  readonly id: string
}

/** Why an instance is going away: a StopReason, or one of those that never started. */
export type Retiring = StopReason | "start-failed" | "abandoned" | "saturated"

export interface Instance {
  readonly id: string
  readonly key: Key
  /** Fails with the PoolError every caller of this instance gets when no session comes of it. */
  readonly ready: Deferred.Deferred<Started, PoolError>
  /** Set when calls in flight must end (a crash, or a deliberate stop), with what they end with. */
  gone: PoolError | undefined
  /** The calls using the session now, each ended at once when the instance is gone. */
  readonly users: Members<Abort<PoolError>>
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
  /** A ping is out to learn whether the silent server is hung. */
  pinging: boolean
}

/**
 * A lane's permits are counted by `holders` (at most `max`): one per live instance, held by its
 * scope until that has closed, and handed to `queued` instances oldest first.
 */
export interface LaneState {
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
  /** An instance was dropped because its era proved wrong: the next start probes afresh. */
  reprobe: boolean
}

export interface ServerPool {
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
  /** The pool's user ends with one command (OneShot): failed starts name no retry time. */
  readonly oneShot: boolean
  /** Reconfigured or stopped: no new caller finds it. */
  retired: boolean
  /** Stopped: nothing starts in it any more. */
  stopped: boolean
}

export type Attempt<A> =
  | { readonly _tag: "Used"; readonly value: A }
  | { readonly _tag: "Unavailable"; readonly error: PoolError }
  | { readonly _tag: "Rejected" }
  /** `use` failed on a session whose era is in doubt; the instance is gone and one more try may be made. */
  | { readonly _tag: "Doubted"; readonly cause: Cause.Cause<unknown> }

export const toMillis = (d: Duration.DurationInput): number => Duration.toMillis(Duration.decode(d))

export const resolveSettings = (partial: Partial<PoolSettings> | undefined): Settings => {
  const s = { ...defaultSettings, ...partial }
  return {
    max: Math.max(1, Math.floor(s.max)),
    idleMs: toMillis(s.idleTimeout),
    startMs: toMillis(s.startTimeout),
    cooldownBaseMs: toMillis(s.cooldownBase),
    cooldownCapMs: toMillis(s.cooldownCap),
    hangCheckMs: toMillis(s.hangCheck),
    pingTimeoutMs: toMillis(s.pingTimeout)
  }
}

// A definition is immutable and callers hand the same one over call after call, so its canonical
// form is worked out once rather than serialized on every call.
export const identities = new WeakMap<ServerDefinition, string>()
export const identityOf = (def: ServerDefinition): string => {
  const known = identities.get(def)
  if (known !== undefined) return known
  const identity = canonicalJson(processIdentity(def))
  identities.set(def, identity)
  return identity
}

// What makes two pools for the same name different: how the process is started, the preference
// and the leasing knobs. Client info and probe timeouts do not warrant new processes.
export const fingerprintOf = (server: PoolServer, settings: Settings): string =>
  `${server.probe.preference} ${settings.max} ${settings.idleMs} ${settings.startMs} ${settings.cooldownBaseMs} ${settings.cooldownCapMs} ${
    identityOf(server.definition)
  }`

export const describeClosed = (tc: TransportClosed): string => {
  const exit = tc.exitCode !== undefined && tc.exitCode !== null ? ` (exit code ${tc.exitCode})` : ""
  const signal = tc.signal !== undefined && tc.signal !== null ? ` (signal ${tc.signal})` : ""
  return `${tc.reason}${exit}${signal}`
}

// Refusals that mean "this server does not do legacy-only sessions": remembered, not retried.
export const refusalTags: ReadonlySet<string> = new Set([
  "ProbeFailed",
  "DisjointVersionsError",
  "VersionsExhaustedError",
  "UnacceptableVersionError"
])

export const errorTag = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "_tag" in e && typeof e._tag === "string" ? e._tag : undefined

export const errorMessage = (e: unknown): string => e instanceof Error ? e.message : typeof e === "string" ? e : JSON.stringify(e) ?? String(e)

/** The list changes a modern session declares it can tell of, as a listen filter; none for legacy. */
export const listenFilter = (session: Session): JsonObject | undefined => {
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
export class StartTimedOut extends Error {}

/** The error every caller of a stopped instance gets. */
export const stoppedError = (pool: ServerPool, lane: LaneState, why: string) =>
  new PoolError({ server: pool.name, lane: lane.lane, reason: "stopped", detail: why })

/** Both lanes of a pool. */
export const lanesOf = (pool: ServerPool): ReadonlyArray<LaneState> => [pool.modern, pool.legacy]

/** Marks an instance as going away and unlinks it, so no caller finds it; false if it already was. */
export const markRetiring = (lane: LaneState, inst: Instance, reason: Retiring): boolean => {
  if (inst.retiring !== undefined) return false
  inst.retiring = reason
  if (lane.instances.get(inst.key.id) === inst) lane.instances.delete(inst.key.id)
  lane.queued.delete(inst)
  if (lane.holders.has(inst)) lane.retiring.add(inst)
  return true
}

/** When the next start will be tried, as a PoolError names it (nothing under OneShot). */
export const retryIn = (pool: ServerPool, ms: number): { readonly retryInMs?: number } => (pool.oneShot ? {} : { retryInMs: ms })

/** Why a lane refuses to start anything now: its pool is stopped, or a failed start is being cooled down. */
export const coolingError = (pool: ServerPool, lane: LaneState, now: number): Option.Option<PoolError> => {
  if (pool.stopped) return Option.some(stoppedError(pool, lane, "reason: stop"))
  const c = lane.cooldown
  return c !== undefined && now < c.until
    ? Option.some(
      new PoolError({ server: pool.name, lane: lane.lane, reason: "cooling-down", detail: c.reason, ...retryIn(pool, c.until - now) })
    )
    : Option.none()
}

/** The lane's least-recently-used idle instance. */
export const lruIdle = (lane: LaneState): Instance | undefined => {
  let oldest: Instance | undefined
  for (const inst of lane.instances.values()) {
    if (inst.busy > 0 || inst.started === undefined) continue
    if (oldest === undefined || inst.lastUsed < oldest.lastUsed) oldest = inst
  }
  return oldest
}

/** Whether a key waits for a permit that no closing instance is about to return. */
export const starved = (lane: LaneState) => lane.queued.size > lane.retiring.size

// ---------------------------------------------------------------------------------------------
// Status views of the state

export const instanceStatus = (lane: LaneState, inst: Instance): InstanceStatus => {
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

export const laneStatus = (pool: ServerPool, lane: LaneState, now: number): LaneStatus => ({
  lane: lane.lane,
  max: pool.settings.max,
  live: lane.holders.size,
  queued: lane.queued.size,
  ...(lane.cooldown !== undefined && now < lane.cooldown.until
    ? { cooldown: { failures: lane.failures, lastFailure: lane.cooldown.reason, retryInMs: lane.cooldown.until - now } }
    : {})
})

export const poolStatus = (pool: ServerPool, now: number): PoolStatus => {
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
