/**
 * What a Streamable HTTP POST of a request comes back with, when it is not read in place as the
 * request's reply (internal/ReplyRead.ts): a legacy event stream the server ended early, resumed
 * with Last-Event-ID, or a refusal in transport terms.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import { LegacyHTTPRefusedError, type RequestHints, TransportClosed, type TransportError } from "../Transport.js"
import type { Exchange } from "./HttpExchange.js"
import { outOfPlace } from "./InPlace.js"
import type { WireResponse } from "../Wire.js"
import { type Cursor, isResponseTo, type ReadEnv, ReplyRead } from "./ReplyRead.js"
import { rpcErrorOf, singleMessage, statusError } from "./SseHttp.js"

/** How long to wait before resuming a legacy response stream whose server named no `retry`. */
const DefaultRetryMs = 1000
/** The longest `retry` honoured: a server's typo must not park a request for days. */
const MaxRetryMs = 60_000
/** How many resumptions in a row may bring no event before a response stream is given up on. */
const MaxIdleResumptions = 3

/** Statuses with which a server that is not Streamable HTTP at all refuses `initialize`. */
const refusalStatuses: ReadonlySet<number> = new Set([400, 404, 405])

/** Where a reader hands the messages tied to its request, in order. */
export type Deliver = (parsed: JsonRpc.Parsed) => Effect.Effect<void>

/** A legacy request's own headers and session, with which its stream is resumed. */
export interface Resumable {
  readonly hints: RequestHints | undefined
  readonly sid: string | undefined
}

/** The replies of `exchange` that take the effectful path; `env` is how its streams are read. */
export const make = (exchange: Exchange, env: ReadEnv) => {
  const { baseHeaders, currentAuthorization, def, dispatch, expire, refusedBody } = exchange

  // A resumed stream is fetched with the request's own headers and session, as its POST was, and
  // read in place like it; it answers whether it broke (undefined: it ended, or brought the reply).
  const resumeOnce = (
    cursor: Cursor,
    req: JsonRpc.Request,
    deliver: Deliver,
    lastEventId: string,
    resumable: Resumable
  ): Effect.Effect<TransportClosed | undefined, TransportError> =>
    Effect.flatMap(currentAuthorization, (authorization) => {
      const read = new ReplyRead(req.id, cursor, false, env)
      const { hints, sid } = resumable
      const sent = dispatch({
        method: "GET",
        url: def.url,
        headers: baseHeaders(hints, sid, authorization, { accept: "text/event-stream", "last-event-id": lastEventId })
      }, read)
      const outcome = Effect.flatMap(read.reply(deliver), (reply): Effect.Effect<TransportClosed | undefined, TransportError> => {
        const response = read.handedOver
        if (reply !== undefined || response === undefined) return Effect.succeed(read.broke)
        if (response.status === 404 && sid !== undefined) return expire(sid)
        return Effect.flatMap(refusedBody(response), (body) => Effect.fail(statusError(response.status, body, rpcErrorOf(singleMessage(body)))))
      })
      return Effect.ensuring(outcome, Effect.sync(sent.release))
    })

  /**
   * The rest of a request's SSE reply, once a stream ended (or broke, `broke`) before its
   * response. A 2025-11-25 server may end the stream early once it has sent an event id, and
   * expects the client to resume with a GET carrying Last-Event-ID after the `retry` delay it
   * named; a modern stream that breaks has lost its request (the caller re-issues it), so only
   * legacy requests are resumed. `idle` counts resumptions in a row that brought nothing, so a
   * server that keeps closing empty streams is given up on rather than polled forever.
   */
  const resumed = (
    cursor: Cursor,
    broke: TransportClosed | undefined,
    req: JsonRpc.Request,
    deliver: Deliver,
    resumable: Resumable | undefined,
    idle = 0
  ): Effect.Effect<JsonRpc.Parsed, TransportError> =>
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
      return outOfPlace(
        Effect.zipRight(Effect.sleep(Math.min(cursor.retryMs ?? DefaultRetryMs, MaxRetryMs)), resumeOnce(cursor, req, deliver, lastEventId, resumable))
      ).pipe(Effect.flatMap((b) => resumed(cursor, b, req, deliver, resumable, cursor.events > before ? 0 : idle + 1)))
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

  return { resumed, refused }
}
