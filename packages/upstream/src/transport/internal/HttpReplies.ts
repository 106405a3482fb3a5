/**
 * What a Streamable HTTP POST of a request comes back with, read as that request's messages: one
 * JSON body, an SSE stream up to and including its response (a legacy one resumed with
 * Last-Event-ID when the server ends it early), or a refusal in transport terms.
 *
 * Each reader hands the messages tied to the request to `deliver` as they come and ends with the
 * request's response; it is an Effect rather than a Stream because the response is what nearly
 * every caller waits for, and a Stream per POST cost more than the exchange itself.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import { FrameTooLarge, LegacyHTTPRefusedError, type RequestHints, TransportClosed, type TransportError } from "../Transport.js"
import type { Exchange } from "./HttpExchange.js"
import { outOfPlace } from "./InPlace.js"
import type { WireResponse } from "../Wire.js"
import { decodeEvent, decoder, logSkipped, messagesOfText } from "../Sse.js"
import { idKey, isOk, mediaType, rpcErrorOf, singleMessage, statusError } from "./SseHttp.js"

/** How long to wait before resuming a legacy response stream whose server named no `retry`. */
const DefaultRetryMs = 1000
/** The longest `retry` honoured: a server's typo must not park a request for days. */
const MaxRetryMs = 60_000
/** How many resumptions in a row may bring no event before a response stream is given up on. */
const MaxIdleResumptions = 3

/** Statuses with which a server that is not Streamable HTTP at all refuses `initialize`. */
const refusalStatuses: ReadonlySet<number> = new Set([400, 404, 405])

const isResponseTo = (id: JsonRpc.RequestId) => (p: JsonRpc.Parsed): boolean => {
  const other = JsonRpc.isResponse(p.message) ? JsonRpc.idOf(p.message) : undefined
  return other !== undefined && idKey(other) === idKey(id)
}

/** Where a reader hands the messages tied to its request, in order. */
export type Deliver = (parsed: JsonRpc.Parsed) => Effect.Effect<void>

/** The replies of `exchange`; messages that answer no one here go to `toUnsolicited`. */
export const make = (exchange: Exchange, toUnsolicited: (parsed: JsonRpc.Parsed) => Effect.Effect<void>) => {
  const { baseHeaders, currentAuthorization, def, expire, maxFrameBytes, refusedBody, send, source } = exchange

  // A resumed stream is fetched with the request's own headers and session, as its POST was.
  const resume = (lastEventId: string, hints: RequestHints | undefined, sid: string | undefined) =>
    Effect.gen(function*() {
      const response = yield* send({
        method: "GET",
        url: def.url,
        headers: baseHeaders(hints, sid, yield* currentAuthorization, { accept: "text/event-stream", "last-event-id": lastEventId })
      })
      if (response.status === 404 && sid !== undefined) return yield* expire(sid)
      if (!isOk(response.status) || mediaType(response) !== "text/event-stream") {
        const body = yield* refusedBody(response)
        return yield* statusError(response.status, body, rpcErrorOf(singleMessage(body)))
      }
      return response
    })

  /**
   * A request's SSE reply, up to and including its response. A 2025-11-25 server may end the
   * stream early once it has sent an event id, and expects the client to resume with a GET
   * carrying Last-Event-ID after the `retry` delay it named; a modern stream that breaks has
   * lost its request (the caller re-issues it), so only legacy requests are resumed.
   */
  const sseReply = (
    response: WireResponse,
    req: JsonRpc.Request,
    deliver: Deliver,
    resumable: { readonly hints: RequestHints | undefined; readonly sid: string | undefined } | undefined
  ): Effect.Effect<JsonRpc.Parsed, TransportError> => {
    const mine = isResponseTo(req.id)
    const cursor: { lastEventId: string | undefined; retryMs: number | undefined; events: number; reply: JsonRpc.Parsed | undefined } = {
      lastEventId: undefined,
      retryMs: undefined,
      events: 0,
      reply: undefined
    }
    // One pass over one response's body, a chunk at a time, until this request's response; a
    // stream that broke off is reported, to be resumed like one the server ended. A chunk's events
    // are decoded in place: the effects are only what must be handed on (or logged), most often
    // nothing but the response.
    const read = (r: WireResponse): Effect.Effect<TransportClosed | undefined, FrameTooLarge> => {
      const feed = decoder(maxFrameBytes, (ms) => {
        cursor.retryMs = ms
      })
      const chunk = (bytes: Uint8Array | undefined): Effect.Effect<TransportClosed | undefined, FrameTooLarge | TransportClosed> => {
        if (bytes === undefined) return Effect.succeed(undefined)
        const events = feed(bytes)
        if (events instanceof FrameTooLarge) return Effect.fail(events)
        let effects: Array<Effect.Effect<unknown>> | undefined
        for (const event of events) {
          cursor.events++
          if (event.id !== undefined && event.id.length > 0) cursor.lastEventId = event.id
          if (cursor.reply !== undefined) continue
          const decoded = decodeEvent(event)
          if (decoded.skipped !== undefined) (effects ??= []).push(logSkipped(decoded, source))
          // Only this request's response ends its stream; another id's response belongs to no one
          // here, and what follows the response on the same stream is not read.
          for (const p of decoded.messages) {
            if (mine(p)) {
              cursor.reply = p
              break
            }
            ;(effects ??= []).push(JsonRpc.isResponse(p.message) ? toUnsolicited(p) : deliver(p))
          }
        }
        const after = cursor.reply === undefined ? pull : Effect.succeed(undefined)
        return effects === undefined ? after : Effect.zipRight(Effect.forEach(effects, (e) => e, { discard: true }), after)
      }
      const pull: Effect.Effect<TransportClosed | undefined, FrameTooLarge | TransportClosed> = Effect.suspend(() => Effect.flatMap(r.next, chunk))
      return Effect.catchTag(pull, "TransportClosed", (e) => Effect.succeed(e))
    }
    // `idle` counts resumptions in a row that brought nothing, so a server that keeps closing
    // empty streams is given up on rather than polled forever.
    const next = (broke: TransportClosed | undefined, idle: number): Effect.Effect<JsonRpc.Parsed, TransportError> =>
      Effect.suspend(() => {
        if (cursor.reply !== undefined) return Effect.succeed(cursor.reply)
        const lastEventId = cursor.lastEventId
        if (resumable === undefined || lastEventId === undefined || idle >= MaxIdleResumptions) {
          return Effect.fail(
            broke ?? new TransportClosed({
              reason: `the response stream of request ${JSON.stringify(req.id)} on ${def.url} ended without its response`
            })
          )
        }
        const before = cursor.events
        // The wait before resuming is none a cut in place ends: a call running in place resumes out of place.
        return outOfPlace(Effect.scoped(Effect.gen(function*() {
          yield* Effect.sleep(Math.min(cursor.retryMs ?? DefaultRetryMs, MaxRetryMs))
          return yield* read(yield* resume(lastEventId, resumable.hints, resumable.sid))
        }))).pipe(Effect.flatMap((b) => next(b, cursor.events > before ? 0 : idle + 1)))
      })
    return Effect.flatMap(read(response), (broke) => next(broke, 0))
  }

  // Messages besides the response in a JSON body answer no one here.
  const jsonReply = (status: number, body: string, req: JsonRpc.Request): Effect.Effect<JsonRpc.Parsed, TransportError> =>
    Effect.flatMap(messagesOfText(body, source), (messages) => {
      const reply = messages.find(isResponseTo(req.id))
      const rest = messages.length === 1 && reply !== undefined
        ? Effect.void
        : Effect.forEach(messages.filter((p) => p !== reply), toUnsolicited, { discard: true })
      return Effect.zipRight(rest, reply === undefined ? Effect.fail(statusError(status, body, undefined)) : Effect.succeed(reply))
    })

  const refused = (response: WireResponse, req: JsonRpc.Request, sid: string | undefined): Effect.Effect<JsonRpc.Parsed, TransportError> =>
    Effect.gen(function*() {
      // The session rule comes first: after a session ends the server answers 404 to its id,
      // whatever the body says.
      if (response.status === 404 && sid !== undefined) return yield* expire(sid)
      const body = yield* refusedBody(response)
      const parsed = singleMessage(body)
      // A modern server refuses with a 4xx *and* the request's JSON-RPC error (-32022 and
      // friends); that error is the answer the negotiation needs. A 5xx stays an HTTP error
      // whatever its body: the server is failing, and the probe must not read an era into it.
      if (response.status < 500 && parsed !== undefined && isResponseTo(req.id)(parsed)) return parsed
      const rpcError = rpcErrorOf(parsed)
      if (req.method === Method.Initialize && refusalStatuses.has(response.status) && rpcError === undefined) {
        return yield* new LegacyHTTPRefusedError({ status: response.status })
      }
      return yield* statusError(response.status, body, rpcError)
    })

  return { sseReply, jsonReply, refused }
}
