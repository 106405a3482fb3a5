/**
 * Server-sent events as the HTTP transports (and `serve --relay`) receive them: bytes in, size-capped events out, and
 * the JSON-RPC messages those events carry. Parsing is eventsource-parser's; what is ours is the
 * cap, which the parser only partly enforces.
 */
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { createParser, type EventSourceMessage } from "eventsource-parser"
import { FrameTooLarge } from "./Transport.js"

/** One server-sent event. `event` is undefined when the server named none (which means `message`). */
export type SseEvent = EventSourceMessage

/** The default cap on one JSON body or one SSE event. */
export const DefaultMaxFrameBytes = 16 * 1024 * 1024

const encoder = new TextEncoder()

/** Whether a string's UTF-8 encoding is over `limit` bytes; it is encoded only when its length cannot tell. */
export const exceedsBytes = (text: string, limit: number): boolean => text.length > limit || (text.length * 3 > limit && encoder.encode(text).length > limit)

/**
 * Server-sent events from bytes fed one chunk at a time. An event whose data exceeds
 * `maxEventBytes` is FrameTooLarge, and so is an unterminated line or event that grows past it:
 * the parser's own `maxBufferSize` (in characters, which never exceed bytes) catches what is
 * still buffered, and complete events that arrived in one chunk are measured here. `onRetry`
 * hears the server's `retry:` field (the reconnection delay it asks for, in milliseconds).
 */
export const decoder = (maxEventBytes: number, onRetry: (ms: number) => void = () => {}) => {
  const text = new TextDecoder()
  let ready: Array<SseEvent> = []
  let overflow = false
  const parser = createParser({
    maxBufferSize: maxEventBytes,
    onEvent: (e) => {
      ready.push(e)
    },
    onRetry,
    onError: (e) => {
      if (e.type === "max-buffer-size-exceeded") overflow = true
    }
  })
  /** The events the chunk completes, in order. */
  return (bytes: Uint8Array): ReadonlyArray<SseEvent> | FrameTooLarge => {
    parser.feed(text.decode(bytes, { stream: true }))
    const out = ready
    ready = []
    return overflow || out.some((e) => exceedsBytes(e.data, maxEventBytes)) ? new FrameTooLarge({ limit: maxEventBytes }) : out
  }
}

/** A byte stream as server-sent events, under `decoder`'s cap. */
export const events = <E, R>(
  bytes: Stream.Stream<Uint8Array, E, R>,
  maxEventBytes: number,
  onRetry: (ms: number) => void = () => {}
): Stream.Stream<SseEvent, E | FrameTooLarge, R> =>
  Stream.suspend(() => {
    const feed = decoder(maxEventBytes, onRetry)
    return bytes.pipe(
      Stream.mapEffect((chunk) => {
        const out = feed(chunk)
        return out instanceof FrameTooLarge ? Effect.fail(out) : Effect.succeed(out)
      }),
      Stream.flattenIterables
    )
  })

/** What one event or JSON text carried: its messages, and why what did not decode was skipped. */
export interface Decoded {
  readonly messages: ReadonlyArray<JsonRpc.Parsed>
  readonly skipped?: { readonly what: string; readonly why: string }
}

const none: Decoded = { messages: [] }

/**
 * The JSON-RPC messages one event carries. Only `message` events (named or not) carry them;
 * empty data is a 2025-11-25 priming event. What does not decode is skipped rather than failing
 * the stream (one bad frame from an upstream must not lose the reply that follows), and said in
 * `skipped`, for the log. Without an effect: a reply read chunk by chunk decodes every event here.
 */
export const decodeEvent = (event: SseEvent): Decoded =>
  (event.event !== undefined && event.event !== "message") || event.data.trim().length === 0 ? none : decodeText(event.data)

/** The JSON-RPC messages in one JSON text (a message or a batch), as `decodeEvent` says them. */
export const decodeText = (text: string): Decoded => {
  const frame = JsonRpc.decodeUpstreamFrame(text)
  if (Either.isLeft(frame)) return { messages: [], skipped: { what: "an undecodable frame", why: frame.left.reason } }
  if (frame.right._tag === "Single") return { messages: [frame.right.parsed] }
  const good: Array<JsonRpc.Parsed> = []
  const bad: Array<string> = []
  for (const element of frame.right.elements) {
    if (Either.isRight(element)) good.push(element.right)
    else bad.push(element.left.reason)
  }
  return bad.length === 0 ? { messages: good } : { messages: good, skipped: { what: `${bad.length} undecodable batch element(s)`, why: bad.join("; ") } }
}

/** The messages, once what was skipped is logged (naming `source`). */
export const logSkipped = (decoded: Decoded, source: string): Effect.Effect<ReadonlyArray<JsonRpc.Parsed>> =>
  decoded.skipped === undefined
    ? Effect.succeed(decoded.messages)
    : Effect.as(Effect.logWarning(`skipped ${decoded.skipped.what} from ${source}: ${decoded.skipped.why}`), decoded.messages)

/** `decodeEvent`, what was skipped logged. */
export const messagesOf = (event: SseEvent, source: string): Effect.Effect<ReadonlyArray<JsonRpc.Parsed>> => logSkipped(decodeEvent(event), source)

/** `decodeText`, what was skipped logged. */
export const messagesOfText = (text: string, source: string): Effect.Effect<ReadonlyArray<JsonRpc.Parsed>> => logSkipped(decodeText(text), source)
