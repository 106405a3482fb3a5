/**
 * A scripted Transport for unit tests: every request is answered by a script (possibly after a
 * delay on the TestClock, possibly never), and every method sent is recorded.
 *
 * A recorder that carries a `connections` map also gets a handle on each connection, with which a
 * test can make the upstream "crash" (the connection closes on its own, as when a process exits)
 * and see whether the connection was closed.
 */
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { CutInPlace, inPlaceIn } from "../../src/transport/internal/InPlace.js"
import { callThroughStream, type Connection, Transport, TransportClosed, type TransportError } from "../../src/transport/Transport.js"

/** How the fake answers one request: a message, an error, or nothing (Effect.never). */
export type Script = (req: JsonRpc.Request, opened: number) => Effect.Effect<JsonRpc.Response, TransportError>

/** A test's handle on one opened connection. */
export interface FakeConnection {
  /** The connection's number (1-based, in opening order). */
  readonly n: number
  /** Closes the connection from the upstream's side: pending requests fail, `closed` completes. */
  readonly crash: (options?: { readonly reason?: string; readonly stderr?: string; readonly exitCode?: number }) => Effect.Effect<void>
  /** How the connection ended, once it has: its scope closed, or the upstream crashed. */
  readonly ended: () => "open" | "closed" | "crashed"
}

export interface Recorder {
  /** Methods sent (requests and notifications), with the connection number they went to. */
  readonly sent: Array<string>
  /** How many connections were opened. */
  opened: number
  /** When present, the fake adds a handle for every connection it opens, by number. */
  readonly connections?: Map<number, FakeConnection>
  /** When present, requests given up on before their answer (interrupted), as `n:method`. */
  readonly cancelled?: Array<string>
  /** When present, calls that ran in place (pool/internal/PoolInPlace.ts), as `n:method`. */
  readonly inPlace?: Array<string>
}

export const ok = (req: JsonRpc.Request, result: Record<string, unknown>): Effect.Effect<JsonRpc.Response> => Effect.succeed(JsonRpc.success(req.id, result))

export const err = (req: JsonRpc.Request, code: number, message: string, data?: unknown): Effect.Effect<JsonRpc.Response> =>
  Effect.succeed(JsonRpc.failure(req.id, code, message, data))

export const initializeResult = (version: string) => ({
  protocolVersion: version,
  capabilities: { tools: {} },
  serverInfo: { name: "fake", version: "1" }
})

export const discoverResult = (versions: ReadonlyArray<string>) => ({
  resultType: "complete",
  supportedVersions: versions,
  capabilities: { tools: {} },
  ttlMs: 0,
  cacheScope: "public",
  _meta: { "io.modelcontextprotocol/serverInfo": { name: "fake", version: "1" } }
})

/**
 * How the fake's connections run a call. "general": the Pool runs every call under `Abortable`.
 * "in-place": a stdio connection cuts calls in place as StdioTransport does, so the Pool runs a
 * call on a serving legacy session in its caller's fiber (pool/internal/PoolInPlace.ts), the path
 * production takes.
 */
export type FakeKind = "general" | "in-place"

/**
 * `call` as the in-place transports do it: a call running in place is cut by ending its wait with
 * CutInPlace (at once if it was cut already); the script's side is then interrupted, which is how
 * the fake records a cancelled request.
 */
const callInPlace = (request: Connection["request"], ranInPlace: (req: JsonRpc.Request) => void): Connection["call"] => {
  const general = callThroughStream(request)
  return (req, onMessage, hints) =>
    Effect.withFiberRuntime((fiber) => {
      const inPlace = inPlaceIn(fiber)
      if (inPlace === undefined) return general(req, onMessage, hints)
      ranInPlace(req)
      if (inPlace.isCut) return Effect.die(new CutInPlace())
      return Effect.flatMap(Deferred.make<never>(), (cut) => {
        const letGo = inPlace.waitingOn(() => Deferred.unsafeDone(cut, Exit.die(new CutInPlace())))
        return Effect.raceFirst(general(req, onMessage, hints), Deferred.await(cut)).pipe(
          Effect.ensuring(Effect.sync(letGo))
        )
      })
    })
}

export const fakeTransport = (
  script: Script,
  recorder: Recorder,
  wire: Connection["wire"] = "stdio",
  kind: FakeKind = "general"
): Layer.Layer<Transport> =>
  Layer.succeed(Transport, {
    open: () =>
      Effect.gen(function*() {
        const n = ++recorder.opened
        const closed = yield* Deferred.make<TransportClosed>()
        let ended: "open" | "closed" | "crashed" = "open"
        let stderr = ""
        yield* Effect.addFinalizer(() =>
          Effect.suspend(() => {
            if (ended === "open") ended = "closed"
            return Deferred.succeed(closed, new TransportClosed({ reason: "closed" }))
          })
        )
        recorder.connections?.set(n, {
          n,
          crash: (options = {}) =>
            Effect.suspend(() => {
              if (ended !== "open") return Effect.void
              ended = "crashed"
              stderr = options.stderr ?? ""
              return Deferred.succeed(
                closed,
                new TransportClosed({
                  reason: options.reason ?? "the process exited",
                  exitCode: options.exitCode ?? 1,
                  stderrTail: stderr
                })
              )
            }),
          ended: () => ended
        })
        // Like the real transports, a request still pending when the connection closes fails.
        const orClosed = <A>(self: Effect.Effect<A, TransportError>) => Effect.raceFirst(self, Effect.flatMap(Deferred.await(closed), Effect.fail))
        const request: Connection["request"] = (req) => {
          recorder.sent.push(`${n}:${req.method}`)
          return Stream.fromEffect(
            Effect.map(orClosed(script(req, n)), (message) => ({ message, raw: message as unknown as Record<string, unknown> })).pipe(
              Effect.onInterrupt(() => Effect.sync(() => void recorder.cancelled?.push(`${n}:${req.method}`)))
            )
          )
        }
        const inPlace = kind === "in-place" && wire === "stdio"
        const conn: Connection = {
          request,
          call: inPlace
            ? callInPlace(request, (req) => void recorder.inPlace?.push(`${n}:${req.method}`))
            : callThroughStream(request),
          notify: (note) => Effect.sync(() => void recorder.sent.push(`${n}:${note.method}`)),
          respond: () => Effect.void,
          unsolicited: Stream.never,
          closed: Deferred.await(closed),
          stderrTail: Effect.sync(() => stderr),
          openNotificationStream: Effect.void,
          wire,
          cutsInPlace: inPlace
        }
        return conn
      })
  })
