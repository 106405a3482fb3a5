/**
 * A legacy Streamable HTTP session's GET notification stream: one per session, opened on demand,
 * its messages handed on as unsolicited ones until it ends or the connection closes.
 */
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { TransportClosed, type TransportError } from "../Transport.js"
import { type Exchange, VersionHeader } from "./HttpExchange.js"
import { events, messagesOf } from "../Sse.js"
import * as Wire from "../Wire.js"
import { isOk, mediaType, rpcErrorOf, singleMessage, statusError } from "./SseHttp.js"

/** What the stream runs on besides the exchange. */
export interface StreamEnv {
  /** Fails once the connection has closed. */
  readonly ensureOpen: Effect.Effect<void, TransportClosed>
  /** The connection's fibers, ended when it closes. */
  readonly fibers: FiberSet.FiberSet
  readonly toUnsolicited: (parsed: JsonRpc.Parsed) => Effect.Effect<void>
}

/** Opens the session's notification stream unless it is open; done once the server has accepted it. */
export const make = (exchange: Exchange, env: StreamEnv) =>
  Effect.gen(function*() {
    const { baseHeaders, currentAuthorization, def, expire, legacyVersion, maxFrameBytes, refusedBody, send, session, source } = exchange
    const { ensureOpen, fibers, toUnsolicited } = env
    const streamOpen = yield* Ref.make(false)

    const listen = (ready: Deferred.Deferred<void, TransportError>) =>
      Effect.gen(function*() {
        const sid = session()
        const version = legacyVersion()
        const response = yield* send({
          method: "GET",
          url: def.url,
          headers: baseHeaders(
            undefined,
            sid,
            yield* currentAuthorization,
            version === undefined ? { accept: "text/event-stream" } : { accept: "text/event-stream", [VersionHeader]: version }
          )
        })
        if (response.status === 405) {
          yield* Effect.logDebug(`${source} offers no notification stream (405)`)
          return yield* Deferred.succeed(ready, undefined)
        }
        if (!isOk(response.status)) {
          if (response.status === 404 && sid !== undefined) return yield* expire(sid)
          const body = yield* refusedBody(response)
          return yield* statusError(response.status, body, rpcErrorOf(singleMessage(body)))
        }
        if (mediaType(response) !== "text/event-stream") {
          const body = yield* refusedBody(response)
          return yield* statusError(response.status, body, undefined)
        }
        yield* Deferred.succeed(ready, undefined)
        yield* events(Wire.stream(response), maxFrameBytes).pipe(
          Stream.mapEffect((event) => messagesOf(event, source)),
          Stream.flattenIterables,
          Stream.runForEach(toUnsolicited)
        )
        yield* Effect.logDebug(`the notification stream of ${source} ended`)
      })

    const openNotificationStream: Effect.Effect<void, TransportError> = Effect.gen(function*() {
      yield* ensureOpen
      // One stream per session: servers refuse a second one (409) or split messages between them.
      if (yield* Ref.getAndSet(streamOpen, true)) return
      const ready = yield* Deferred.make<void, TransportError>()
      yield* FiberSet.run(
        fibers,
        Effect.scoped(listen(ready)).pipe(
          Effect.catchAll((e) =>
            Effect.zipRight(
              Deferred.fail(ready, e),
              Effect.logWarning(`the notification stream of ${source} failed: ${e.message}`)
            )
          ),
          Effect.ensuring(Effect.zipRight(
            Ref.set(streamOpen, false),
            Deferred.fail(ready, new TransportClosed({ reason: `connection to ${def.url} closed` }))
          ))
        )
      )
      yield* Deferred.await(ready)
    }).pipe(Effect.withSpan("HttpTransport.openNotificationStream"))

    return openNotificationStream
  })
