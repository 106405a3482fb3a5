/**
 * A request's answer read in place, as undici hands it over (Wire's BodyReader): an event stream
 * decoded chunk by chunk, or a JSON body gathered under its cap, into a CallBox the caller's fiber
 * waits on once. A Streamable HTTP call waited for its answer's start, then for each chunk, in a
 * scope of its own; that structure was most of what separated a call over HTTP from a call over
 * stdio (docs/performance.md, What 2× on HTTP would take).
 *
 * What is rare is left to the effectful path: an answer that is no reply (a refusal, a body of
 * another type) is handed over unread, and a stream that ended or broke before its response is
 * reported with where it got to, to be resumed.
 */
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { type Decoded, decodeEvent, decoder, decodeText, logSkipped } from "../Sse.js"
import { FrameTooLarge, type TransportClosed, type TransportError } from "../Transport.js"
import type { BodyReader, WireExchange, WireResponse } from "../Wire.js"
import { CallBox } from "./CallBox.js"
import { isOk, mediaType, statusError } from "./SseHttp.js"
import { idKey } from "./Waiting.js"

/** Where a request's event streams got to: shared by its POST's stream and the streams that resume it. */
export interface Cursor {
  lastEventId: string | undefined
  retryMs: number | undefined
  /** How many events were read, over every stream of the request. */
  events: number
  /** The request's response, once read. */
  reply: JsonRpc.Parsed | undefined
}

export const newCursor = (): Cursor => ({ lastEventId: undefined, retryMs: undefined, events: 0, reply: undefined })

/** What a reader needs of its connection. */
export interface ReadEnv {
  readonly maxFrameBytes: number
  /** Names the server in what is logged. */
  readonly source: string
  /** A message that answers no one here (another request's response). */
  readonly toUnsolicited: (parsed: JsonRpc.Parsed) => void
  /** Told of every answer's start first (a legacy session's id is taken from it). */
  readonly onBegin: (response: WireResponse) => void
}

// The box lets go of nothing: the POST is released by its sender once the wait is over, not when
// the reply is read, whose stream's end is most often still on its way (aborting it then would
// close a kept-alive connection). So a wait on it that is interrupted has nothing to abandon.
const idle = (): void => {}

/** Whether `p` is the response to the request `id`. */
export const isResponseTo = (id: JsonRpc.RequestId) => (p: JsonRpc.Parsed): boolean => {
  const other = JsonRpc.isResponse(p.message) ? JsonRpc.idOf(p.message) : undefined
  return other !== undefined && idKey(other) === idKey(id)
}

/** One exchange of a request, read in place: its POST (`json` true: the answer may be a JSON body) or a GET resuming its stream. */
export class ReplyRead implements BodyReader {
  /** Where the caller's fiber waits: the messages tied to the request, then its response. */
  readonly box = new CallBox(idle, true)
  /** An answer that is not the request's reply, handed over unread to the effectful path. */
  handedOver: (WireResponse & WireExchange) | undefined = undefined
  /** Why the stream ended before the response, when it broke rather than ended. */
  broke: TransportClosed | undefined = undefined
  /** Set once nothing of the request can be running upstream because of this exchange's answer. */
  answered = false
  /** Set when the exchange failed before its answer began (never sent, unless a cut ended it). */
  unsent = false
  private skipped: Array<Decoded> | undefined = undefined
  private feed: ReturnType<typeof decoder> | undefined = undefined
  private body: Array<Buffer> | undefined = undefined
  private received = 0
  private status = 0

  private readonly isMine: (p: JsonRpc.Parsed) => boolean

  constructor(
    id: JsonRpc.RequestId,
    readonly cursor: Cursor,
    private readonly json: boolean,
    private readonly env: ReadEnv
  ) {
    this.isMine = isResponseTo(id)
  }

  begin(response: WireResponse & WireExchange): boolean {
    this.env.onBegin(response)
    this.status = response.status
    if (isOk(response.status)) {
      const type = mediaType(response)
      if (type === "text/event-stream") {
        this.feed = decoder(this.env.maxFrameBytes, (ms) => {
          this.cursor.retryMs = ms
        })
        return true
      }
      if (this.json && type === "application/json") {
        // A body declared over the cap is refused at its first chunk, none of it kept.
        const declared = Number(response.headers["content-length"] ?? Number.NaN)
        this.received = Number.isFinite(declared) && declared > this.env.maxFrameBytes ? declared : 0
        this.body = []
        return true
      }
    }
    // A refusal, or no reply at all: nothing of the request runs upstream.
    this.answered = true
    this.handedOver = response
    this.box.unsafeDone(Exit.void)
    return false
  }

  chunk(bytes: Buffer): FrameTooLarge | undefined {
    if (this.body !== undefined) {
      this.received += bytes.length
      if (this.received > this.env.maxFrameBytes) return new FrameTooLarge({ limit: this.env.maxFrameBytes })
      this.body.push(bytes)
      return undefined
    }
    const events = this.feed!(bytes)
    if (events instanceof FrameTooLarge) return events
    const cursor = this.cursor
    for (const event of events) {
      cursor.events++
      if (event.id !== undefined && event.id.length > 0) cursor.lastEventId = event.id
      if (cursor.reply !== undefined) continue
      const decoded = decodeEvent(event)
      if (decoded.skipped !== undefined) (this.skipped ??= []).push(decoded)
      // Only this request's response ends its stream; another id's response belongs to no one
      // here, and what follows the response on the same stream is not read.
      for (const p of decoded.messages) {
        if (this.isMine(p)) {
          this.replied(p)
          break
        }
        if (JsonRpc.isResponse(p.message)) this.env.toUnsolicited(p)
        else this.box.unsafeOffer(p)
      }
    }
    return undefined
  }

  end(failure: FrameTooLarge | TransportClosed | undefined): void {
    if (this.status === 0) this.unsent = true
    if (failure !== undefined) {
      if (failure._tag === "TransportClosed" && this.feed !== undefined) this.broke = failure
      else this.box.unsafeDone(Exit.fail(failure))
    } else if (this.body !== undefined) {
      return this.whole()
    }
    // A stream that ended or broke before its response: the box ends empty, for the caller to resume.
    this.box.unsafeDone(Exit.void)
  }

  /**
   * Waits for the request's response, handing the messages before it to `deliver`. Undefined when
   * the exchange ended without it: handed over, or a stream to resume.
   */
  reply(deliver: (parsed: JsonRpc.Parsed) => Effect.Effect<void>): Effect.Effect<JsonRpc.Parsed | undefined, TransportError> {
    return Effect.flatMap(this.box.response(deliver), () => {
      const skipped = this.skipped
      if (skipped === undefined) return Effect.succeed(this.cursor.reply)
      // What did not decode is logged once the wait is over (rare: an upstream's bad frame).
      this.skipped = undefined
      return Effect.as(Effect.forEach(skipped, (decoded) => logSkipped(decoded, this.env.source), { discard: true }), this.cursor.reply)
    })
  }

  private replied(p: JsonRpc.Parsed): void {
    this.cursor.reply = p
    this.answered = true
    this.box.unsafeOffer(p)
    this.box.unsafeDone(Exit.void)
  }

  // Messages besides the response in a JSON body answer no one here.
  private whole(): void {
    const body = this.body!
    const text = body.length === 1 ? body[0]!.toString("utf8") : Buffer.concat(body).toString("utf8")
    this.answered = true
    const decoded = decodeText(text)
    if (decoded.skipped !== undefined) (this.skipped ??= []).push(decoded)
    let reply: JsonRpc.Parsed | undefined
    for (const p of decoded.messages) {
      if (reply === undefined && this.isMine(p)) reply = p
      else this.env.toUnsolicited(p)
    }
    if (reply !== undefined) return this.replied(reply)
    this.box.unsafeDone(Exit.fail(statusError(this.status, text, undefined)))
  }
}
