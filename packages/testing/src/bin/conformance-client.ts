/**
 * The client the official MCP conformance suite runs in client mode:
 *
 *   conformance client --command "<node> conformance-client.js" …
 *
 * The suite appends the scenario's mock-server URL as the last argument and names the scenario,
 * the revision and its inputs in MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION and
 * MCP_CONFORMANCE_CONTEXT. The scenario is played through mcpx-fx's upstream engine (Prober,
 * Negotiator, EraCache, the Transport layer on fetch); see ../conformance/ClientScenarios.ts.
 *
 * Logs go to stderr (MCPX_CONFORMANCE_DEBUG=1 adds the engine's debug logs;
 * MCPX_CONFORMANCE_GIVE_UP_MS bounds the run, 25 s by default). Exit 0 when the scenario was
 * played to its end, 1 when it failed, 2 when the invocation is unusable.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { EraCache } from "@mcpx-fx/upstream/era/EraCache"
import { Negotiator } from "@mcpx-fx/upstream/era/Negotiator"
import { Prober } from "@mcpx-fx/upstream/era/Prober"
import { TokenStore } from "@mcpx-fx/upstream/auth/TokenStore"
import * as TransportLayer from "@mcpx-fx/upstream/transport/TransportLayer"
import { ProcessGroups } from "@mcpx-fx/upstream/os/ProcessGroups"
import { UpstreamAuth } from "@mcpx-fx/upstream/auth/UpstreamAuth"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { play, readInvocation } from "../conformance/ClientScenarios.js"
import { autoApprove } from "../oauth/AutoApprove.js"

// The suite kills a client after its --timeout (30 s unless told); giving up a little earlier
// leaves a reason in stderr. A runner that raises --timeout raises this with it.
const giveUpMs = Number(process.env.MCPX_CONFORMANCE_GIVE_UP_MS ?? "25000")
const GiveUpAfter = Duration.millis(Number.isFinite(giveUpMs) && giveUpMs > 0 ? giveUpMs : 25_000)

// The suite's authorization scenarios name this document as the client's Client ID Metadata Document.
const ClientMetadataUrl = "https://conformance-test.local/client-metadata.json"

// The suite's mock authorization servers approve at once, so the redirect is followed here; the
// product itself never completes a login without `mcpx-fx auth login`.
const Auth = UpstreamAuth.layer({ authorizer: autoApprove, clientMetadataUrl: ClientMetadataUrl }).pipe(
  Layer.provide(TokenStore.layerMemory)
)

// Each run is one process against one fresh mock, so a remembered era (or token) would never be read back.
const Upstream = Prober.layer.pipe(
  Layer.provide(Layer.mergeAll(TransportLayer.layer(), EraCache.layerMemory, Negotiator.layer)),
  Layer.provide(Layer.mergeAll(FetchHttpClient.layer, NodeContext.layer, Auth, ProcessGroups.layerNone))
)

const Logging = Layer.mergeAll(
  Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true, colors: false })),
  Logger.minimumLogLevel(process.env.MCPX_CONFORMANCE_DEBUG === "1" ? LogLevel.Debug : LogLevel.Info)
)

const invocation = readInvocation(process.env, process.argv.slice(2))

const describe = (cause: Cause.Cause<unknown>): string => {
  const squashed = Cause.squash(cause)
  return squashed instanceof Error ? squashed.message : Cause.pretty(cause)
}

// Set by the program and read by the teardown, which is generic in the program's result.
let exitCode = 1

const program: Effect.Effect<number> = Either.isLeft(invocation)
  ? Effect.as(Effect.logError(invocation.left.message), 2)
  : play(invocation.right).pipe(
    Effect.scoped,
    Effect.timeoutFail({ duration: GiveUpAfter, onTimeout: () => new Error(`gave up after ${Duration.format(GiveUpAfter)}`) }),
    Effect.provide(Upstream),
    Effect.matchCauseEffect({
      onSuccess: () => Effect.as(Effect.logInfo(`${invocation.right.scenario}: done`), 0),
      onFailure: (cause) => Effect.as(Effect.logError(`${invocation.right.scenario} failed: ${describe(cause)}`), 1)
    })
  )

NodeRuntime.runMain(
  program.pipe(
    Effect.tap((code) =>
      Effect.sync(() => {
        exitCode = code
      })
    ),
    Effect.provide(Logging)
  ),
  {
    disableErrorReporting: true,
    disablePrettyLogger: true,
    // Idle keep-alive sockets must not hold the suite waiting for the process to end.
    teardown: (exit) => process.exit(Exit.isSuccess(exit) ? exitCode : 1)
  }
)
