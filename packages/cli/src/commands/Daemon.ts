/**
 * `mcpx-fx daemon`: the long-running gateway. Hosts reach it at `/mcp` (Streamable HTTP, every
 * revision), programs and the CLI at `/v1`, on `daemon.address:daemon.port` and on an owner-only
 * unix socket in the state directory.
 *
 * Start-up order matters to whoever waits for it: the state directory's lock first (a second
 * daemon refuses before it binds anything); holding it, what a daemon that died left behind is
 * cleared (temp files of cut-short writes, upstream process groups still running); then the
 * listeners, then `daemon.json` and the printed address — so anything that reads either finds a
 * daemon that answers. Shutdown (SIGINT/SIGTERM, `mcpx-fx stop`) runs the same steps backwards:
 * the info file goes, the listeners stop accepting, notification streams end, requests in flight
 * get the grace period and whatever still runs after it is cancelled and answered with an error,
 * legacy sessions end, the socket goes, and only then are the upstream servers stopped.
 */
import * as Command from "@effect/cli/Command"
import * as Config from "@mcpx-fx/config/Config"
import * as ConfigWatcher from "@mcpx-fx/daemon/ConfigWatcher"
import * as DaemonFiles from "@mcpx-fx/daemon/DaemonFiles"
import * as DaemonToken from "@mcpx-fx/daemon/DaemonToken"
import * as CallObserver from "@mcpx-fx/gateway/CallObserver"
import * as Gateway from "@mcpx-fx/gateway/Gateway"
import * as Redact from "@mcpx-fx/gateway/Redact"
import * as Settings from "@mcpx-fx/config/Settings"
import * as Pool from "@mcpx-fx/upstream/pool/Pool"
import * as ProcessGroups from "@mcpx-fx/upstream/os/ProcessGroups"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as Os from "node:os"
import * as GlobalOptions from "../GlobalOptions.js"
import * as HeapSizing from "../HeapSizing.js"
import { describe } from "../Help.js"
import * as Layers from "../Layers.js"
import * as Telemetry from "../Telemetry.js"
import { version } from "../version.js"
import { globalsFrom } from "./Root.js"

const loopbackHosts = new Set(["127.0.0.1", "localhost", "::1", "[::1]"])

/** Whether binding `address` keeps the daemon reachable from this machine only. */
export const isLoopback = (address: string): boolean => loopbackHosts.has(address) || address.startsWith("127.")

const urlHost = (address: string): string => (address.includes(":") && !address.startsWith("[") ? `[${address}]` : address)

/**
 * The names a request may give the daemon in its Host header besides the loopback ones: the bound
 * address, or — bound to every interface — every address the machine has, and its host name.
 */
const ownHosts = (address: string): ReadonlyArray<string> => {
  if (address !== "0.0.0.0" && address !== "::") return [address]
  const addresses = Object.values(Os.networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address))
  return [...addresses, Os.hostname()]
}

// What only the daemon runs (the HTTP servers, the host transport, the API) is loaded when it starts.
const loadModules = Effect.promise(() => import("./DaemonModules.js"))
const loadUi = Effect.promise(() => import("./UiModules.js"))
const loadMetrics = Effect.promise(() => import("../MetricsRoute.js"))

/** `mcpx-fx daemon`. */
export const command = Command.make("daemon", { globals: GlobalOptions.options }, ({ globals }) =>
  Effect.gen(function*() {
    const options = yield* globalsFrom(globals)
    const {
      Api,
      ApiHandlers,
      GatewayBackend,
      HttpEdge,
      HttpHost,
      HttpServerRequest,
      HttpServerResponse,
      Listeners,
      NodeHttpServer,
      Server,
      stopsWith,
      ToolSchemas
    } = yield* loadModules
    const { Backend, OwnerAccess, OwnerSecret, RecentCalls, UiAssets } = yield* loadUi
    const notFound = HttpServerResponse.unsafeJson(
      { error: "not found", endpoints: { mcp: "/mcp", api: "/v1", openapi: "/v1/openapi.json", metrics: "/metrics", ui: "/ui" } },
      { status: 404 }
    )
    // Set once everything but the gateway has stopped: the upstreams' stops are then the daemon's
    // exit, and a server that outlives its stdin is handed to a reaper rather than waited for.
    let exiting = false
    return yield* Effect.gen(function*() {
      // Registered first, so it runs last of this scope's finalizers, before the gateway's own.
      yield* Effect.addFinalizer(() => Effect.sync(() => void (exiting = true)))
      const files = yield* DaemonFiles.acquireLock
      yield* DaemonFiles.removeStaleTemps
      // Counting upstream starts from here, before any request can cause one.
      const metrics = yield* Effect.flatMap(loadMetrics, (m) => m.make)
      yield* Effect.flatMap(ProcessGroups.ProcessGroups, (groups) => groups.reapLeftovers)
      // Before the listeners: the live page's owner secret is part of their edge.
      const ownerSecret = yield* OwnerSecret.publish
      const address = yield* Settings.get("daemon.address")
      const port = yield* Settings.get("daemon.port")
      const grace = yield* Settings.get("daemon.shutdownGrace")
      const config = yield* Config.Config
      const startedAt = Date.now()
      // A daemon others can reach gets a token even when none was set: without one, anyone who can
      // reach the address could call every configured tool.
      const configuredToken = yield* Settings.get("daemon.token")
      const { notice, token } = yield* DaemonToken.forDaemon(configuredToken, isLoopback(address))
      if (notice !== undefined) yield* Console.error(`mcpx-fx: daemon.address ${address} is not a loopback address, so ${notice}`)
      const allowedOrigins = yield* Settings.get("transport.allowedOrigins")
      const allowedHosts = yield* Settings.get("transport.allowedHosts")
      const sseKeepAlive = yield* Settings.get("transport.sseKeepAlive")
      const maxBatch = yield* Settings.get("transport.maxBatch")
      const sessionIdleTimeout = yield* Settings.get("transport.sessionIdleTimeout")
      const maxSessions = yield* Settings.get("transport.maxSessions")
      const maxStreams = yield* Settings.get("transport.maxStreams")
      const sessionIdPrefix = yield* Layers.sessionIdPrefix
      const gateway = yield* Gateway.Gateway
      const inputSchemaOf = yield* ToolSchemas.make(gateway)
      // SIGHUP reloads the configuration, as a change to one of its files does.
      const watcher = yield* ConfigWatcher.ConfigWatcher
      const runFork = Runtime.runFork(yield* Effect.runtime<never>())
      const onHup = () => void runFork(watcher.reload)
      yield* Effect.acquireRelease(
        Effect.sync(() => process.on("SIGHUP", onHup)),
        () => Effect.sync(() => process.off("SIGHUP", onHup))
      )
      // One task engine for every listener: a task made over TCP is read over the socket too.
      const tasks = yield* Layer.build(Layers.hostTasks)
      const hostTasks = Layer.succeedContext(tasks)
      // One Backend too: `/v1` tasks call through it as MCP hosts' calls do. Its calls' observations
      // and those of the `/v1` routes go to the live page's ring too (`/v1/calls/recent`).
      const recentCalls = RecentCalls.make()
      const observed = Layer.succeed(CallObserver.CallSinks, { ring: RecentCalls.sink(recentCalls) })
      const built = Context.get(yield* Layer.build(Layer.provide(GatewayBackend.layer, observed)), Backend.Backend)
      const backend = Layer.succeed(Backend.Backend, built)
      const serverLayer = Server.Server.layer.pipe(
        Layer.provideMerge(backend),
        Layer.provide(Layers.requestState),
        Layer.provide(hostTasks)
      )
      const pool = yield* Pool.Pool
      const listening = yield* Listeners.serve((where, shutdown) =>
        Effect.gen(function*() {
          // Once the grace is over, every upstream call still running is cut short, and its
          // request (on /mcp, in any era) is answered -32603 with data.reason "shutdown".
          yield* Effect.forkScoped(Effect.zipRight(shutdown.stopping, pool.stopCalls))
          const own = `http://${urlHost(where.host)}:${where.port}`
          // Built here, once the port is known, so the daemon's own origin is one of the allowed;
          // its sessions end in this scope, before the listeners give requests their grace.
          const host = yield* Layer.build(
            HttpHost.HttpHost.layer({
              allowedOrigins,
              ownOrigins: [own],
              sseKeepAlive,
              maxBatch,
              sessionIdleTimeout,
              maxSessions,
              maxStreams,
              inputSchemaOf,
              shutdown,
              ...(sessionIdPrefix === undefined ? {} : { sessionIdPrefix })
            }).pipe(Layer.provide(serverLayer))
          ).pipe(Effect.map(Context.get(HttpHost.HttpHost)))
          yield* metrics.gaugeSources({ sessionIds: host.sessionIds, tasks })
          const api = yield* ApiHandlers.httpApp.pipe(
            Effect.provide(Layer.mergeAll(backend, hostTasks)),
            Effect.provideService(RecentCalls.RecentCalls, recentCalls),
            Effect.provide(Api.DaemonInfo.layer({
              version,
              pid: process.pid,
              startedAt,
              address: where.host,
              port: where.port,
              socket: where.socket,
              configFiles: config.files
            }))
          )
          // Provided per request: the API's handlers read the Gateway from the request's context.
          const v1 = stopsWith(Effect.provideService(api, Gateway.Gateway, RecentCalls.observingGateway(gateway, recentCalls)), shutdown)
          // `/mcp` never reaches this router: the listeners hand it to the `mcp` apps below first.
          const router = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
            const path = request.url.split("?")[0] ?? ""
            if (path === "/v1" || path.startsWith("/v1/")) return v1
            if (path === "/metrics") return metrics.app
            if (UiAssets.Paths.has(path)) return UiAssets.app
            return Effect.succeed(notFound)
          })
          const policy = { port: where.port, ownHosts: ownHosts(where.host), allowedHosts, ownOrigins: [own], allowedOrigins, token }
          const edge = HttpEdge.make(policy)
          // The socket is the owner's: /v1 shows them what their upstreams said, unredacted. Over
          // TCP, so is a request from this machine with the owner secret (the live page's).
          return {
            tcp: OwnerAccess.make({ ...policy, ownerSecret })(router),
            socket: Effect.locally(router, Redact.RawForOwner, true),
            // `/mcp` itself, for the listeners' thin adapter; the same policy on TCP.
            mcp: { tcp: edge(host.app), socket: Effect.locally(host.app, Redact.RawForOwner, true) }
          }
        }), {
        host: address,
        port,
        socket: files.socket,
        grace,
        limits: {
          headersTimeout: yield* Settings.get("transport.headersTimeout"),
          requestTimeout: yield* Settings.get("transport.requestTimeout"),
          maxConnections: yield* Settings.get("daemon.maxConnections")
        }
      })
      const url = `http://${urlHost(listening.host)}:${listening.port}`
      const info: DaemonFiles.DaemonInfo = {
        pid: process.pid,
        version,
        url,
        mcp: `${url}/mcp`,
        socket: listening.socket,
        startedAt: new Date(startedAt).toISOString(),
        configFiles: config.files
      }
      yield* DaemonFiles.publishInfo(info)
      // Only now may the young generation grow: the start's survivors would take it to the cap.
      yield* Effect.sync(() => HeapSizing.serving())
      if (options.json) yield* Console.log(JSON.stringify(info))
      else {
        yield* Console.log(
          [
            `mcpx-fx daemon ${version} (pid ${process.pid})`,
            `  MCP endpoint  ${info.mcp}`,
            `  API           ${url}/v1 (OpenAPI: ${url}/v1/openapi.json)`,
            `  CLI socket    ${info.socket}`,
            `  Live page     ${url}/ui (\`mcpx-fx ui\` prints the owner's address)`,
            "",
            "Add it to a host as a Streamable HTTP server, e.g.",
            `  {"mcpServers":{"mcpx":{"type":"http","url":"${info.mcp}"}}}`,
            "or for a stdio-only host: {\"mcpServers\":{\"mcpx\":{\"command\":\"mcpx-fx\",\"args\":[\"serve\",\"--relay\"]}}}",
            "Stop with Ctrl-C or `mcpx-fx stop`."
          ].join("\n")
        )
      }
      return yield* Effect.never
    }).pipe(
      // Scoped inside the layers: the listeners' grace runs while the gateway and its upstreams
      // are still up, and only then are they released.
      Effect.scoped,
      // Two provides on purpose: Telemetry must outlive the layers inside it (see below).
      // @effect-diagnostics-next-line multipleEffectProvide:off
      Effect.provide(
        Layer.merge(Layers.watched(options, true, { recordProcessGroups: true, exiting: () => exiting, fleet: true }), NodeHttpServer.layerContext)
      ),
      // Outermost: everything is built seeing whether it traces, and the last spans are sent after it stops.
      Effect.provide(Telemetry.layer)
    )
  })).pipe(
    Command.withDescription(
      describe(
        "Run the gateway as a daemon in the foreground: /mcp (Streamable HTTP for hosts, every revision) and /v1 " +
          "(the HTTP API, OpenAPI at /v1/openapi.json) on daemon.address:daemon.port, plus an owner-only unix socket " +
          "in the state directory that the CLI uses. One daemon per state directory. --json prints where it " +
          "listens as one JSON line.",
        "mcpx-fx daemon --daemon-port 0 --json"
      )
    )
  )
