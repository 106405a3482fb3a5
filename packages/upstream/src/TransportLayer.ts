/**
 * The Transport that picks the wire from the definition: a child process for stdio, Streamable
 * HTTP for a URL, and the 2024-11-05 HTTP+SSE transport when asked for it (the Prober's fallback).
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as HttpClient from "@effect/platform/HttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { openHttpSse } from "./HttpSseTransport.js"
import { openHttp } from "./HttpTransport.js"
import { openStdio, type StdioOptions } from "./StdioTransport.js"
import { Transport } from "./Transport.js"

/** Options for the wires that have any. */
export interface TransportOptions {
  readonly stdio?: StdioOptions
}

/** The Transport on the platform's command executor and HTTP client. */
export const layer = (
  options: TransportOptions = {}
): Layer.Layer<Transport, never, CommandExecutor.CommandExecutor | HttpClient.HttpClient> =>
  Layer.effect(
    Transport,
    Effect.gen(function*() {
      const executor = yield* CommandExecutor.CommandExecutor
      const client = yield* HttpClient.HttpClient
      return Transport.of({
        open: (def, open = {}) =>
          def.transport === "stdio"
            ? Effect.provideService(openStdio(def, options.stdio), CommandExecutor.CommandExecutor, executor)
            : Effect.provideService(
              open.wire === "http+sse" ? openHttpSse(def) : openHttp(def),
              HttpClient.HttpClient,
              client
            )
      })
    })
  )
