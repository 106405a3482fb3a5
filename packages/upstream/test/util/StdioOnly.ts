/** A Transport over real child processes only, for integration tests of stdio upstreams. */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { openStdio } from "../../src/transport/StdioTransport.js"
import { Transport, TransportClosed } from "../../src/transport/Transport.js"

export const stdioTransport: Layer.Layer<Transport, never, CommandExecutor.CommandExecutor> = Layer.effect(
  Transport,
  Effect.map(Effect.context<CommandExecutor.CommandExecutor>(), (ctx) => ({
    open: (def) =>
      def.transport === "stdio"
        ? Effect.provide(openStdio(def, { killGrace: "500 millis" }), ctx)
        : Effect.fail(new TransportClosed({ reason: "this test transport only runs stdio upstreams" }))
  }))
)
