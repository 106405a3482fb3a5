/**
 * The Transport that picks the wire from the definition: a child process for stdio, Streamable
 * HTTP for a URL, and the 2024-11-05 HTTP+SSE transport when asked for it (the Prober's fallback).
 * Streamable HTTP gets its OAuth from UpstreamAuth when the context has one (without it, only the
 * definition's own headers are sent); HTTP+SSE predates MCP authorization and gets headers only.
 * When a `ProcessGroups` service is in the layer's context (the daemon's), stdio process groups
 * are recorded in it; everything else runs without.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
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

/** The Transport: stdio processes on node:child_process, HTTP on the platform's client. */
export const layer = (
  options: TransportOptions = {}
): Layer.Layer<Transport, never, HttpClient.HttpClient> =>
  Layer.effect(
    Transport,
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const auth = yield* Effect.serviceOption(UpstreamAuth)
      const credentials = (def: HttpDefinition) => {
        const found = Option.isSome(auth) ? auth.value.credentials(def) : undefined
        return found === undefined ? {} : { auth: found }
      }
      const groups = Option.getOrUndefined(yield* Effect.serviceOption(ProcessGroups))
      const stdio: StdioOptions = { ...options.stdio, ...(groups !== undefined ? { groups } : {}) }
      return Transport.of({
        open: (def, open = {}) =>
          def.transport === "stdio"
            ? openStdio(def, stdio)
            : Effect.provideService(
              open.wire === "http+sse" ? openHttpSse(def) : openHttp(def, credentials(def)),
              HttpClient.HttpClient,
              client
            )
      })
    })
  )
