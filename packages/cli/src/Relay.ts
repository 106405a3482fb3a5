/**
 * `mcpx-fx serve --relay`: a host's stdio connection carried to the running daemon's `/mcp` over
 * its unix socket, so every host shares the daemon's upstream processes instead of starting its own.
 *
 * Each line from the host is POSTed as it came, with `X-Mcpx-Caller-Protocol` naming the revision
 * the host speaks: the daemon then serves the body by stdio's rules (no HTTP header mirroring,
 * batches by the negotiated revision) while HTTP carries it. Replies — a JSON body, or the events
 * of an SSE body (progress, log messages, the daemon's questions, then the response) — become
 * stdout lines in the order they arrive. The host's answers to questions are POSTed back on the
 * legacy session. A legacy session's GET stream brings list_changed and resource updates; it is
 * open before the line after `notifications/initialized` is relayed.
 *
 * stdout keeps stdio's promises where HTTP would say more: a well-formed notification or response
 * is never answered, even when the daemon refused it, and a request whose whole POST was refused
 * (413, an ended session's 404) gets the refusal under its own id.
 *
 * Requests run concurrently; `notifications/cancelled` for a modern request closes its POST (the
 * daemon interrupts the call), and for a legacy one it is forwarded like any notification. At end
 * of input, requests in flight get the drain period, then the session is deleted. Told to stop
 * (SIGTERM) the host is still listening: reading ends, requests get the same drain, and what
 * still runs after it is answered with the shutdown error rather than dropped.
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as HeaderCodec from "@mcpx-fx/protocol/HeaderCodec"
import * as HeaderValue from "@mcpx-fx/protocol/HeaderValue"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import { ProtocolVersionKey } from "@mcpx-fx/protocol/Meta"
import * as Method from "@mcpx-fx/protocol/Method"
import * as Revision from "@mcpx-fx/protocol/Revision"
import { CallerProtocolHeader } from "@mcpx-fx/server/HttpHost"
import { shutdownError } from "@mcpx-fx/server/Shutdown"
import * as Sse from "@mcpx-fx/upstream/transport/Sse"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberMap from "effect/FiberMap"
import * as FiberSet from "effect/FiberSet"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

// Node's HTTP client gives header names in lower case.
const SessionId = HeaderCodec.SessionIdHeader.toLowerCase()
const ProtocolVersion = HeaderCodec.ProtocolVersionHeader.toLowerCase()

/** A line from the host as JSON: one message (an object), a batch, or undefined for anything else. */
const parseLine = (line: string): JsonObject | ReadonlyArray<unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(line)
    return Array.isArray(value) ? value : isJsonObject(value) ? value : undefined
  } catch {
    return undefined
  }
}

/** The revision a modern request names in its `_meta`. */
const metaVersion = (frame: JsonObject): string | undefined => {
  const meta = isJsonObject(frame.params) ? frame.params._meta : undefined
  const version = isJsonObject(meta) ? meta[ProtocolVersionKey] : undefined
  return typeof version === "string" ? version : undefined
}

/** The revision an initialize asks for (the oldest when it names none). */
const initializeVersion = (frame: JsonObject): string => {
  const asked = isJsonObject(frame.params) ? frame.params.protocolVersion : undefined
  return typeof asked === "string" ? asked : Revision.OldestRevision
}

// Array.isArray does not narrow a ReadonlyArray out of a union.
const isBatch = (value: JsonObject | ReadonlyArray<unknown>): value is ReadonlyArray<unknown> => Array.isArray(value)

const isRequestId = Schema.is(JsonRpc.RequestId)

const idKey = (id: unknown): string => JSON.stringify(id)

/** The body, if it is one error response that names no request. */
const idlessError = (body: string): JsonObject | undefined => {
  const parsed = parseLine(body)
  if (parsed === undefined || isBatch(parsed)) return undefined
  return "error" in parsed && (parsed.id === undefined || parsed.id === null) ? parsed : undefined
}

/** The version an initialize response settled on. */
const negotiatedVersion = (body: string): string | undefined => {
  const parsed = parseLine(body)
  const result = parsed !== undefined && !isBatch(parsed) ? parsed.result : undefined
  const version = isJsonObject(result) ? result.protocolVersion : undefined
  return typeof version === "string" ? version : undefined
}

/** How the relay behaves. */
export interface RelayOptions {
  readonly drain: Duration.DurationInput
  /** Completes when the process is told to stop (see the module comment). */
  readonly stop?: Effect.Effect<void>
}

/**
 * Relays `input` lines to the daemon through `HttpClient` (already pointed at the daemon) and
 * writes every reply with `write`. Returns when input has ended and the drain is over.
 */
export const relay = <E>(
  input: Stream.Stream<string, E>,
  write: (line: string) => Effect.Effect<void>,
  options: RelayOptions
) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const session = yield* Ref.make<string | undefined>(undefined)
    const negotiated = yield* Ref.make<string | undefined>(undefined)
    const requests = yield* FiberMap.make<string>()
    const background = yield* FiberSet.make()
    const modernIds = new Set<string>()
    let batches = 0
    const lock = yield* Effect.makeSemaphore(1)
    const out = (line: string) => lock.withPermits(1)(write(line))
    // A stop ends reading; `deadline` is the end of the drain that follows it.
    const stopped = yield* Deferred.make<void>()
    const deadline = yield* Deferred.make<void>()
    if (options.stop !== undefined) yield* Effect.forkScoped(Effect.zipRight(options.stop, Deferred.succeed(stopped, undefined)))

    const failureFor = (id: unknown, message: string) => out(JSON.stringify({ jsonrpc: "2.0", id, error: { code: ErrorCode.InternalError, message } }))

    const headers = (revision: string | undefined) =>
      Effect.gen(function*() {
        const sid = yield* Ref.get(session)
        const version = yield* Ref.get(negotiated)
        return {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          // Whatever a host wrote as its version must still be sendable, or the POST never leaves.
          ...(revision === undefined ? {} : { [CallerProtocolHeader]: HeaderValue.encodeValue(revision) }),
          ...(sid === undefined ? {} : { [SessionId]: sid }),
          ...(version === undefined || revision !== version ? {} : { [ProtocolVersion]: version })
        }
      })

    // Writes what a POST answered: nothing (202), one JSON body, or each SSE event's data. A
    // refusal of the whole POST (413, an ended session's 404) names no request, but when the POST
    // carried one request (`id`) its host is waiting for that id, so the refusal is given it.
    const emit = (response: HttpClientResponse.HttpClientResponse, id?: unknown) =>
      Effect.gen(function*() {
        const type = response.headers["content-type"] ?? ""
        if (type.startsWith("text/event-stream")) {
          // The same cap on one event as an upstream's stream gets: a daemon is not trusted more.
          yield* Sse.events(response.stream, Sse.DefaultMaxFrameBytes).pipe(
            Stream.runForEach((event) => (event.data === "" ? Effect.void : out(event.data)))
          )
          return
        }
        const body = (yield* response.text).trim()
        if (body === "") return
        // An error naming no request gets "id": null, as stdio writes it (JsonRpc.withNullId).
        const refusal = idlessError(body)
        yield* out(refusal === undefined ? body.replace(/\n/g, "") : JSON.stringify({ jsonrpc: "2.0", id: id ?? null, error: refusal.error }))
      })

    // stdio never answers a notification or a response, not even with an error, though HTTP
    // refuses some with a 400 body; only a malformed one is answered, as stdio answers it.
    const emitUnlessWellFormed = (frame: JsonObject) => (response: HttpClientResponse.HttpClientResponse) =>
      Either.isLeft(JsonRpc.decodeMessage(frame))
        ? emit(response)
        : Effect.flatMap(
          response.text,
          (body) => body.trim() === "" ? Effect.void : Effect.logDebug(`the daemon answered a ${response.status}: ${body.trim()}`)
        )

    const post = (line: string, revision: string | undefined) =>
      Effect.flatMap(headers(revision), (h) =>
        client.execute(
          HttpClientRequest.post("/mcp").pipe(
            HttpClientRequest.setHeaders(h),
            HttpClientRequest.bodyText(line, "application/json")
          )
        ))

    // Returns once the daemon has answered the GET (it sends its headers at once), so the stream is
    // registered before the next line is relayed: a notification sent after that has somewhere to go.
    const openGetStream = Effect.gen(function*() {
      const sid = yield* Ref.get(session)
      if (sid === undefined) return
      const opened = yield* Deferred.make<void>()
      yield* FiberSet.run(
        background,
        Effect.gen(function*() {
          const response = yield* client.execute(
            HttpClientRequest.get("/mcp").pipe(
              HttpClientRequest.setHeaders({ accept: "text/event-stream", [SessionId]: sid })
            )
          )
          yield* Deferred.succeed(opened, undefined)
          if (response.status === 200) yield* emit(response)
        }).pipe(Effect.scoped, Effect.ignore, Effect.ensuring(Deferred.succeed(opened, undefined)))
      )
      // Bounded all the same: a daemon that held its headers back must not stall the host's input.
      yield* Deferred.await(opened).pipe(Effect.timeout(Duration.seconds(5)), Effect.ignore)
    })

    // The host's own initialize, kept so that a session the daemon no longer knows (it restarted)
    // can be opened again in the host's words, without the host noticing.
    let initialization: { readonly line: string; readonly revision: string } | undefined
    const renewing = yield* Effect.makeSemaphore(1)

    /**
     * Opens a new session after the daemon answered 404 for `ended`: initialize as the host did,
     * notifications/initialized, the GET stream. Requests that met the same 404 at once wait for
     * the first one's renewal and use it. False when there is nothing to renew with.
     */
    const renewSession = (ended: string) =>
      renewing.withPermits(1)(
        Effect.gen(function*() {
          const current = yield* Ref.get(session)
          if (current !== ended) return current !== undefined
          const init = initialization
          if (init === undefined) return false
          yield* Ref.set(session, undefined)
          const opened = yield* post(init.line, init.revision)
          const sid = opened.headers[SessionId]
          if (opened.status !== 200 || sid === undefined) return false
          yield* Ref.set(session, sid)
          yield* Effect.logInfo("the daemon no longer knew the session (restarted?); opened a new one")
          const version = yield* Ref.get(negotiated)
          yield* Effect.scoped(post(JSON.stringify({ jsonrpc: "2.0", method: Method.Initialized }), version ?? init.revision))
          yield* openGetStream
          return true
        }).pipe(Effect.scoped, Effect.orElseSucceed(() => false))
      )

    const request = (frame: JsonObject, line: string) => {
      const revision = metaVersion(frame) ?? (frame.method === Method.Initialize ? initializeVersion(frame) : undefined)
      return Effect.gen(function*() {
        const caller = revision ?? (yield* Ref.get(negotiated)) ?? Revision.OldestRevision
        if (frame.method === Method.Initialize) initialization = { line, revision: caller }
        const sent = yield* Ref.get(session)
        let response = yield* post(line, caller)
        if (response.status === 404 && sent !== undefined && frame.method !== Method.Initialize && (yield* renewSession(sent))) {
          response = yield* post(line, caller)
        }
        if (frame.method === Method.Initialize) {
          const sid = response.headers[SessionId]
          if (sid !== undefined) yield* Ref.set(session, sid)
        }
        if (frame.method === Method.Initialize && response.status === 200) {
          const body = yield* response.text
          const version = negotiatedVersion(body)
          if (version !== undefined) yield* Ref.set(negotiated, version)
          yield* out(body.trim())
          return
        }
        yield* emit(response, frame.id)
      }).pipe(
        Effect.scoped,
        Effect.catchAll((e) => failureFor(frame.id, `the mcpx-fx daemon did not answer: ${e.message}`))
      )
    }

    const notification = (frame: JsonObject, line: string) =>
      Effect.gen(function*() {
        if (frame.method === Method.NotificationsCancelled) {
          const id = isJsonObject(frame.params) ? frame.params.requestId : undefined
          if (modernIds.has(idKey(id))) {
            // A modern request is cancelled by closing its stream; the daemon interrupts the call.
            yield* FiberMap.remove(requests, idKey(id))
            return
          }
        }
        const response = yield* post(line, metaVersion(frame) ?? (yield* Ref.get(negotiated)) ?? Revision.OldestRevision)
        yield* emitUnlessWellFormed(frame)(response)
        if (frame.method === Method.Initialized) yield* openGetStream
      }).pipe(Effect.scoped, Effect.ignore)

    const handleLine = (line: string) =>
      Effect.gen(function*() {
        if (line.trim() === "") return
        const parsed = parseLine(line)
        if (parsed === undefined || isBatch(parsed)) {
          // Batches and garbage are the daemon's to judge; their replies come back as written,
          // and they are drained at end of input like any request.
          const caller = (yield* Ref.get(negotiated)) ?? Revision.OldestRevision
          yield* FiberMap.run(requests, `batch-${batches++}`, Effect.ignore(Effect.scoped(Effect.flatMap(post(line, caller), emit))))
          return
        }
        const f = parsed
        if (typeof f.method === "string" && f.id !== undefined) {
          const key = idKey(f.id)
          if (metaVersion(f) !== undefined) modernIds.add(key)
          // initialize settles the session every later request needs, so it is awaited in line.
          if (f.method === Method.Initialize) return yield* request(f, line)
          // An id that is no JSON-RPC id is the daemon's to refuse; at a stop it is answered as null.
          const stopAnswer = isRequestId(f.id) ? shutdownError(f.id) : { ...shutdownError(0), id: null }
          const answered = Effect.raceFirst(request(f, line), Effect.zipRight(Deferred.await(deadline), out(JSON.stringify(stopAnswer))))
          yield* FiberMap.run(requests, key, Effect.ensuring(answered, Effect.sync(() => modernIds.delete(key))))
          return
        }
        if (typeof f.method === "string") return yield* notification(f, line)
        // A response: the host's answer to one of the daemon's questions.
        const caller = (yield* Ref.get(negotiated)) ?? Revision.OldestRevision
        yield* Effect.ignore(Effect.scoped(Effect.flatMap(post(line, caller), emitUnlessWellFormed(f))))
      })

    yield* Effect.raceFirst(Stream.runForEach(input, handleLine), Deferred.await(stopped))
    yield* Effect.timeout(FiberMap.awaitEmpty(requests), Duration.decode(options.drain)).pipe(Effect.ignore)
    if (yield* Deferred.isDone(stopped)) {
      yield* Deferred.succeed(deadline, undefined)
      yield* Effect.timeout(FiberMap.awaitEmpty(requests), Duration.seconds(1)).pipe(Effect.ignore)
    }
    yield* FiberMap.clear(requests)
    yield* FiberSet.clear(background)
    const sid = yield* Ref.get(session)
    if (sid !== undefined) {
      yield* client.execute(HttpClientRequest.del("/mcp").pipe(HttpClientRequest.setHeader(SessionId, sid))).pipe(
        Effect.scoped,
        Effect.ignore
      )
    }
  }).pipe(Effect.scoped)
