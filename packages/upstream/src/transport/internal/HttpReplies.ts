/**
 * What a Streamable HTTP POST of a request comes back with, read as that request's messages: one
 * JSON body, an SSE stream up to and including its response (a legacy one resumed with
 * Last-Event-ID when the server ends it early), or a refusal in transport terms.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { LegacyHTTPRefusedError, type RequestHints, TransportClosed, type TransportError } from "../Transport.js"
import type { Exchange } from "./HttpExchange.js"
import { events, messagesOf, messagesOfText } from "../Sse.js"
import { broken, idKey, isOk, mediaType, readBody, rpcErrorOf, singleMessage, statusError, unreachable } from "./SseHttp.js"

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

/** The replies of `exchange`; messages that answer no one here go to `toUnsolicited`. */
export const make = (exchange: Exchange, toUnsolicited: (parsed: JsonRpc.Parsed) => Effect.Effect<void>) => {
  const { baseRequest, currentAuthorization, def, expire, maxFrameBytes, refusedBody, scoped, source } = exchange

  // A resumed stream is fetched with the request's own headers and session, as its POST was.
  const resume = (lastEventId: string, hints: RequestHints | undefined, sid: string | undefined) =>
    Effect.gen(function*() {
      const request = baseRequest(HttpClientRequest.get(def.url), hints, sid, yield* currentAuthorization).pipe(
        HttpClientRequest.setHeader("accept", "text/event-stream"),
        HttpClientRequest.setHeader("last-event-id", lastEventId)
      )
      const response = yield* scoped.execute(request).pipe(Effect.mapError((e) => unreachable(def.url, e)))
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
    response: HttpClientResponse.HttpClientResponse,
    req: JsonRpc.Request,
    answered: Ref.Ref<boolean>,
    resumable: { readonly hints: RequestHints | undefined; readonly sid: string | undefined } | undefined
  ): Stream.Stream<JsonRpc.Parsed, TransportError> => {
    const mine = isResponseTo(req.id)
    const cursor: {
      lastEventId: string | undefined
      retryMs: number | undefined
      events: number
      broke: TransportClosed | undefined
    } = { lastEventId: undefined, retryMs: undefined, events: 0, broke: undefined }
    const read = (r: HttpClientResponse.HttpClientResponse) =>
      events(r.stream.pipe(Stream.mapError((e) => broken(def.url, e))), maxFrameBytes, (ms) => {
        cursor.retryMs = ms
      }).pipe(
        Stream.tap((event) =>
          Effect.sync(() => {
            cursor.events++
            if (event.id !== undefined && event.id.length > 0) cursor.lastEventId = event.id
          })
        ),
        Stream.mapEffect((event) => messagesOf(event, source)),
        Stream.flattenIterables,
        // Only this request's response ends its stream; another id's response belongs to no one here.
        Stream.filterEffect((p) => JsonRpc.isResponse(p.message) && !mine(p) ? Effect.as(toUnsolicited(p), false) : Effect.succeed(true)),
        Stream.takeUntil(mine),
        Stream.tap((p) => (mine(p) ? Ref.set(answered, true) : Effect.void)),
        // A stream that broke off may be resumed like one the server ended; `next` decides.
        Stream.catchTag("TransportClosed", (e) => Stream.execute(Effect.sync(() => (cursor.broke = e))))
      )
    // `idle` counts resumptions in a row that brought nothing, so a server that keeps closing
    // empty streams is given up on rather than polled forever.
    const next = (idle: number): Stream.Stream<JsonRpc.Parsed, TransportError> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        if (yield* Ref.get(answered)) return Stream.empty
        const lastEventId = cursor.lastEventId
        if (resumable === undefined || lastEventId === undefined || idle >= MaxIdleResumptions) {
          return yield* (cursor.broke ?? new TransportClosed({
            reason: `the response stream of request ${JSON.stringify(req.id)} on ${def.url} ended without its response`
          }))
        }
        cursor.broke = undefined
        yield* Effect.sleep(Math.min(cursor.retryMs ?? DefaultRetryMs, MaxRetryMs))
        const before = cursor.events
        const resumed = yield* resume(lastEventId, resumable.hints, resumable.sid)
        return read(resumed).pipe(Stream.concat(Stream.suspend(() => next(cursor.events > before ? 0 : idle + 1))))
      }))
    return read(response).pipe(Stream.concat(next(0)))
  }

  const jsonReply = (response: HttpClientResponse.HttpClientResponse, req: JsonRpc.Request, answered: Ref.Ref<boolean>) =>
    Effect.gen(function*() {
      const body = yield* readBody(def.url, response, maxFrameBytes)
      const messages = yield* messagesOfText(body, source)
      const reply = messages.find(isResponseTo(req.id))
      yield* Effect.forEach(messages.filter((p) => p !== reply), toUnsolicited, { discard: true })
      yield* Ref.set(answered, true)
      if (reply === undefined) return yield* statusError(response.status, body, undefined)
      return Stream.make(reply)
    })

  const refused = (response: HttpClientResponse.HttpClientResponse, req: JsonRpc.Request, sid: string | undefined) =>
    Effect.gen(function*() {
      // The session rule comes first: after a session ends the server answers 404 to its id,
      // whatever the body says.
      if (response.status === 404 && sid !== undefined) return yield* expire(sid)
      const body = yield* refusedBody(response)
      const parsed = singleMessage(body)
      // A modern server refuses with a 4xx *and* the request's JSON-RPC error (-32022 and
      // friends); that error is the answer the negotiation needs. A 5xx stays an HTTP error
      // whatever its body: the server is failing, and the probe must not read an era into it.
      if (response.status < 500 && parsed !== undefined && isResponseTo(req.id)(parsed)) return Stream.make(parsed)
      const rpcError = rpcErrorOf(parsed)
      if (req.method === Method.Initialize && refusalStatuses.has(response.status) && rpcError === undefined) {
        return yield* new LegacyHTTPRefusedError({ status: response.status })
      }
      return yield* statusError(response.status, body, rpcError)
    })

  return { sseReply, jsonReply, refused }
}
