/**
 * What the Pool tells: the PoolError a call gets when no session can be had, and the lifecycle
 * events (start, stop, stale era, crash, failed start) and untied notifications it publishes.
 */
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as RevisionSchema from "@mcpx-fx/protocol/RevisionSchema"
import * as Schema from "effect/Schema"
import { formatMs } from "../internal/formatMs.js"
import { Lane } from "./PoolModel.js"

/** Why a call could not be served. */
export const PoolErrorReason = Schema.Literal("start-failed", "cooling-down", "saturated", "crashed", "stopped", "shutdown")
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
      case "shutdown":
        return `mcpx-fx is shutting down: the call to ${where} was cancelled before it finished`
    }
  }
}

/** Why an instance was closed (`era-changed`: a modern HTTP upstream stopped answering modern requests). */
export const StopReason = Schema.Literal(
  "idle",
  "released",
  "evicted",
  "restart",
  "stop",
  "crash",
  "reconfigured",
  "era-changed"
)
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

/**
 * The era cache proved wrong and has been rewritten: at a start, or later in the life of a
 * process that initialize settled, when its discover answered after all (`era` is then modern
 * while the instance stays legacy).
 */
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
