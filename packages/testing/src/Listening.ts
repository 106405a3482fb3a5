/** A test's own node:http server on loopback, for as long as the test's scope. */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * Listens on 127.0.0.1 at an ephemeral port and answers the port; when the scope closes, every
 * connection is cut (kept-alive ones would hold `close` open) and the server closed.
 */
export const listenLocal = (server: Server): Effect.Effect<number, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<number>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))),
    () =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )
