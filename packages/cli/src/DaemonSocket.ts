/**
 * The HTTP client for the daemon's unix socket: undici, whose agent connects every request to the
 * socket. (Node's own client over a unix socket sometimes fails a request whose large body the
 * daemon refused before reading it, instead of reading the refusal.)
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Agent } from "undici"

/** The base URL requests over the socket are addressed to; the host part is never resolved. */
const socketBaseUrl = "http://mcpx-fx.daemon"

/**
 * `/v1` refuses a POST or PUT not declared JSON (HttpJsonBody), body-less ones included
 * (`/v1/probe/{server}`, `/v1/ask/{id}/abandon`), which the typed client sends without a type.
 */
const declaredJson = (request: HttpClientRequest.HttpClientRequest): HttpClientRequest.HttpClientRequest =>
  (request.method === "POST" || request.method === "PUT") && request.body._tag === "Empty"
    ? HttpClientRequest.setHeader(request, "content-type", "application/json")
    : request

/** An HttpClient whose every request goes to the daemon over its unix socket. */
export const socketClient = (socket: string): Layer.Layer<HttpClient.HttpClient> =>
  Layer.unwrapScoped(
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => new Agent({ connect: { socketPath: socket } })),
        (agent) => Effect.promise(() => agent.close())
      ),
      (agent) =>
        Layer.effect(
          HttpClient.HttpClient,
          Effect.map(
            HttpClient.HttpClient,
            HttpClient.mapRequest((request) => declaredJson(HttpClientRequest.prependUrl(request, socketBaseUrl)))
          )
        ).pipe(
          Layer.provide(NodeHttpClient.layerUndiciWithoutDispatcher),
          Layer.provide(Layer.succeed(NodeHttpClient.Dispatcher, agent))
        )
    )
  )
