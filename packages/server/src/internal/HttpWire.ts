/**
 * The HTTP side of `/mcp` that knows nothing about sessions or eras: content negotiation, the
 * size-capped body, JSON and SSE responses, and refusals that always carry a JSON-RPC error body
 * (a client that only reads bodies still learns why it was turned away).
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as RuntimeFlags from "effect/RuntimeFlags"
import * as Stream from "effect/Stream"
import { Buffer } from "node:buffer"
import * as BodyAtHand from "../BodyAtHand.js"
import { remembered } from "./Remembered.js"

export const JsonType = "application/json"
export const EventStreamType = "text/event-stream"

/** The headers every SSE response carries: no caching, and no proxy buffering of the events. */
export const EventStreamHeaders = { "cache-control": "no-cache", "x-accel-buffering": "no" } as const

/**
 * The app's request, read off its fiber's context: one step, where `flatMap` over the request's
 * tag is three (the tag, its read, the continuation), and every request to `/mcp` reads it twice.
 * `interruptible`: what `f` makes runs interruptible however the app is mounted; a fiber that is
 * so already (NodeHttpApp's) is not given a region of its own, two steps per request.
 */
export const withRequest = <A, E, R>(
  f: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<A, E, R>,
  options?: { readonly interruptible?: boolean }
): Effect.Effect<A, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.withFiberRuntime<A, E, R | HttpServerRequest.HttpServerRequest>((fiber, status) => {
    const handled = f(Context.unsafeGet(fiber.getFiberRef(FiberRef.currentContext), HttpServerRequest.HttpServerRequest))
    return options?.interruptible !== true || RuntimeFlags.interruption(status.runtimeFlags) ? handled : Effect.interruptible(handled)
  })

/** A header of the request (names are lower-cased by the platform). */
export const header = (request: HttpServerRequest.HttpServerRequest, name: string): string | undefined => request.headers[name.toLowerCase()]

const mediaTypes = (value: string): ReadonlyArray<string> =>
  value.split(",").map((part) => (part.split(";")[0] ?? "").trim().toLowerCase()).filter((t) => t.length > 0)

/**
 * What the client accepts. No Accept header at all means anything (RFC 9110 §12.5.1); wildcards
 * count for the types they cover.
 */
export interface Accepts {
  readonly json: boolean
  readonly eventStream: boolean
}

const acceptsAnything: Accepts = { json: true, eventStream: true }

const acceptsOf = (raw: string): Accepts => {
  const types = mediaTypes(raw)
  const wildcard = types.includes("*/*")
  return {
    json: wildcard || types.includes(JsonType) || types.includes("application/*"),
    eventStream: wildcard || types.includes(EventStreamType) || types.includes("text/*")
  }
}

const acceptsRemembered = remembered(acceptsOf)
const isJsonRemembered = remembered((raw) => mediaTypes(raw)[0] === JsonType)

export const accepts = (request: HttpServerRequest.HttpServerRequest): Accepts => {
  const raw = header(request, "accept")
  return raw === undefined ? acceptsAnything : acceptsRemembered(raw)
}

/** Whether the body is declared as JSON (parameters such as charset are allowed). */
export const isJsonBody = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const raw = header(request, "content-type")
  return raw !== undefined && isJsonRemembered(raw)
}

/** A JSON body: one message, or a batch array. */
export const json = (status: number, body: unknown, headers: Record<string, string> = {}): HttpServerResponse.HttpServerResponse => {
  // The text itself, not its UTF-8 bytes: node joins a string body to the status line and headers
  // as one string, where bytes were first copied into a Uint8Array of their own and then went out
  // as a buffer beside them. Its length is counted in bytes without encoding it.
  const text = JSON.stringify(body)
  return HttpServerResponse.raw(text, { status, contentType: JsonType, contentLength: Buffer.byteLength(text, "utf8"), headers })
}

/** A refusal with an id-less JSON-RPC error body (or the request's id when it could be read). */
export const refuse = (
  status: number,
  code: number,
  message: string,
  options: { readonly id?: JsonRpc.RequestId | undefined; readonly headers?: Record<string, string> } = {}
): HttpServerResponse.HttpServerResponse => json(status, JsonRpc.failure(options.id, code, message), options.headers)

/** 202 and no body: a notification or a response was accepted. */
export const accepted = (headers: Record<string, string> = {}): HttpServerResponse.HttpServerResponse => HttpServerResponse.empty({ status: 202, headers })

const encoder = new TextEncoder()

/** One SSE event carrying one JSON-RPC message (or a batch reply). No event ids: nothing is resumable. */
export const sseEvent = (message: unknown): Uint8Array => encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`)

/** The keep-alive comment line; clients ignore comments. */
export const sseKeepAlive: Uint8Array = encoder.encode(": keep-alive\n\n")

/** An SSE response over an already framed stream. */
export const eventStream = (
  body: Stream.Stream<Uint8Array>,
  headers: Record<string, string> = {},
  status = 200
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.stream(body, { status, contentType: EventStreamType, headers: { ...EventStreamHeaders, ...headers } })

/** The body was larger than the endpoint takes. */
export class BodyTooLarge extends Data.TaggedError("BodyTooLarge")<{ readonly limit: number }> {}

/** The body could not be read (the client went away mid-body, or sent bytes that are not UTF-8). */
export class BodyUnreadable extends Data.TaggedError("BodyUnreadable")<{ readonly reason: string }> {}

const utf8 = new TextDecoder("utf-8", { fatal: true })

const unreadable = (e: { readonly message: string }) => Effect.fail(new BodyUnreadable({ reason: e.message }))

const decodeUtf8 = (buffer: ArrayBuffer | Uint8Array): Effect.Effect<string, BodyUnreadable> => {
  try {
    return Effect.succeed(utf8.decode(buffer))
  } catch {
    return Effect.fail(new BodyUnreadable({ reason: "the body is not UTF-8" }))
  }
}

/**
 * Whether an effect is its own successful exit already (`Effect.succeed` makes one), its value at
 * hand: what it holds is read in place rather than by a step of the fiber.
 */
export const succeeded = <A, E>(effect: Effect.Effect<A, E>): effect is Exit.Success<A, E> => Exit.isExit(effect) && Exit.isSuccess(effect)

/** How far past the limit a body without a length is still read (and dropped) to answer 413. */
const DrainFactor = 4

/**
 * The body as text, kept at most `limit` bytes: a declared Content-Length over the limit is
 * refused before reading; a body without one is kept until it passes the limit, then read on and
 * dropped (to `DrainFactor` times the limit) so the refusal reaches a client still sending.
 */

export const readBody = (
  request: HttpServerRequest.HttpServerRequest,
  limit: number
): Effect.Effect<string, BodyTooLarge | BodyUnreadable> => {
  const length = header(request, "content-length")
  const declared = length === undefined ? Number.NaN : Number(length)
  if (Number.isFinite(declared) && declared > limit) return Effect.fail(new BodyTooLarge({ limit }))
  // A declared length within the limit bounds the body (the HTTP parser reads no more than it), so
  // it is read whole, without a Stream: almost every POST comes this way.
  if (Number.isFinite(declared)) {
    // A body read before the app ran (NodeHttpApp reads a small one first) is decoded in place,
    // without a copy or a step of the fiber. Every tool call's POST comes this way.
    const atHand = BodyAtHand.of(request)
    if (atHand !== undefined) return decodeUtf8(atHand)
    // One step after the read rather than three (mapError, flatMap, try).
    return Effect.matchEffect(request.arrayBuffer, { onFailure: unreadable, onSuccess: decodeUtf8 })
  }
  // Past the limit the rest is read and dropped (up to a bound) rather than left unread: a client
  // still sending would otherwise see its connection reset and never read the 413.
  const drainLimit = limit * DrainFactor
  return request.stream.pipe(
    Stream.mapError((e) => new BodyUnreadable({ reason: e.message })),
    Stream.runFoldEffect({ size: 0, parts: Chunk.empty<Uint8Array>() }, (acc, bytes) => {
      const size = acc.size + bytes.length
      if (size > drainLimit) return Effect.fail(new BodyTooLarge({ limit }))
      return Effect.succeed(size > limit ? { size, parts: Chunk.empty<Uint8Array>() } : { size, parts: Chunk.append(acc.parts, bytes) })
    }),
    Effect.filterOrFail(({ size }) => size <= limit, () => new BodyTooLarge({ limit })),
    Effect.flatMap(({ parts, size }) =>
      Effect.try({
        try: () => {
          const all = new Uint8Array(size)
          let at = 0
          for (const part of parts) {
            all.set(part, at)
            at += part.length
          }
          return utf8.decode(all)
        },
        catch: () => new BodyUnreadable({ reason: "the body is not UTF-8" })
      })
    )
  )
}

/** The refusal for a body that could not be had. */
export const bodyRefusal = (e: BodyTooLarge | BodyUnreadable): HttpServerResponse.HttpServerResponse =>
  e._tag === "BodyTooLarge"
    ? refuse(413, ErrorCode.InvalidRequest, `Invalid Request: the body exceeds ${e.limit} bytes`)
    : refuse(400, ErrorCode.ParseError, `Parse error: ${e.reason}`)

/** One finished reply: JSON when the client takes it, else a one-event stream, same status. */
export const reply = (
  status: number,
  body: JsonRpc.Response | ReadonlyArray<JsonRpc.Response>,
  accept: Accepts,
  headers: Record<string, string> = {}
): HttpServerResponse.HttpServerResponse => accept.json ? json(status, body, headers) : eventStream(Stream.make(sseEvent(body)), headers, status)

/** A reply withheld (every request in it was cancelled): an event stream with nothing on it. */
export const withheld = (headers: Record<string, string> = {}): HttpServerResponse.HttpServerResponse => eventStream(Stream.empty, headers)
