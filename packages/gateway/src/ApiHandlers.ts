/**
 * The `/v1` API implemented over the Gateway, Settings and Pool, plus the shaping the CLI shares
 * (`toolsListing`, `callTool`, `protocolReport`, `serverRows`), so `mcpx-fx tools|call|protocol
 * --json` and the API print the same bodies whether the CLI runs the gateway in-process or asks
 * the daemon.
 *
 * Mounting, in the daemon: `layer` is the API (with `/v1/openapi.json`) for `HttpApiBuilder.serve`
 * or `HttpApiBuilder.toWebHandler`; `httpApp` builds it into one `HttpApp` for a router shared with
 * `/mcp`, e.g. `HttpRouter.empty.pipe(HttpRouter.mountApp("/v1", v1, { includePrefix: true }),
 * HttpRouter.all("/mcp", mcp))`. Both need Gateway, Settings, Pool and DaemonInfo.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as OpenApi from "@effect/platform/OpenApi"
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as HttpApi from "@effect/platform/HttpApi"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { isJsonObject } from "@mcpx-fx/protocol/Json"
import * as Revision from "@mcpx-fx/protocol/Revision"
import { Pool, type PoolStatus } from "@mcpx-fx/upstream/Pool"
import { type AuthStatus, UpstreamAuth } from "@mcpx-fx/upstream/UpstreamAuth"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Api, BadArguments, DaemonInfo, OpenApiPath, UpstreamFailed } from "./Api.js"
import { upstreamFailed } from "./ApiErrors.js"
import { AskLive } from "./Ask.js"
import { ConfigWatcher } from "./ConfigWatcher.js"
import type * as ApiSchema from "./Api.js"
import * as Events from "./Events.js"
import { apiCaller } from "./ApiCaller.js"
import { Gateway, type GatewayCallError, type GatewayServer, UnknownName } from "./Gateway.js"
import * as Names from "./Names.js"
import { qualifiedToolName } from "./Names.js"
import { PendingCalls } from "./PendingCalls.js"
import * as Redact from "./Redact.js"
import * as ToolSearch from "./ToolSearch.js"
import { Settings, unknownSettingError } from "./Settings.js"

/** `ns.tool` and `ns__tool` both name a tool (kept here for the callers that import it from the API). */
export { qualifiedToolName }

type GatewayService = Gateway["Type"]
type SettingsService = Settings["Type"]

// ---------------------------------------------------------------------------------------------
// Shaping shared with the CLI
// ---------------------------------------------------------------------------------------------

/** Every tool, or one server's (`ns`): `GET /v1/tools` and `mcpx-fx tools --json`. */
export const toolsListing = (
  gateway: GatewayService,
  namespace?: string
): Effect.Effect<typeof ApiSchema.ToolsListing.Type, UnknownName> =>
  Effect.gen(function*() {
    const servers = namespace === undefined
      ? gateway.servers
      : gateway.servers.filter((s) => s.namespace === namespace || s.name === namespace)
    if (namespace !== undefined && servers.length === 0) {
      const known = gateway.servers.map((s) => s.namespace)
      return yield* new UnknownName({ kind: "server", name: namespace, suggestions: [...Names.closest(namespace, known)] })
    }
    const listing = yield* gateway.listTools({})
    const names = new Set(servers.map((s) => s.name))
    const tools = namespace === undefined
      ? listing.items
      : listing.items.filter((t) => servers.some((s) => !s.prefixed || String(t.name).startsWith(`${s.namespace}__`)))
    return { tools, failures: listing.failures.filter((f) => names.has(f.server)) }
  })

/** `GET /v1/search` and `mcpx-fx search`: what is known, ranked; servers not started are never started unless `refresh`. */
export const searchTools = (
  gateway: GatewayService,
  query: typeof ApiSchema.SearchQuery.Type
): Effect.Effect<typeof ApiSchema.SearchListing.Type> =>
  ToolSearch.search(gateway, {}, {
    query: query.q ?? "",
    ...(query.limit !== undefined ? { limit: query.limit } : {}),
    ...(query.refresh === true ? { refresh: true } : {})
  })

/**
 * Calls one tool: `POST /v1/call`. A tool's `isError` result is a success here (the caller decides,
 * as `mcpx-fx call` does with exit 1); arguments the upstream refuses (-32602) are BadArguments.
 */
export const callTool = (
  gateway: GatewayService,
  request: typeof ApiSchema.CallRequest.Type,
  headers: typeof ApiSchema.CallerHeaders.Type = {}
): Effect.Effect<typeof ApiSchema.CallResponse.Type, UnknownName | BadArguments | UpstreamFailed> =>
  Effect.gen(function*() {
    const tool = qualifiedToolName(request.tool)
    const args = request.arguments ?? {}
    if (!isJsonObject(args)) {
      return yield* new BadArguments({ tool, detail: `arguments must be a JSON object, got ${Array.isArray(args) ? "an array" : typeof args}` })
    }
    const began = yield* Clock.currentTimeMillis
    const result = yield* gateway.callTool(apiCaller(request.session, headers), tool, args).pipe(
      Effect.catchIf(
        (e): e is Exclude<GatewayCallError, UnknownName> => e._tag !== "UnknownName",
        (e) =>
          Effect.fail(
            e._tag === "UpstreamRpcError" && e.code === ErrorCode.InvalidParams
              ? new BadArguments({ tool, detail: e.rpcMessage })
              : upstreamFailed(e)
          )
      )
    )
    const durationMs = (yield* Clock.currentTimeMillis) - began
    return { tool, result, isError: result.isError === true, durationMs }
  })

/** Probes one server now, the era cache ignored: `POST /v1/probe/{server}` and `mcpx-fx probe`. */
export const probeServer = (
  gateway: GatewayService,
  namespace: string
): Effect.Effect<typeof ApiSchema.ProbeResult.Type, UnknownName | UpstreamFailed> =>
  gateway.probe(namespace).pipe(
    // The probe does not consult the cache; what it holds is shown beside what was found.
    Effect.zip(gateway.protocol),
    Effect.map(([report, servers]) => ({
      server: report.server,
      preference: report.preference,
      era: report.era,
      negotiated: report.negotiated,
      eraSource: report.eraSource,
      wire: report.wire,
      durationMs: report.durationMs,
      steps: report.steps,
      cached: servers.find((s) => s.server === report.server)?.cached ?? null
    })),
    Effect.catchIf(
      (e): e is Exclude<GatewayCallError, UnknownName> => e._tag !== "UnknownName",
      (e) => Effect.fail(upstreamFailed(e))
    )
  )

/** `GET /v1/protocol`; `mcpx-fx protocol --json` prints `{ servers: asClient.servers }`. */
export const protocolReport = (
  gateway: GatewayService,
  settings: SettingsService
): Effect.Effect<typeof ApiSchema.ProtocolReport.Type> =>
  Effect.gen(function*() {
    const servers = yield* gateway.protocol
    return {
      asServer: {
        supported: [...Revision.AllRevisions],
        legacy: [...Revision.LegacyRevisions],
        modern: [...Revision.ModernRevisions],
        latest: Revision.LatestModernRevision,
        oldest: Revision.OldestRevision
      },
      asClient: {
        preference: yield* settings.get("upstream.protocol"),
        eraCache: yield* settings.get("upstream.eraCache"),
        legacy: [...Revision.LegacyRevisions],
        modern: [...Revision.ModernRevisions],
        servers
      }
    }
  })

const poolRow = (status: PoolStatus | undefined): typeof ApiSchema.PoolRow.Type | null =>
  status === undefined
    ? null
    : {
      lanes: status.lanes,
      instances: status.instances,
      ...(status.legacyRefused !== undefined ? { legacyRefused: status.legacyRefused } : {})
    }

const redactorOf = (gateway: GatewayService): Redact.Redactor =>
  Redact.forDefinitions(gateway.servers.map((s) => s.configured.definition))

/**
 * Relayed text (upstream messages, stderr tails, error bodies) as this caller may see it: raw for
 * the owner on the unix socket, redacted for everyone else.
 */
const forCaller = <A>(gateway: GatewayService, value: A, redact: (r: Redact.Redactor, a: A) => A): Effect.Effect<A> =>
  Effect.map(FiberRef.get(Redact.RawForOwner), (raw) => (raw ? value : redact(redactorOf(gateway), value)))

const redactUpstream = (r: Redact.Redactor, e: UpstreamFailed): UpstreamFailed =>
  new UpstreamFailed({
    kind: e.kind,
    detail: r.text(e.detail),
    ...(e.server !== undefined ? { server: e.server } : {}),
    ...(e.code !== undefined ? { code: e.code } : {}),
    ...(e.data !== undefined ? { data: r.json(e.data) } : {})
  })

const redactFailure = (r: Redact.Redactor, e: UpstreamFailed | BadArguments): UpstreamFailed | BadArguments =>
  e._tag === "BadArguments" ? new BadArguments({ tool: e.tool, detail: r.text(e.detail) }) : redactUpstream(r, e)

const serverRow = (
  server: GatewayServer,
  redact: Redact.Redactor,
  hot: { readonly preference: GatewayServer["preference"]; readonly callTimeout: Duration.Duration },
  status: PoolStatus | undefined,
  auth: AuthStatus | undefined
): typeof ApiSchema.ServerRow.Type => {
  const { configured } = server
  const def = configured.definition
  const where = def.transport === "stdio"
    ? {
      transport: "stdio" as const,
      command: def.command,
      // Args are configuration, not relayed text: a `--token=…` in them is hidden from everyone.
      args: redact.args(def.args),
      ...(def.cwd !== undefined ? { cwd: def.cwd } : {}),
      envKeys: Object.keys(def.env).sort(),
      headerKeys: []
    }
    : { transport: "http" as const, url: redact.text(def.url), envKeys: [], headerKeys: Object.keys(def.headers).sort() }
  return {
    name: server.name,
    namespace: server.namespace,
    ...where,
    file: configured.file,
    preference: hot.preference,
    scope: server.scope,
    callTimeoutMs: Duration.toMillis(hot.callTimeout),
    pool: poolRow(status),
    ...(auth === undefined ? {} : { auth: authRow(auth) })
  }
}

/** A server's authorization as `/v1/status` shows it: state and expiry, never a token. */
export const authRow = (status: AuthStatus): typeof ApiSchema.AuthRow.Type => ({
  state: status.state,
  refreshable: status.refreshable,
  ...(status.issuer === undefined ? {} : { issuer: status.issuer }),
  ...(status.expiresAt === undefined ? {} : { expiresAt: status.expiresAt }),
  ...(status.scopes === undefined ? {} : { scopes: status.scopes }),
  ...(status.reason === undefined ? {} : { reason: status.reason })
})

/** Every configured server with its pool (`GET /v1/servers`, and the servers of `/v1/status`). */
export const serverRows = (
  gateway: GatewayService,
  settings: SettingsService,
  pool: Pool["Type"]
): Effect.Effect<ReadonlyArray<typeof ApiSchema.ServerRow.Type>> =>
  Effect.gen(function*() {
    const snapshot = yield* pool.snapshot
    // The hot settings as they stand now, which is what the next call will use.
    const preference = yield* settings.get("upstream.protocol")
    const callTimeout = yield* settings.get("pool.callTimeout")
    const auth = yield* Effect.serviceOption(UpstreamAuth)
    const redact = redactorOf(gateway)
    return yield* Effect.forEach(gateway.servers, (server) => {
      const def = server.configured.definition
      const authStatus = Option.isSome(auth) && def.transport === "http" && auth.value.credentials(def) !== undefined
        ? Effect.asSome(auth.value.status(def))
        : Effect.succeedNone
      return Effect.map(authStatus, (a) =>
        serverRow(
          server,
          redact,
          {
            preference: def.protocol ?? preference,
            callTimeout: Duration.decode(server.configured.pool.callTimeout ?? callTimeout)
          },
          snapshot.find((s) => s.server === server.name),
          Option.getOrUndefined(a)
        ))
    })
  })

/** Which layers the effective settings came from. */
export const settingsSummary = (settings: SettingsService): Effect.Effect<typeof ApiSchema.SettingsSummary.Type> =>
  Effect.map(settings.list, (rows) => {
    const sources = { default: 0, file: 0, env: 0, flag: 0, runtime: 0 }
    for (const row of rows) {
      const kind = row.source.split(":")[0] as keyof typeof sources
      sources[kind] += 1
    }
    const overridden = rows.filter((r) => r.source !== "default").map((r) => ({ path: r.path, text: r.text, source: r.source }))
    return { sources, overridden }
  })

// ---------------------------------------------------------------------------------------------
// Groups
// ---------------------------------------------------------------------------------------------

const uptime = (daemon: DaemonInfo["Type"]) => Effect.map(Clock.currentTimeMillis, (now) => Math.max(0, now - daemon.startedAt))

/** `/v1/health`, `/v1/status`, `/v1/servers`, `/v1/protocol`, `/v1/probe/{server}`. */
export const SystemLive = HttpApiBuilder.group(Api, "system", (handlers) =>
  handlers
    .handle("health", () =>
      Effect.gen(function*() {
        const daemon = yield* DaemonInfo
        return { ok: true as const, version: daemon.version, pid: daemon.pid, uptimeMs: yield* uptime(daemon) }
      }))
    .handle("status", () =>
      Effect.gen(function*() {
        const daemon = yield* DaemonInfo
        const settings = yield* Settings
        const watcher = yield* Effect.serviceOption(ConfigWatcher)
        const config = Option.isSome(watcher) ? { config: yield* watcher.value.state } : {}
        return {
          daemon: {
            version: daemon.version,
            pid: daemon.pid,
            startedAt: daemon.startedAt,
            uptimeMs: yield* uptime(daemon),
            ...(daemon.address !== undefined ? { address: daemon.address } : {}),
            ...(daemon.port !== undefined ? { port: daemon.port } : {}),
            ...(daemon.socket !== undefined ? { socket: daemon.socket } : {}),
            configFiles: daemon.configFiles ?? []
          },
          ...config,
          servers: yield* serverRows(yield* Gateway, settings, yield* Pool),
          settings: yield* settingsSummary(settings)
        }
      }))
    .handle("servers", () =>
      Effect.gen(function*() {
        return { servers: yield* serverRows(yield* Gateway, yield* Settings, yield* Pool) }
      }))
    .handle("protocol", () =>
      Effect.gen(function*() {
        return yield* protocolReport(yield* Gateway, yield* Settings)
      }))
    // A probe's steps quote what the upstream answered, which may carry what its config holds.
    .handle("probe", ({ path }) =>
      Effect.flatMap(Gateway, (gateway) =>
        probeServer(gateway, path.server).pipe(
          Effect.flatMap((result) => forCaller(gateway, result, (r, p) => ({ ...p, steps: p.steps.map((step) => r.text(step)) }))),
          Effect.catchTag("UpstreamFailed", (e) => Effect.flip(forCaller(gateway, e, redactUpstream)))
        ))))

/** `/v1/tools`, `/v1/call`. */
export const ToolsLive = HttpApiBuilder.group(Api, "tools", (handlers) =>
  handlers
    .handle("list", ({ urlParams }) =>
      Effect.flatMap(Gateway, (gateway) =>
        Effect.flatMap(toolsListing(gateway, urlParams.ns), (listing) =>
          forCaller(gateway, listing, (r, l) => ({ ...l, failures: l.failures.map((f) => ({ ...f, message: r.text(f.message) })) })))))
    .handle("search", ({ urlParams }) =>
      Effect.flatMap(Gateway, (gateway) =>
        Effect.flatMap(searchTools(gateway, urlParams), (found) =>
          forCaller(gateway, found, (r, l) => ({ ...l, failures: l.failures.map((f) => ({ ...f, message: r.text(f.message) })) })))))
    .handle("call", ({ headers, payload }) =>
      Effect.flatMap(Gateway, (gateway) =>
        callTool(gateway, payload, headers).pipe(
          Effect.catchTags({
            UpstreamFailed: (e) => Effect.flip(forCaller(gateway, e, redactFailure)),
            BadArguments: (e) => Effect.flip(forCaller(gateway, e, redactFailure))
          })
        ))))

/** `/v1/settings` and `/v1/settings/{path}`. */
export const SettingsLive = HttpApiBuilder.group(Api, "settings", (handlers) =>
  handlers
    .handle("list", () => Effect.map(Effect.flatMap(Settings, (s) => s.list), (settings) => ({ settings })))
    .handle("get", ({ path }) =>
      Effect.gen(function*() {
        const rows = yield* Effect.flatMap(Settings, (s) => s.list)
        const row = rows.find((r) => r.path === path.path)
        return row !== undefined ? row : yield* unknownSettingError(path.path)
      }))
    .handle("set", ({ path, payload }) => Effect.flatMap(Settings, (s) => s.set(path.path, payload.value)))
    .handle("unset", ({ path }) => Effect.flatMap(Settings, (s) => s.unset(path.path))))

/** `/v1/events`: SSE of lifecycle events. */
export const EventsLive = HttpApiBuilder.group(Api, "events", (handlers) =>
  handlers.handle("events", ({ urlParams }) =>
    Effect.gen(function*() {
      const pool = yield* Pool
      const pending = yield* PendingCalls
      const keepAlive = yield* Effect.flatMap(Settings, (s) => s.get("transport.sseKeepAlive"))
      // A crash event carries the upstream's stderr tail: redacted but for the owner.
      const raw = yield* FiberRef.get(Redact.RawForOwner)
      const redactor = redactorOf(yield* Gateway)
      const shape = (event: Events.Event): Events.Event => (raw ? event : redactor.json(event) as Events.Event)
      const watcher = yield* Effect.serviceOption(ConfigWatcher)
      const config = Option.getOrUndefined(Option.map(watcher, (w) => w.subscribe))
      const body = Events.sse(Events.filterOf(urlParams), keepAlive, shape, config).pipe(
        Stream.provideService(Pool, pool),
        Stream.provideService(PendingCalls, pending),
        Stream.encodeText
      )
      return HttpServerResponse.stream(body, {
        contentType: "text/event-stream",
        headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
      })
    })))

// ---------------------------------------------------------------------------------------------
// Layers
// ---------------------------------------------------------------------------------------------

/** What the API runs on. */
export type Requirements = Gateway | Settings | Pool | PendingCalls | DaemonInfo

/**
 * The implemented `/v1` API with `/v1/openapi.json`, for `HttpApiBuilder.serve` or `toWebHandler`.
 * The document's version is the daemon's own (DaemonInfo), so it changes with each release.
 */
export const layer: Layer.Layer<HttpApi.Api, never, Requirements> = Layer.unwrapEffect(
  Effect.map(DaemonInfo, (info) =>
    HttpApiBuilder.middlewareOpenApi({ path: OpenApiPath }).pipe(
      Layer.provideMerge(
        HttpApiBuilder.api(Api.annotate(OpenApi.Version, info.version)).pipe(
          Layer.provide(Layer.mergeAll(SystemLive, ToolsLive, SettingsLive, EventsLive, AskLive))
        )
      )
    ))
)

/**
 * The `/v1` API as one `HttpApp` (paths keep their `/v1` prefix), built in the caller's scope, for
 * a router that also serves `/mcp`.
 */
export const httpApp: Effect.Effect<
  HttpApp.Default<never, HttpRouter.HttpRouter.DefaultServices>,
  never,
  Requirements | Scope.Scope
> = Effect.flatMap(
  Layer.build(Layer.mergeAll(layer, HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer)),
  (context) => Effect.provide(HttpApiBuilder.httpApp, context)
)
