/**
 * MCP protocol revisions, their eras and negotiation helpers.
 *
 * Legacy revisions open with `initialize`; modern ones carry version, identity and
 * capabilities in every request's `_meta`. The two lists are kept apart so a modern
 * version never leaks into an `initialize` and a legacy one never into `server/discover`.
 *
 * This module imports nothing, so small programs (test fixtures) can use it without loading
 * effect/Schema; the schemas live in RevisionSchema.
 */

/** Revisions that open with an `initialize` handshake, oldest first. */
export const LegacyRevisions = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] as const

/** Stateless revisions that carry `_meta` on every request, oldest first. */
export const ModernRevisions = ["2026-07-28"] as const

/** Every revision mcpx-fx speaks, oldest first. */
export const AllRevisions = [...LegacyRevisions, ...ModernRevisions] as const

/** A legacy revision. */
export type LegacyRevision = (typeof LegacyRevisions)[number]
/** A modern revision. */
export type ModernRevision = (typeof ModernRevisions)[number]
/** Any revision mcpx-fx speaks. */
export type Revision = LegacyRevision | ModernRevision

/** The two protocol eras. */
export type Era = "legacy" | "modern"

/** The oldest revision, whose shapes answer anything that arrives before `initialize`. */
export const OldestRevision: LegacyRevision = "2024-11-05"
/** The newest legacy revision: what mcpx-fx offers in `initialize` and counter-offers. */
export const LatestLegacyRevision: LegacyRevision = "2025-11-25"
/** The newest modern revision: what mcpx-fx puts in `_meta` by default. */
export const LatestModernRevision: ModernRevision = "2026-07-28"

/** Whether a string names a revision mcpx-fx speaks. */
export const isRevision = (s: unknown): s is Revision => typeof s === "string" && (AllRevisions as ReadonlyArray<string>).includes(s)

/** Whether a string names a legacy revision mcpx-fx speaks. */
export const isLegacyRevision = (s: unknown): s is LegacyRevision => typeof s === "string" && (LegacyRevisions as ReadonlyArray<string>).includes(s)

/** Whether a string names a modern revision mcpx-fx speaks. */
export const isModernRevision = (s: unknown): s is ModernRevision => typeof s === "string" && (ModernRevisions as ReadonlyArray<string>).includes(s)

/** The era of a revision. */
export const eraOf = (revision: Revision): Era => (isModernRevision(revision) ? "modern" : "legacy")

/**
 * Orders two revisions. Revision names are ISO dates, so for the ones we know, string order is
 * date order; unknown strings compare the same way, which keeps the order total.
 */
export const compare = (a: string, b: string): -1 | 0 | 1 => (a < b ? -1 : a > b ? 1 : 0)

/** Whether `a` is at least revision `b` (e.g. "does this caller have structuredContent?"). */
export const atLeast = (a: string, b: string): boolean => compare(a, b) >= 0

/**
 * The newest version present in both lists, or undefined when they are disjoint.
 * `theirs` may hold versions we do not know; they are never chosen.
 */
export const newestMutual = <A extends string>(
  ours: ReadonlyArray<A>,
  theirs: ReadonlyArray<string>
): A | undefined => {
  let best: A | undefined
  for (const v of ours) {
    if (theirs.includes(v) && (best === undefined || compare(v, best) > 0)) best = v
  }
  return best
}

/**
 * Whether a legacy revision has JSON-RPC batches: only 2025-03-26 (it added them, where a server
 * MUST accept them; 2025-06-18 removed them; the modern era has none).
 */
export const allowsBatches = (revision: Revision): boolean => revision === "2025-03-26"
