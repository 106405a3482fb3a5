/**
 * What goes over the wire (Wire.ts) and what comes back: a request, its response, and the reader
 * that may take the response's body in place.
 */
import type * as Effect from "effect/Effect"
import type { WaitingCall } from "./internal/InPlace.js"
import type { FrameTooLarge, TransportClosed } from "./Transport.js"

/** One request: headers by lower-case name. */
export interface WireRequest {
  readonly method: "GET" | "POST" | "DELETE"
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string
  /**
   * The call running in place (internal/InPlace.ts) this exchange is the wait of: a cut aborts the
   * exchange, so whatever it waits on (its answer, its body) ends at once.
   */
  readonly inPlace?: WaitingCall
}

/** What came back: status and headers (lower-case names) at once, the body when asked for. */
export interface WireResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string | undefined>>
  /** The whole body as text; FrameTooLarge past `maxBytes`, without buffering what is over. */
  readonly text: (maxBytes: number) => Effect.Effect<string, FrameTooLarge | TransportClosed>
  /** The body's next chunk as it arrives (an event stream), `undefined` at its end; read with backpressure. */
  readonly next: Effect.Effect<Uint8Array | undefined, TransportClosed>
}

/** How an exchange fails: its body over its cap, or the connection gone. */
export type Failure = FrameTooLarge | TransportClosed

/**
 * Where an exchange's outcome goes as undici hands it over, with no fiber resumed on the way: the
 * answer's start, then its body chunk by chunk when the reader takes it, then its end.
 */
export interface BodyReader {
  /** The answer began: true takes its body here (`chunk`, then `end`); false leaves it to the response's `text` or `next`. */
  readonly begin: (response: WireResponse & WireExchange) => boolean
  /** A chunk of a body `begin` took; a failure returned ends the exchange with it. */
  readonly chunk: (bytes: Buffer) => Failure | undefined
  /** The exchange failed before its answer began, or a body `begin` took ended: whole (undefined) or with why. */
  readonly end: (failure: Failure | undefined) => void
}

/** An exchange sent with a reader of its own. */
export interface WireExchange {
  /** The exchange is no longer wanted: a body not read to its end is abandoned (its request aborted). */
  readonly release: () => void
}
