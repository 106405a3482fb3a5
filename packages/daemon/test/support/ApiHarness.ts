/**
 * The /v1 API over a real gateway on era-server fixtures, served through
 * `HttpApiBuilder.toWebHandler` (no sockets): what Api.test.ts and Ask.test.ts share.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import type { EraCache } from "@mcpx-fx/upstream/era/EraCache"
import { UpstreamAuth } from "@mcpx-fx/upstream/auth/UpstreamAuth"
import type { ToolCatalog } from "@mcpx-fx/gateway/ToolCatalog"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { DaemonInfo } from "../../src/Api.js"
import * as ApiHandlers from "../../src/ApiHandlers.js"
import { ConfigWatcher } from "../../src/ConfigWatcher.js"
import * as RecentCalls from "../../src/RecentCalls.js"
import { Config } from "@mcpx-fx/config/Config"
import * as TestGateway from "@mcpx-fx/testing/gateway/TestGateway"
import * as TestTasks from "@mcpx-fx/testing/server/TestTasks"
import * as GatewayBackend from "@mcpx-fx/gateway/GatewayBackend"

/** A server whose process exits at once. */
export const broken = { command: process.execPath, args: ["-e", "process.stderr.write('no token configured'); process.exit(4)"] }

/** The daemon identity the tests give the API. */
export const daemon = { version: "9.9.9-test", pid: 4242, startedAt: Date.now(), address: "127.0.0.1", port: 7717 } as const

/** Everything the API runs on; the daemon names the config files it loaded, as the real one does. */
export const dependencies = (
  mcpServers: Record<string, unknown>,
  options: TestGateway.Options = {}
): Layer.Layer<ApiHandlers.Requirements | EraCache | ToolCatalog> =>
  Layer.mergeAll(
    Layer.effect(DaemonInfo, Effect.map(Config, (config) => ({ ...daemon, configFiles: config.files }))),
    GatewayBackend.layer,
    TestTasks.layer,
    RecentCalls.off,
    // No watcher (status shows no `config`) and no OAuth (no server shows an authorization).
    ConfigWatcher.none,
    UpstreamAuth.none
  ).pipe(Layer.provideMerge(TestGateway.layer(mcpServers, options)))

/** A web handler for the API over the services already in context (disposed with the scope). */
export const webHandler = Effect.gen(function*() {
  const context = yield* Effect.context<ApiHandlers.Requirements>()
  const served = Layer.mergeAll(ApiHandlers.layer, HttpServer.layerContext).pipe(Layer.provide(Layer.succeedContext(context)))
  return yield* Effect.acquireRelease(
    Effect.sync(() => HttpApiBuilder.toWebHandler(served)),
    (web) => Effect.promise(() => web.dispose())
  )
})

/** A request to the API; `body` is sent as JSON, and a POST or PUT says JSON even without one (as `/v1` needs). */
export const send = (
  handler: (request: Request) => Promise<Response>,
  method: string,
  path: string,
  body?: unknown
) =>
  Effect.promise(() =>
    handler(
      new Request(`http://mcpx.test${path}`, {
        method,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(body === undefined && method !== "POST" && method !== "PUT" ? {} : { headers: { "content-type": "application/json" } })
      })
    )
  )

/** A response's status and JSON body. */
export const json = (response: Response) =>
  Effect.map(Effect.promise(() => response.json() as Promise<Record<string, unknown>>), (body) => ({ status: response.status, body }))

/** Sends a request and reads the JSON answer. */
export const call = (
  handler: (request: Request) => Promise<Response>,
  method: string,
  path: string,
  body?: unknown
) => Effect.flatMap(send(handler, method, path, body), json)
