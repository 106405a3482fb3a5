/**
 * What the modern and legacy halves of `/mcp` (HttpModern.ts, HttpLegacy.ts) share of the
 * endpoint HttpHost.ts builds.
 */
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type { Server } from "../Server.js"

export interface Deps {
  readonly server: Server["Type"]
  /** A request run so that, for a listen, the process's stop closes it. */
  readonly settled: (message: JsonRpc.Request, handled: Effect.Effect<JsonRpc.Response | undefined>) => Effect.Effect<JsonRpc.Response | undefined>
  /** Events with keep-alive comments between them, ending when the events end. */
  readonly withKeepAlive: (events: Stream.Stream<Uint8Array>) => Stream.Stream<Uint8Array>
}
