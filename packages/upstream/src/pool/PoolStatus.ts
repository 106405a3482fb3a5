/**
 * What the Pool shows of itself: instances, lanes and cooldowns per server (`status`,
 * `/v1/servers`), and what a restart did.
 */
import type * as Revision from "@mcpx-fx/protocol/Revision"
import type { PoolError } from "./PoolEvents.js"
import type { Lane } from "./PoolModel.js"
import type { Preference } from "../era/Preference.js"
import type { ProbeReport } from "../era/ProbeModel.js"
import type { EraSource } from "../session/SessionModel.js"
import type { Connection } from "../transport/Transport.js"

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
