/**
 * A scripted Transport for unit tests: every request is answered by a script (possibly after a
 * delay on the TestClock, possibly never), and every method sent is recorded.
 */
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { Transport, TransportClosed, type Connection, type TransportError } from "../../src/Transport.js"

/** How the fake answers one request: a message, an error, or nothing (Effect.never). */
export type Script = (req: JsonRpc.Request, opened: number) => Effect.Effect<JsonRpc.Response, TransportError>

export interface Recorder {
  /** Methods sent (requests and notifications), with the connection number they went to. */
  readonly sent: Array<string>
  /** How many connections were opened. */
  opened: number
}

export const ok = (req: JsonRpc.Request, result: Record<string, unknown>): Effect.Effect<JsonRpc.Response> =>
  Effect.succeed(JsonRpc.success(req.id, result))

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

export const fakeTransport = (script: Script, recorder: Recorder, wire: Connection["wire"] = "stdio"): Layer.Layer<Transport> =>
  Layer.succeed(Transport, {
    open: () =>
      Effect.gen(function*() {
        const n = ++recorder.opened
        const closed = yield* Deferred.make<TransportClosed>()
        yield* Effect.addFinalizer(() => Deferred.succeed(closed, new TransportClosed({ reason: "closed" })))
        const conn: Connection = {
          request: (req) => {
            recorder.sent.push(`${n}:${req.method}`)
            return Stream.fromEffect(
              Effect.map(script(req, n), (message) => ({ message, raw: message as unknown as Record<string, unknown> }))
            )
          },
          notify: (note) => Effect.sync(() => void recorder.sent.push(`${n}:${note.method}`)),
          respond: () => Effect.void,
          unsolicited: Stream.never,
          closed: Deferred.await(closed),
          stderrTail: Effect.succeed(""),
          openNotificationStream: Effect.void,
          wire
        }
        return conn
      })
  })
