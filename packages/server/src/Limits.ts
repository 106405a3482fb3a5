/**
 * The bounds both host transports hold a caller to, and their defaults (the daemon and `serve`
 * take them from settings). Each has a clear refusal past it, so a bad or hostile caller gets an
 * error and every other caller is still served.
 */
import * as Duration from "effect/Duration"

/** `transport.maxBatch`: the most messages one batch may hold; a longer one is refused whole (-32600). */
export const DefaultMaxBatch = 100

/**
 * How many requests of one batch run at once. The rest wait their turn inside the batch, so a
 * batch's cost grows with its length, not its width, and other callers' requests (which never
 * wait on a batch) go on being served.
 */
export const BatchConcurrency = 8

/** `transport.sessionIdleTimeout`: a legacy HTTP session with no request for this long ends (404 after). */
export const DefaultSessionIdleTimeout: Duration.Duration = Duration.minutes(30)

/** `transport.maxSessions`: the most legacy HTTP sessions held at once. */
export const DefaultMaxSessions = 1000

/** `transport.maxStreams`: the most open `subscriptions/listen` streams over HTTP (and, apart, `/v1/events` streams). */
export const DefaultMaxStreams = 256

/**
 * Places for streams that stay open until their client leaves. Each costs a socket and some
 * 150 KB, so without a bound a flood of them exhausts the process; past it a new one is refused
 * (503 with Retry-After) and the open ones go on.
 */
export class StreamSlots {
  private open = 0

  constructor(readonly max: number) {}

  /** Takes a place, or says there is none; a place taken must be given back once. */
  take(): boolean {
    if (this.open >= this.max) return false
    this.open++
    return true
  }

  give(): void {
    if (this.open > 0) this.open--
  }
}
