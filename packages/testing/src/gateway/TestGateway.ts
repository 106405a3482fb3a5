/**
 * The in-process gateway the gateway tests run on: a real Gateway over a real Pool of child
 * processes, configured by a file in a temp dir so Config loads it exactly as the daemon does.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Fixtures } from "@mcpx-fx/testing"
import { EraCache } from "@mcpx-fx/upstream/era/EraCache"
import { Negotiator } from "@mcpx-fx/upstream/era/Negotiator"
import { Pool } from "@mcpx-fx/upstream/pool/Pool"
import { Prober } from "@mcpx-fx/upstream/era/Prober"
import * as TransportLayer from "@mcpx-fx/upstream/transport/TransportLayer"
import { UpstreamAuth } from "@mcpx-fx/upstream/auth/UpstreamAuth"
import { ProcessGroups } from "@mcpx-fx/upstream/os/ProcessGroups"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Config, layerSettings } from "@mcpx-fx/config/Config"
import { Gateway } from "@mcpx-fx/gateway/Gateway"
import { PendingCalls } from "@mcpx-fx/gateway/PendingCalls"
import type * as Settings from "@mcpx-fx/config/Settings"
import { ToolCatalog } from "@mcpx-fx/gateway/ToolCatalog"

/** An era-server fixture in one mode, as a config entry (`extra` adds protocol, pool, env...). */
export const era = (mode: string, extra: Record<string, unknown> = {}) => {
  const { command, args } = Fixtures.stdioCommand("era-server", ["--mode", mode])
  return { command, args, ...extra }
}

export interface Options {
  /** The config file's `settings`, over a probe timeout long enough for a loaded CI machine. */
  readonly settings?: Record<string, unknown>
  /** The environment Settings reads MCPX_* from (the config's own discovery always sees none). */
  readonly env?: Record<string, string>
  /** The tool catalog (a test may watch what is asked of it); one in memory by default. */
  readonly catalog?: Layer.Layer<ToolCatalog>
}

/**
 * An in-memory catalog that counts the answers it gives about one tool: every resolution of a
 * name (the gateway's CallResolution) ends in one, a `peek` that finds it in place or a `lookup`
 * that lists for it (a peek that misses only says a lookup must follow), and nothing else asks
 * for one tool. For tests that a call's name is resolved once.
 */
export const countingCatalog = (count: { resolutions: number }): Layer.Layer<ToolCatalog> =>
  Layer.effect(
    ToolCatalog,
    Effect.map(ToolCatalog, (inner) =>
      ToolCatalog.of({
        ...inner,
        peek: (server, name) => {
          const found = inner.peek(server, name)
          if (found !== undefined) count.resolutions++
          return found
        },
        lookup: (server, name, list) => Effect.zipRight(Effect.sync(() => count.resolutions++), inner.lookup(server, name, list))
      }))
  ).pipe(Layer.provide(ToolCatalog.layerMemory))

/** What a test may ask for: the gateway and the services under it that tests inspect directly. */
export type Services = Gateway | Settings.Settings | Config | Pool | Prober | EraCache | PendingCalls | ToolCatalog

/** The upstream side; a short kill grace keeps a test's scope close quick. */
const upstream = Pool.layer.pipe(
  Layer.provideMerge(Prober.layer),
  Layer.provideMerge(EraCache.layerMemory),
  Layer.provide(Negotiator.layer),
  Layer.provide(TransportLayer.layer({ stdio: { killGrace: "500 millis" } })),
  Layer.provide(Layer.mergeAll(FetchHttpClient.layer, UpstreamAuth.none, ProcessGroups.layerNone))
)

/**
 * A gateway over `mcpServers`. The temp dir is the config's cwd and home too, so no config of
 * the developer's is discovered; it is removed after the gateway and its children are gone.
 */
export const layer = (mcpServers: Record<string, unknown>, options: Options = {}): Layer.Layer<Services> =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const dir = yield* fs.makeTempDirectoryScoped({ prefix: "mcpx-gateway-" })
    const file = path.join(dir, "mcpx.json")
    yield* fs.writeFileString(
      file,
      JSON.stringify({ mcpServers, settings: { "upstream.probeTimeout": "20s", ...options.settings } })
    )
    return Gateway.layer.pipe(
      Layer.provideMerge(PendingCalls.layer),
      Layer.provideMerge(layerSettings({ env: options.env ?? {}, flags: {} })),
      Layer.provideMerge(Config.layer({ configFlag: file, env: {}, cwd: dir, home: dir })),
      Layer.provideMerge(upstream),
      Layer.provideMerge(options.catalog ?? ToolCatalog.layerMemory)
    )
  })).pipe(Layer.provide(NodeContext.layer), Layer.orDie)
