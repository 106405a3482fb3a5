/**
 * The daemon as `serve --relay` (Relay.ts) speaks to it: the upstream engine's Streamable HTTP
 * connection to the daemon's `/mcp`, so the relay has the same session handling, caps and SSE
 * reading as a connection to any upstream, and no HTTP client of its own for what JSON-RPC can say.
 *
 * A session the daemon no longer knows (it restarted) comes back from the connection as
 * `SessionExpired`, and is renewed as the engine's Session renews one: initialize again on the
 * same connection, then send the message once more. The initialize is the host's own, so the host
 * never notices.
 *
 * What the connection cannot carry is what is no JSON-RPC message (or is a batch): its `request`,
 * `notify` and `respond` take typed messages. The daemon must judge those lines as stdio would, so
 * they go as they came, on the connection's session, by `postRaw`.
 */
import * as HeaderCodec from "@mcpx-fx/protocol/HeaderCodec"
import * as HeaderValue from "@mcpx-fx/protocol/HeaderValue"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Method from "@mcpx-fx/protocol/Method"
import { CallerProtocolHeader } from "@mcpx-fx/server/HttpHost"
import { HttpDefinition } from "@mcpx-fx/upstream/ServerDefinition"
import { openHttp } from "@mcpx-fx/upstream/transport/HttpTransport"
import * as Sse from "@mcpx-fx/upstream/transport/Sse"
import type { Connection, FrameTooLarge, RequestHints, TransportClosed, TransportError } from "@mcpx-fx/upstream/transport/Transport"
import * as Wire from "@mcpx-fx/upstream/transport/Wire"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

// A wire takes header names in lower case.
const CallerHeader = CallerProtocolHeader.toLowerCase()
const VersionHeader = HeaderCodec.ProtocolVersionHeader.toLowerCase()
const SessionHeader = HeaderCodec.SessionIdHeader.toLowerCase()

// The wire sends every request over the daemon's socket, so the URL's host is never resolved.
const Daemon = new HttpDefinition({ transport: "http", name: "the mcpx-fx daemon", url: "http://mcpx-fx.daemon/mcp" })

/** Who sent a message: the era it is of, and the revision its host speaks (X-Mcpx-Caller-Protocol). */
export interface Caller {
  readonly era: "legacy" | "modern"
  readonly revision: string
}

/** What a POST answered, as `postRaw` hands it on: a body, or the data of each SSE event. */
export type RawReply =
  | { readonly _tag: "Body"; readonly text: string }
  | { readonly _tag: "Events"; readonly data: Stream.Stream<string, TransportClosed | FrameTooLarge> }

/** The connection to the daemon over `wire`; its scope ends the session (DELETE) and the notification stream. */
export const make = (wire: Wire.Wire) =>
  Effect.gen(function*() {
    const conn: Connection = yield* openHttp(Daemon, { wire })
    const sessionId = conn.sessionId ?? Effect.sync((): string | undefined => undefined)
    // The version the host's initialize settled on: a message of that revision carries it as
    // MCP-Protocol-Version, as a legacy client's would.
    const negotiated = yield* Ref.make<string | undefined>(undefined)
    // The host's own initialize, kept so that a session the daemon forgot is opened in its words.
    let initialization: { readonly request: JsonRpc.Request; readonly caller: Caller } | undefined
    const renewing = yield* Effect.makeSemaphore(1)

    const headers = (revision: string) =>
      Effect.map(Ref.get(negotiated), (version): Record<string, string> => ({
        // Whatever a host wrote as its version must still be sendable, or the POST never leaves.
        [CallerHeader]: HeaderValue.encodeValue(revision),
        ...(version === undefined || revision !== version ? {} : { [VersionHeader]: version })
      }))
    const hints = (caller: Caller) => Effect.map(headers(caller.revision), (h): RequestHints => ({ era: caller.era, headers: h }))

    // Returns once the daemon has answered the GET (it sends its headers at once), so the stream is
    // registered before the next line is relayed: a notification sent after that has somewhere to go.
    // Bounded all the same: a daemon that held its headers back must not stall the host's input.
    const openNotificationStream = Effect.gen(function*() {
      if ((yield* sessionId) === undefined) return
      yield* conn.openNotificationStream.pipe(
        Effect.timeout(Duration.seconds(5)),
        Effect.catchAll((e) => Effect.logDebug(`no notification stream from the daemon: ${e.message}`))
      )
    })

    /**
     * Opens a new session once the connection forgot one (`ended`, or undefined when found gone):
     * initialize as the host did, notifications/initialized, the GET stream. Messages that met the
     * same expiry wait for the first one's renewal and use it. False when the daemon refused.
     */
    const renew = (ended: string | undefined) =>
      renewing.withPermits(1)(
        Effect.gen(function*() {
          // The connection forgot `ended` when it expired; any session now is someone's renewal.
          const current = yield* sessionId
          if (current !== undefined) return current !== ended
          const init = initialization
          if (init === undefined) return false
          const replies = yield* Stream.runCollect(conn.request(init.request, yield* hints(init.caller)))
          const opened = [...replies].some((p) => JsonRpc.isSuccess(p.message))
          if (!opened || (yield* sessionId) === undefined) return false
          yield* Effect.logInfo("the daemon no longer knew the session (restarted?); opened a new one")
          const version = yield* Ref.get(negotiated)
          const caller: Caller = { era: "legacy", revision: version ?? init.caller.revision }
          yield* conn.notify(JsonRpc.notification(Method.Initialized), yield* hints(caller))
          yield* openNotificationStream
          return true
        }).pipe(Effect.orElseSucceed(() => false))
      )

    /**
     * `send`, and once more on a new session when the daemon forgot the one it went on. A message
     * that finds the session already forgotten (another met the expiry first) waits for the renewal
     * rather than going without one. Modern messages belong to no session.
     */
    const renewingOnce = <A>(caller: Caller, send: Effect.Effect<A, TransportError>): Effect.Effect<A, TransportError> =>
      caller.era === "modern" ? send : Effect.gen(function*() {
        if (initialization !== undefined && (yield* sessionId) === undefined) yield* renew(undefined)
        return yield* Effect.catchTag(send, "SessionExpired", (e) => Effect.flatMap(renew(e.sessionId), (renewed) => (renewed ? send : Effect.fail(e))))
      })

    /**
     * Sends a request; what the daemon says about it and its response go to `onMessage` in order.
     * An initialize that opened a session is kept for renewals, and its response settles the
     * negotiated version.
     */
    const request = (req: JsonRpc.Request, caller: Caller, onMessage: (parsed: JsonRpc.Parsed) => Effect.Effect<void>) => {
      if (req.method !== Method.Initialize) {
        return renewingOnce(caller, Effect.flatMap(hints(caller), (h) => Stream.runForEach(conn.request(req, h), onMessage)))
      }
      // initialize starts a session rather than continuing one: there is none to renew.
      return Effect.gen(function*() {
        let opened = false
        yield* Stream.runForEach(conn.request(req, yield* hints(caller)), (parsed) => {
          const m = parsed.message
          const result = JsonRpc.isSuccess(m) ? m.result : undefined
          opened ||= result !== undefined
          const settled = typeof result?.protocolVersion === "string" ? Ref.set(negotiated, result.protocolVersion) : Effect.void
          return Effect.zipRight(settled, onMessage(parsed))
        })
        if (opened && (yield* sessionId) !== undefined) initialization = { request: req, caller }
      })
    }

    const notify = (notification: JsonRpc.Notification, caller: Caller) =>
      renewingOnce(caller, Effect.flatMap(hints(caller), (h) => conn.notify(notification, h)))

    const respond = (response: JsonRpc.Response, caller: Caller) => renewingOnce(caller, Effect.flatMap(hints(caller), (h) => conn.respond(response, h)))

    /**
     * POSTs `line` as it came, on the session, and reads the reply under the connection's caps. A
     * forgotten session is not renewed here: the daemon judges such a line without one.
     */
    const postRaw = (line: string, revision: string): Effect.Effect<RawReply, FrameTooLarge | TransportClosed, Scope.Scope> =>
      Effect.gen(function*() {
        const sid = yield* sessionId
        const response = yield* wire.send({
          method: "POST",
          url: Daemon.url,
          headers: {
            ...(yield* headers(revision)),
            accept: "application/json, text/event-stream",
            "content-type": "application/json",
            ...(sid === undefined ? {} : { [SessionHeader]: sid })
          },
          body: line
        })
        return (response.headers["content-type"] ?? "").startsWith("text/event-stream")
          ? { _tag: "Events", data: Stream.map(Sse.events(Wire.stream(response), Sse.DefaultMaxFrameBytes), (event) => event.data) }
          : { _tag: "Body", text: yield* response.text(Sse.DefaultMaxFrameBytes) }
      })

    return {
      request,
      notify,
      respond,
      postRaw,
      openNotificationStream,
      /** What the daemon said on no request's stream: the GET stream's notifications and questions. */
      unsolicited: conn.unsolicited,
      negotiated: Ref.get(negotiated)
    }
  })
