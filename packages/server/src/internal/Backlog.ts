/**
 * What one host stream may hold unsent. Its writer waits for the socket to drain, so a host that
 * does not read leaves every message after that in memory: an upstream that logs a million lines
 * during a call took the daemon past 1.9 GB. Past `MaxBacklog` unsent messages, notifications
 * (progress, logs, list changes) are dropped and counted, and the first drop of each stream is
 * logged; requests to the host (its questions) and responses are never dropped, so no call is lost.
 */
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"

/** The most messages one host stream holds unsent before its notifications are dropped. */
export const MaxBacklog = 4096

const isNotification = (m: JsonRpc.Message): boolean => !("id" in m)

/** One stream's count of what it dropped. */
export class Backlog {
  private dropped = 0

  constructor(private readonly where: string) {}

  /** Whether `m` joins a stream holding `held` messages unsent; if not, run `refused`. */
  admits(held: number, m: JsonRpc.Message): boolean {
    if (held < MaxBacklog || !isNotification(m)) return true
    this.dropped++
    return false
  }

  /** Logs the first drop; later ones only count. */
  get refused(): Effect.Effect<void> {
    return this.dropped === 1
      ? Effect.logWarning(
        `${this.where}: the host is not reading its stream; notifications past ${MaxBacklog} unsent are dropped`
      )
      : Effect.void
  }
}
