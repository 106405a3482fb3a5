/**
 * A dual-era MCP client for one upstream, built from @mcpx-fx/upstream alone: the era probe, the
 * negotiated session and an era cache kept in memory (swap in `EraCache.layer` with a state
 * directory to remember eras across runs). The preference is ours to choose: here
 * `prefer-initialize`, which opens with `initialize` and falls back to `server/discover`.
 *
 *   node --import tsx examples/dual-era-client.ts node packages/testing/dist/era-server.js --mode modern-only
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { EraCache } from "@mcpx-fx/upstream/era/EraCache"
import { Negotiator } from "@mcpx-fx/upstream/era/Negotiator"
import type { Preference } from "@mcpx-fx/upstream/era/Preference"
import { Prober } from "@mcpx-fx/upstream/era/Prober"
import { StdioDefinition } from "@mcpx-fx/upstream/ServerDefinition"
import * as TransportLayer from "@mcpx-fx/upstream/transport/TransportLayer"
import { UpstreamAuth } from "@mcpx-fx/upstream/auth/UpstreamAuth"
import { ProcessGroups } from "@mcpx-fx/upstream/os/ProcessGroups"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** Everything the client needs, on Node: processes for stdio upstreams, fetch for HTTP ones. */
export const ClientLayer = Prober.layer.pipe(
  Layer.provideMerge(EraCache.layerMemory),
  Layer.provide(Negotiator.layer),
  Layer.provide(TransportLayer.layer()),
  // No OAuth tokens kept and no process groups recorded: an HTTP upstream gets its own headers only.
  Layer.provide(Layer.mergeAll(FetchHttpClient.layer, UpstreamAuth.none, ProcessGroups.layerNone)),
  Layer.provide(NodeContext.layer)
)

/** Starts the upstream, lists its tools and calls the first one that takes no arguments. */
export const program = (command: string, args: ReadonlyArray<string>, preference: Preference = "prefer-initialize") =>
  Effect.gen(function*() {
    const prober = yield* Prober
    const { report, session } = yield* prober.start(
      new StdioDefinition({ transport: "stdio", name: "example", command, args }),
      {
        preference,
        probeTimeout: "5 seconds",
        session: { clientInfo: { name: "dual-era-client", version: "1.0.0" }, clientCapabilities: {} }
      }
    )
    const listed = yield* session.request("tools/list")
    const tools = Array.isArray(listed.tools) ? listed.tools.map((t) => String((t as { name: unknown }).name)) : []
    const greeting = tools.includes("hello") ? yield* session.request("tools/call", { name: "hello", arguments: {} }) : {}
    return { era: report.era, negotiated: report.negotiated, steps: report.steps, tools, greeting }
  }).pipe(Effect.scoped)

if (import.meta.url === `file://${process.argv[1]}`) {
  const [command, ...args] = process.argv.slice(2)
  program(command ?? process.execPath, args).pipe(
    Effect.flatMap((r) => Console.log(JSON.stringify(r, null, 2))),
    Effect.provide(ClientLayer),
    NodeRuntime.runMain
  )
}
