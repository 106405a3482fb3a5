/**
 * What a start will try, decided without I/O from the definition's transport, the preference and
 * the era cache's record: which opening request goes first, what a refusal of it leads to, where
 * the session's era is said to come from, and what the cache is told. The stdio and HTTP executors
 * (internal/StdioExecutor.ts, internal/HttpExecutor.ts) carry a plan out.
 *
 * The cache may only take a start straight to what the preference would find without it (seed 000:
 * "the result is the same"): a record of the era the preference tries first, or of a server known
 * to refuse the other era (`exclusive`). A dual server learned modern under prefer-discover is still
 * initialized first under prefer-initialize.
 */
import type * as Revision from "@mcpx-fx/protocol/Revision"
import * as Option from "effect/Option"
import type { EraRecord } from "./EraCache.js"
import { type Preference, usesEraCache } from "./Preference.js"

/** What a plan is decided from, besides the cache's record. */
export interface PlanInput {
  readonly transport: "stdio" | "http"
  readonly preference: Preference
  /** `mcpx-fx probe`: neither read nor write the cache. */
  readonly ignoreCache: boolean
  /** The cached era has just failed: forget it and probe in the normal order. */
  readonly distrustCache: boolean
}

/** The order of attempts and what each outcome leads to. */
export interface Plan {
  /** The opening request: `server/discover` (2026-07-28) or `initialize` (the legacy revisions). */
  readonly first: "discover" | "initialize"
  /**
   * What a legacy answer to discover, or a refusal of initialize, leads to: the other request on
   * the same connection ("other"), or failing the start ("fail", the `force-*` preferences).
   */
  readonly then: "other" | "fail"
  /** The session's era source when the first request settles it; a fallback is always "probe". */
  readonly source: "forced" | "cache" | "probe"
  /**
   * stdio, discover first with a fallback: how long discover may stay unanswered before
   * `initialize` is sent alongside it: `probeTimeout`, or the longer bound for a server cached modern.
   */
  readonly bound: "probe" | "cached" | undefined
  /** stdio, discover first with a fallback: a process that exits during the probe is replaced by one spoken to legacy only. */
  readonly restart: boolean
  /** HTTP: an `initialize` refused with a bare 400/404/405 is sent again over the 2024-11-05 HTTP+SSE transport. */
  readonly sseFallback: boolean
  /** The wire the first connection opens on: a legacy record of an HTTP+SSE server names it. */
  readonly wire: "http+sse" | undefined
  /** Whether what the probe finds is written to the cache. */
  readonly writes: boolean
  /** Forget the cached record before probing. */
  readonly forget: boolean
  /** The record the found era is compared with; a different era makes the start `stale`. */
  readonly consulted: Option.Option<EraRecord>
  /** What the cache decision tells the report, in order. */
  readonly notes: ReadonlyArray<string>
}

/** Whether a start reads the era cache (and may write it): never under `force-*` or when told to ignore it. */
export const readsCache = (input: Pick<PlanInput, "preference" | "ignoreCache">): boolean => usesEraCache(input.preference) && !input.ignoreCache

/** The plan for a start; `cached` is the cache's record, none when `readsCache` is false. */
export const plan = (input: PlanInput, cached: Option.Option<EraRecord>): Plan => {
  const { preference, transport } = input
  const writes = readsCache(input)
  const held = writes ? cached : Option.none<EraRecord>()
  const notes: Array<string> = []
  if (Option.isSome(held)) {
    notes.push(`era cache says ${held.value.era} ${held.value.version} (learned ${new Date(held.value.at).toISOString()})`)
  }
  const firstEra: Revision.Era = preference === "prefer-initialize" ? "legacy" : "modern"
  const consulted = Option.filter(held, (r) => r.era === firstEra || r.exclusive === true)
  if (Option.isSome(held) && Option.isNone(consulted)) {
    notes.push(`${preference} tries ${firstEra} first, and the cache does not say the server refuses it: probing in the normal order`)
  }
  const forget = input.distrustCache && Option.isSome(held)
  if (forget) notes.push(`the cached era failed: forgetting it and probing again`)
  // What chooses the order: the cache, unless it has just failed.
  const trusted = forget ? Option.none<EraRecord>() : consulted
  const cachedEra = Option.map(trusted, (r) => r.era)
  const common = { writes, forget, consulted, notes }
  const isStdio = transport === "stdio"
  const isHttp = transport === "http"
  const initializeFirst = (then: Plan["then"], source: Plan["source"]): Plan => ({
    ...common,
    first: "initialize",
    then,
    source,
    bound: undefined,
    restart: false,
    sseFallback: isHttp,
    wire: Option.isSome(trusted) && trusted.value.transport === "http+sse" ? "http+sse" : undefined
  })

  switch (preference) {
    case "force-initialize":
      return initializeFirst("fail", "forced")
    case "force-discover":
      return { ...common, first: "discover", then: "fail", source: "forced", bound: undefined, restart: false, sseFallback: false, wire: undefined }
    case "prefer-initialize":
    case "prefer-discover":
    case "follow": {
      if (Option.contains(cachedEra, "legacy")) return initializeFirst("other", "cache")
      const cachedModern = Option.contains(cachedEra, "modern")
      if (preference === "prefer-initialize" && !cachedModern) return initializeFirst("other", "probe")
      return {
        ...common,
        first: "discover",
        then: "other",
        source: cachedModern ? "cache" : "probe",
        bound: isStdio ? (cachedModern ? "cached" : "probe") : undefined,
        restart: isStdio,
        sseFallback: isHttp,
        wire: undefined
      }
    }
  }
}
