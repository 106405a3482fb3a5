/**
 * How a host transport learns that its process is stopping, and what a request cut short by it is
 * answered. Stopping has two moments:
 *
 * - `draining`: the process has begun to stop. Streams that never end on their own (a legacy
 *   session's GET stream, a modern `subscriptions/listen`) end now, so they do not hold the grace
 *   period open; calls in flight carry on.
 * - `stopping`: the grace period is over. Whatever still runs is interrupted (which cancels it
 *   upstream) and answered with `shutdownError`, so a client is never left with nothing.
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"

/** The two moments of a stop, each an effect that completes when it comes. */
export interface ShutdownSignals {
  readonly draining: Effect.Effect<void>
  readonly stopping: Effect.Effect<void>
  /**
   * Whether `stopping` has come, known before anything waiting on it runs: a request that fails
   * from then on failed because of the stop, and is answered as such.
   */
  readonly stoppingNow: () => boolean
}

/** Signals that never come: a host that is never told to stop. */
export const never: ShutdownSignals = { draining: Effect.never, stopping: Effect.never, stoppingNow: () => false }

/** `error.data.reason` of a request cut short by a stop, for clients that tell it from other failures. */
export const ShutdownReason = "shutdown"

/** What a request cut short by a stop is told. */
export const ShutdownMessage = "mcpx-fx is shutting down: the request was cancelled before it finished"

/** The answer to a request still running when the grace period ran out: -32603, data saying why. */
export const shutdownError = (id: JsonRpc.RequestId): JsonRpc.ErrorResponse =>
  JsonRpc.failure(id, ErrorCode.InternalError, ShutdownMessage, { reason: ShutdownReason })
