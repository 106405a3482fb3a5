/** A Connection for Session tests: answers through `request`, quiet everywhere else unless told otherwise. */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { callThroughStream, type Connection } from "../../src/Transport.js"

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
