/**
 * What one tool call's observation holds (CallObserver.ts observes; the log line, the metrics and
 * the daemon's ring read it). Apart from CallObserver so the log line can name it without a cycle.
 */
import type { Implementation } from "@mcpx-fx/protocol/Implementation"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import { Ending } from "@mcpx-fx/cancel/Ending"
import type * as Exit from "effect/Exit"

/** Who observes a call: the host-facing Backend, the daemon's `/v1` routes, or the Gateway itself. */
export type Entry = "backend" | "v1" | "gateway"

/**
 * One tool call, as observed: who called and what, filled in while it runs; what runs within the
 * call waits here for its end (`onEnd`), told by the observer once the call has ended.
 */
export class Observation extends Ending {
  /** The server that answered, once the name was resolved. */
  server: string | undefined = undefined
  /** The upstream's era, once a session was chosen. */
  era: string | undefined = undefined
  /** Whether the call went to an upstream: it then counts as the client side's request too. */
  upstream = false
  constructor(
    readonly entry: Entry,
    readonly tool: string,
    readonly sessionId: string | undefined,
    readonly revision: string | undefined,
    readonly clientInfo: Implementation | undefined
  ) {
    super()
  }

  /** Reported: a call made later with the same caller (a pending call's next round) observes itself. */
  get ended(): boolean {
    return this.isOver
  }
}

/** A call that has ended, as the sinks get it. */
export interface ObservedCall {
  readonly observation: Observation
  /** When it began, epoch milliseconds. */
  readonly at: number
  readonly durationMs: number
  readonly exit: Exit.Exit<JsonObject, unknown>
}

/** Somewhere finished calls are kept (the daemon's ring of recent calls). */
export interface CallSink {
  /** Whether anything reads what is kept now (asked once a call has ended, so it must be cheap). */
  readonly wanted: (nowMs: number) => boolean
  readonly record: (call: ObservedCall) => void
}
