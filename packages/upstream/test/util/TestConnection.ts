/** A Connection for Session tests: answers through `request`, quiet everywhere else unless told otherwise. */
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type { Established } from "../../src/session/SessionModel.js"
import { callThroughStream, type Connection } from "../../src/transport/Transport.js"

export const testConnection = (request: Connection["request"], overrides: Partial<Connection> = {}): Connection => ({
  request,
  call: callThroughStream(request),
  notify: () => Effect.void,
  respond: () => Effect.void,
  unsolicited: Stream.never,
  closed: Effect.never,
  stderrTail: Effect.succeed(""),
  openNotificationStream: Effect.void,
  wire: "streamable-http",
  ...overrides
})

/** A legacy session's handshake as the Prober would hand it to `makeSession`. */
export const legacyEstablished: Established = {
  era: "legacy",
  negotiated: "2025-11-25",
  eraSource: "probe",
  serverInfo: undefined,
  capabilities: {},
  instructions: undefined
}

/** A fake stdio connection: calls wait for `release`; untied messages come from `untied`; answers are recorded in `answers`. */
export const stdioConnection = Effect.gen(function*() {
  const untied = yield* Queue.unbounded<JsonRpc.Parsed>()
  const answers = yield* Queue.unbounded<JsonRpc.Response>()
  const release = yield* Deferred.make<void>()
  const conn = testConnection(() => Stream.never, {
    call: (req) => Effect.as(Deferred.await(release), JsonRpc.success(req.id, {})),
    respond: (r) => Queue.offer(answers, r),
    unsolicited: Stream.fromQueue(untied),
    wire: "stdio"
  })
  return { conn, answers, release, untied }
})
