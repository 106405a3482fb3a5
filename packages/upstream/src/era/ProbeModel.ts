/**
 * What a start is given and what it answers: the options, the report of how the era was decided,
 * and the errors.
 */
import type * as Revision from "@mcpx-fx/protocol/Revision"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { EraRecord } from "./EraCache.js"
import type { UnsendableRequest } from "../transport/ModernHeaders.js"
import type { NegotiationError } from "./Negotiator.js"
import type { Preference } from "./Preference.js"
import type { EraSource, Session, SessionOptions } from "../session/SessionModel.js"
import type { Connection, TransportError } from "../transport/Transport.js"

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
  /** The Pool's lane the session is started for (`mcpx.lane` on its spans); none outside the Pool. */
  readonly lane?: "modern" | "legacy"
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

/** Everything a start can fail with. */
export type ProbeError = ProbeFailed | NegotiationError | TransportError | UnsendableRequest
