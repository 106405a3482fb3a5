/**
 * `mcpx-fx serve --relay`: a host's stdio connection carried to the running daemon's `/mcp` over
 * its unix socket, so every host shares the daemon's upstream processes instead of starting its own.
 *
 * Each message from the host is POSTed on the upstream engine's Streamable HTTP connection to the
 * daemon (RelayDaemon.ts), with `X-Mcpx-Caller-Protocol` naming the revision the host speaks: the
 * daemon then serves the body by stdio's rules (no HTTP header mirroring, batches by the
 * negotiated revision) while HTTP carries it. What the daemon says about a request (progress, log
 * messages, its questions, then the response) becomes stdout lines in the order it arrives. The
 * host's answers to questions are POSTed back on the legacy session. A legacy session's GET stream
 * brings list_changed and resource updates; it is open before the line after
 * `notifications/initialized` is relayed. A session the daemon forgot (it restarted) is opened
 * again in the host's words. Batches and lines that are no JSON-RPC message go as they came, and
 * their replies come back as written.
 *
 * stdout keeps stdio's promises where HTTP would say more: a well-formed notification or response
 * is never answered, even when the daemon refused it, nor is a request the host cancelled, and a
 * request whose whole POST was refused (413) gets the refusal under its own id.
 *
 * Requests run concurrently; `notifications/cancelled` for a modern request closes its POST (the
 * daemon interrupts the call), and for a legacy one it is forwarded like any notification. At end
 * of input, requests in flight get the drain period, then the session is deleted. Told to stop
 * (SIGTERM) the host is still listening: reading ends, requests get the same drain, and what
 * still runs after it is answered with the shutdown error rather than dropped.
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import { ProtocolVersionKey } from "@mcpx-fx/protocol/Meta"
import * as Method from "@mcpx-fx/protocol/Method"
import * as Revision from "@mcpx-fx/protocol/Revision"
import { shutdownError } from "@mcpx-fx/server/Shutdown"
import type { TransportError } from "@mcpx-fx/upstream/transport/Transport"
import * as Wire from "@mcpx-fx/upstream/transport/Wire"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberMap from "effect/FiberMap"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as RelayDaemon from "./RelayDaemon.js"

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

/** The well-formed message a frame is, if it is one of the kind wanted. */
const wellFormed = <M extends JsonRpc.Message>(frame: JsonObject, is: (m: JsonRpc.Message) => m is M): M | undefined => {
  const decoded = JsonRpc.decodeMessage(frame)
  return Either.isRight(decoded) && is(decoded.right.message) ? decoded.right.message : undefined
}

/** How the relay behaves. */
export interface RelayOptions {
  readonly drain: Duration.DurationInput
  /** Completes when the process is told to stop (see the module comment). */
  readonly stop?: Effect.Effect<void>
}

/**
 * Relays `input` lines to the daemon listening on the unix socket `socket` and writes every reply
 * with `write`. Returns when input has ended and the drain is over.
 */
export const relay = <E>(
  socket: string,
  input: Stream.Stream<string, E>,
  write: (line: string) => Effect.Effect<void>,
  options: RelayOptions
) => Effect.scoped(Effect.flatMap(Wire.make({ socketPath: socket }), (wire) => relayOn(wire, input, write, options)))

/** `relay` over any wire to the daemon. */
export const relayOn = <E>(
  wire: Wire.Wire,
  input: Stream.Stream<string, E>,
  write: (line: string) => Effect.Effect<void>,
  options: RelayOptions
) =>
  Effect.gen(function*() {
    const daemon = yield* RelayDaemon.make(wire)
    const requests = yield* FiberMap.make<string>()
    const modernIds = new Set<string>()
    // Legacy requests the host cancelled: the daemon withholds their reply (a stream that ends
    // without one), and stdio answers a cancelled request with nothing, not with that failure.
    const cancelledIds = new Set<string>()
    let raws = 0
    // No lock around `write`: it puts each line out whole and in call order (serve's writeLine,
    // one process.stdout.write per line), as for StdioHost.
    const outParsed = (parsed: JsonRpc.Parsed) => write(JSON.stringify(parsed.raw))
    // A stop ends reading; `deadline` is the end of the drain that follows it.
    const stopped = yield* Deferred.make<void>()
    const deadline = yield* Deferred.make<void>()
    if (options.stop !== undefined) yield* Effect.forkScoped(Effect.zipRight(options.stop, Deferred.succeed(stopped, undefined)))
    yield* Effect.forkScoped(Stream.runForEach(daemon.unsolicited, outParsed))

    const failureFor = (id: unknown, message: string) =>
      write(JSON.stringify({ jsonrpc: JsonRpc.Version, id, error: { code: ErrorCode.InternalError, message } }))

    // A refusal of the whole POST (413) names no request, but its host is waiting for the
    // request's id, so the refusal is given it.
    const requestFailed = (id: JsonRpc.RequestId, e: TransportError) =>
      e._tag === "HTTPStatusError" && e.rpcError !== undefined
        ? write(JSON.stringify({ jsonrpc: JsonRpc.Version, id, error: e.rpcError }))
        : failureFor(id, `the mcpx-fx daemon did not answer: ${e.message}`)

    // Writes what a POST of a line as it came answered: nothing (202), one JSON body, or each SSE
    // event's data. An error naming no request gets the request's `id` when the line had one, else
    // "id": null, as stdio writes it (JsonRpc.withNullId).
    const emitRaw = (reply: RelayDaemon.RawReply, id?: unknown) => {
      if (reply._tag === "Events") return Stream.runForEach(reply.data, (data) => (data === "" ? Effect.void : write(data)))
      const body = reply.text.trim()
      if (body === "") return Effect.void
      const refusal = idlessError(body)
      return write(refusal === undefined ? body.replace(/\n/g, "") : JSON.stringify({ jsonrpc: JsonRpc.Version, id: id ?? null, error: refusal.error }))
    }
    const relayRaw = (line: string, revision: string, id?: unknown) => Effect.flatMap(daemon.postRaw(line, revision), (reply) => emitRaw(reply, id))

    const request = (frame: JsonObject, line: string) => {
      const modern = metaVersion(frame)
      const revision = modern ?? (frame.method === Method.Initialize ? initializeVersion(frame) : undefined)
      const req = wellFormed(frame, JsonRpc.isRequest)
      return Effect.gen(function*() {
        const caller = revision ?? (yield* daemon.negotiated) ?? Revision.OldestRevision
        // A request that is no JSON-RPC request is the daemon's to refuse, as stdio would.
        if (req === undefined) return yield* relayRaw(line, caller, frame.id)
        yield* daemon.request(req, { era: modern === undefined ? "legacy" : "modern", revision: caller }, outParsed).pipe(
          Effect.catchAll((e) => (cancelledIds.has(idKey(req.id)) ? Effect.void : requestFailed(req.id, e)))
        )
      }).pipe(
        Effect.scoped,
        Effect.catchAll((e) => failureFor(frame.id, `the mcpx-fx daemon did not answer: ${e.message}`))
      )
    }

    const notification = (frame: JsonObject, line: string) =>
      Effect.gen(function*() {
        const id = frame.method === Method.NotificationsCancelled && isJsonObject(frame.params) ? frame.params.requestId : undefined
        if (id !== undefined && modernIds.has(idKey(id))) {
          // A modern request is cancelled by closing its stream; the daemon interrupts the call.
          yield* FiberMap.remove(requests, idKey(id))
          return
        }
        const modern = metaVersion(frame)
        const revision = modern ?? (yield* daemon.negotiated) ?? Revision.OldestRevision
        const n = wellFormed(frame, JsonRpc.isNotification)
        // stdio never answers a notification, not even with an error, though HTTP refuses some
        // with a 400 body; only a malformed one is answered, as stdio answers it.
        if (n === undefined) return yield* relayRaw(line, revision)
        if (id !== undefined && (yield* FiberMap.has(requests, idKey(id)))) cancelledIds.add(idKey(id))
        yield* daemon.notify(n, { era: modern === undefined ? "legacy" : "modern", revision }).pipe(
          Effect.catchAll((e) => Effect.logDebug(`the daemon refused ${n.method}: ${e.message}`))
        )
        if (n.method === Method.Initialized) yield* daemon.openNotificationStream
      }).pipe(Effect.scoped, Effect.ignore)

    // A response: the host's answer to one of the daemon's questions, on the session.
    const response = (frame: JsonObject, line: string) =>
      Effect.gen(function*() {
        const revision = (yield* daemon.negotiated) ?? Revision.OldestRevision
        const answer = wellFormed(frame, JsonRpc.isResponse)
        if (answer === undefined) return yield* relayRaw(line, revision)
        yield* daemon.respond(answer, { era: "legacy", revision }).pipe(
          Effect.catchAll((e) => Effect.logDebug(`the daemon refused an answer: ${e.message}`))
        )
      }).pipe(Effect.scoped, Effect.ignore)

    const handleLine = (line: string) =>
      Effect.gen(function*() {
        if (line.trim() === "") return
        const parsed = parseLine(line)
        if (parsed === undefined || isBatch(parsed)) {
          // Batches and garbage are the daemon's to judge; their replies come back as written,
          // and they are drained at end of input like any request.
          const revision = (yield* daemon.negotiated) ?? Revision.OldestRevision
          yield* FiberMap.run(requests, `raw-${raws++}`, Effect.ignore(Effect.scoped(relayRaw(line, revision))))
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
          const answered = Effect.raceFirst(request(f, line), Effect.zipRight(Deferred.await(deadline), write(JSON.stringify(stopAnswer))))
          yield* FiberMap.run(
            requests,
            key,
            Effect.ensuring(
              answered,
              Effect.sync(() => {
                modernIds.delete(key)
                cancelledIds.delete(key)
              })
            )
          )
          return
        }
        if (typeof f.method === "string") return yield* notification(f, line)
        yield* response(f, line)
      })

    yield* Effect.raceFirst(Stream.runForEach(input, handleLine), Deferred.await(stopped))
    yield* Effect.timeout(FiberMap.awaitEmpty(requests), Duration.decode(options.drain)).pipe(Effect.ignore)
    if (yield* Deferred.isDone(stopped)) {
      yield* Deferred.succeed(deadline, undefined)
      yield* Effect.timeout(FiberMap.awaitEmpty(requests), Duration.seconds(1)).pipe(Effect.ignore)
    }
    // What still runs is interrupted; closing the scope then ends the session (DELETE).
    yield* FiberMap.clear(requests)
  }).pipe(Effect.scoped)
