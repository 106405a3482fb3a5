/**
 * What the Pool is asked with: who an instance is kept for (scope keys), the era lanes, the
 * per-server pool settings, a server as the pool needs it, and the caller with its revision.
 */
import * as Revision from "@mcpx-fx/protocol/Revision"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Schema from "effect/Schema"
import type { Preference } from "../era/Preference.js"
import type { ProbeOptions } from "../era/ProbeModel.js"
import type { ServerDefinition } from "../ServerDefinition.js"

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
  /**
   * A stdio server that has written nothing for this long when a call on it ends (cut short,
   * failed, cancelled) is pinged; one that does not answer within `pingTimeout` is hung (stopped,
   * deadlocked) and is replaced, where it would otherwise hold every later call to its timeout.
   */
  readonly hangCheck: Duration.DurationInput
  readonly pingTimeout: Duration.DurationInput
}

/** The settings used where a server sets none. */
export const defaultSettings: PoolSettings = {
  max: 1,
  idleTimeout: "5 minutes",
  startTimeout: "60 seconds",
  cooldownBase: "1 second",
  cooldownCap: "30 seconds",
  hangCheck: "10 seconds",
  pingTimeout: "5 seconds"
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

/**
 * Set when the pool's user ends with one command (`mcpx-fx tools`, `call`): that command reports a
 * failed start in its own output, and no later start will come. A failed start is then logged at
 * debug level only, and its PoolError names no retry time. A daemon or `serve` leaves it unset:
 * there the log is where a failed start shows, and the next start is real.
 */
export class OneShot extends Context.Reference<OneShot>()("@mcpx-fx/upstream/Pool/OneShot", { defaultValue: () => false }) {}
