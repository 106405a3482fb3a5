/**
 * The Transport that picks the wire from the definition: a child process for stdio, Streamable
 * HTTP for a URL, and the 2024-11-05 HTTP+SSE transport when asked for it (the Prober's fallback).
 * Streamable HTTP gets its OAuth from UpstreamAuth (`UpstreamAuth.none`: only the definition's own
 * headers are sent); HTTP+SSE predates MCP authorization and gets headers only. Stdio process
 * groups are recorded in the ProcessGroups given (`ProcessGroups.layerNone` records nothing).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { openHttpSse } from "./HttpSseTransport.js"
import { openHttp } from "./HttpTransport.js"
import { ProcessGroups } from "../os/ProcessGroups.js"
import type { HttpDefinition } from "../ServerDefinition.js"
import { openStdio, type StdioOptions } from "./StdioTransport.js"
import { Transport } from "./Transport.js"
import { UpstreamAuth } from "../auth/UpstreamAuth.js"

/** Options for the wires that have any. */
export interface TransportOptions {
  readonly stdio?: StdioOptions
}

/** The Transport: stdio processes on node:child_process, HTTP on undici's dispatcher (Wire.ts). */
export const layer = (
  options: TransportOptions = {}
): Layer.Layer<Transport, never, UpstreamAuth | ProcessGroups> =>
  Layer.effect(
    Transport,
    Effect.gen(function*() {
      const auth = yield* UpstreamAuth
      const credentials = (def: HttpDefinition) => {
        const found = auth.credentials(def)
        return found === undefined ? {} : { auth: found }
      }
      const groups = yield* ProcessGroups
      const stdio: StdioOptions = { ...options.stdio, groups }
      return Transport.of({
        open: (def, open = {}) =>
          def.transport === "stdio"
            ? openStdio(def, stdio)
            : open.wire === "http+sse"
            ? openHttpSse(def)
            : openHttp(def, credentials(def))
      })
    })
  )
