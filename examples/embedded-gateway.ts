/**
 * The gateway embedded in another Effect program, with a Config layer of its own instead of
 * config files: the servers are declared in code, the settings come from a plain record, and the
 * program uses the aggregated tool list and routed calls like any other service.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Config, type LoadedConfig } from "@mcpx-fx/config/Config"
import { Gateway } from "@mcpx-fx/gateway/Gateway"
import { PendingCalls } from "@mcpx-fx/gateway/PendingCalls"
import { Settings } from "@mcpx-fx/config/Settings"
import { EraCache } from "@mcpx-fx/upstream/era/EraCache"
import { Negotiator } from "@mcpx-fx/upstream/era/Negotiator"
import { Pool } from "@mcpx-fx/upstream/pool/Pool"
import { Prober } from "@mcpx-fx/upstream/era/Prober"
import { StdioDefinition } from "@mcpx-fx/upstream/ServerDefinition"
import * as TransportLayer from "@mcpx-fx/upstream/transport/TransportLayer"
import { UpstreamAuth } from "@mcpx-fx/upstream/auth/UpstreamAuth"
import { ProcessGroups } from "@mcpx-fx/upstream/os/ProcessGroups"
import { ToolCatalog } from "@mcpx-fx/gateway/ToolCatalog"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** The servers this program fronts, as a configuration built in code. */
export const configOf = (servers: ReadonlyArray<{ readonly name: string; readonly command: string; readonly args: ReadonlyArray<string> }>): LoadedConfig => ({
  files: [],
  explicit: true,
  disabled: [],
  settingsFiles: [],
  servers: servers.map((s) => ({
    name: s.name,
    namespace: s.name,
    file: "(embedded)",
    pool: {},
    definition: new StdioDefinition({ transport: "stdio", name: s.name, command: s.command, args: [...s.args] })
  }))
})

/** The gateway and everything under it, on a Config layer supplied by the embedding program. */
export const gatewayLayer = (config: Layer.Layer<Config>) =>
  Gateway.layer.pipe(
    // Questions an upstream asks that no one can be said to have caused are held here.
    Layer.provide(PendingCalls.layer),
    Layer.provide(Settings.layer({ flags: { "--upstream-protocol": "follow" } })),
    Layer.provide(config),
    Layer.provide(
      Pool.layer.pipe(
        Layer.provideMerge(Prober.layer),
        Layer.provideMerge(EraCache.layerMemory),
        Layer.provide(Negotiator.layer),
        Layer.provide(TransportLayer.layer()),
        // No OAuth tokens kept and no process groups recorded: nothing of this program's on disk.
        Layer.provide(Layer.mergeAll(FetchHttpClient.layer, UpstreamAuth.none, ProcessGroups.layerNone))
      )
    ),
    // Tool listings and their schemas are kept in memory only.
    Layer.provide(ToolCatalog.layerMemory),
    Layer.provide(NodeContext.layer)
  )

/** Lists every tool across the servers, then greets each server through the gateway. */
export const program = Effect.gen(function*() {
  const gateway = yield* Gateway
  const listing = yield* gateway.listTools({})
  const names = listing.items.map((t) => String(t.name))
  const greetings = yield* Effect.forEach(
    gateway.servers.filter((s) => names.includes(`${s.namespace}__hello`)),
    (s) => Effect.map(gateway.callTool({}, `${s.namespace}__hello`, {}), (r) => ({ server: s.name, result: r })),
    { concurrency: "unbounded" }
  )
  return { tools: names, failures: listing.failures, greetings }
})

if (import.meta.url === `file://${process.argv[1]}`) {
  const fixture = new URL("../packages/testing/dist/era-server.js", import.meta.url).pathname
  const config = Config.layerStatic(
    configOf([
      { name: "legacy", command: process.execPath, args: [fixture, "--mode", "legacy-32601"] },
      { name: "modern", command: process.execPath, args: [fixture, "--mode", "modern-only"] }
    ])
  )
  program.pipe(
    Effect.flatMap((r) => Console.log(JSON.stringify(r, null, 2))),
    Effect.provide(gatewayLayer(config)),
    NodeRuntime.runMain
  )
}
