/**
 * The `/v1` API implemented over the Gateway, Settings and Pool, plus the shaping the CLI shares
 * (`toolsListing`, `callTool`, `protocolReport`, `serverRows`), so `mcpx-fx tools|call|protocol
 * --json` and the API print the same bodies whether the CLI runs the gateway in-process or asks
 * the daemon.
 *
 * Mounting, in the daemon: `layer` is the API (with `/v1/openapi.json`) for `HttpApiBuilder.serve`
 * or `HttpApiBuilder.toWebHandler`; `httpApp` builds it into one `HttpApp` for a router shared with
 * `/mcp`, e.g. `HttpRouter.empty.pipe(HttpRouter.mountApp("/v1", v1, { includePrefix: true }),
 * HttpRouter.all("/mcp", mcp))`. Both need what `Requirements` names (`ConfigWatcher.none`,
 * `UpstreamAuth.none` and `RecentCalls.off` where a process has no watcher, OAuth or ring).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as OpenApi from "@effect/platform/OpenApi"
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpJsonBody from "@mcpx-fx/server/HttpJsonBody"
import { Pool } from "@mcpx-fx/upstream/pool/Pool"
import type { UpstreamAuth } from "@mcpx-fx/upstream/auth/UpstreamAuth"
import type { Backend } from "@mcpx-fx/server/Backend"
import type { HostTasks } from "@mcpx-fx/server/HostTasks"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Api, BadArguments, DaemonInfo, OpenApiPath, UpstreamFailed } from "./Api.js"
import { jsonClientErrors } from "./ApiErrors.js"
import { AskLive } from "./Ask.js"
import { CallsLive } from "./CallsRoutes.js"
import type { RecentCalls } from "./RecentCalls.js"
import * as TaskRoutes from "./TaskRoutes.js"
import type { TaskAccepted, TasksUnavailable } from "./TasksApi.js"
import type { CallRequest, CallResponse } from "./ApiBodies.js"
import { type CallerHeaders, fromBrowser } from "./ApiCaller.js"
import { callTool, probeServer, protocolReport, redactorOf, searchTools, serverRows, settingsSummary, toolsListing } from "./ApiShaping.js"
import { ConfigWatcher } from "./ConfigWatcher.js"
import * as Events from "./Events.js"
import { Gateway } from "@mcpx-fx/gateway/Gateway"
import type { UnknownName } from "@mcpx-fx/gateway/GatewayModel"
import { qualifiedToolName } from "@mcpx-fx/gateway/Names"
import { PendingCalls } from "@mcpx-fx/gateway/PendingCalls"
import * as Redact from "@mcpx-fx/gateway/Redact"
import { Settings, unknownSettingError } from "@mcpx-fx/config/Settings"

/** `ns.tool` and `ns__tool` both name a tool (kept here for the callers that import it from the API). */
export { qualifiedToolName }

type GatewayService = Gateway["Type"]

// ---------------------------------------------------------------------------------------------
// Shaping shared with the CLI (ApiShaping.ts)
// ---------------------------------------------------------------------------------------------

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
  e._tag === "BadArguments"
    ? new BadArguments({ tool: e.tool, detail: r.text(e.detail), ...(e.field !== undefined ? { field: e.field } : {}) })
    : redactUpstream(r, e)

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
        const state = yield* Effect.flatMap(ConfigWatcher, (watcher) => watcher.state)
        const config = Option.isSome(state) ? { config: state.value } : {}
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

const searchFor = (request: Parameters<typeof searchTools>[1], options: Parameters<typeof searchTools>[2] = {}) =>
  Effect.flatMap(
    Gateway,
    (gateway) =>
      Effect.flatMap(searchTools(gateway, request, options), (found) =>
        forCaller(gateway, found, (r, l) => ({ ...l, failures: l.failures.map((f) => ({ ...f, message: r.text(f.message) })) })))
  )

/** `POST /v1/call`: the call's result, or with `task` the task it runs as (202). */
const callOrTask = (
  gateway: Gateway["Type"],
  payload: typeof CallRequest.Type,
  headers: typeof CallerHeaders.Type
): Effect.Effect<
  typeof CallResponse.Type | typeof TaskAccepted.Type,
  UnknownName | BadArguments | UpstreamFailed | TasksUnavailable,
  Backend | HostTasks
> => (payload.task === undefined ? callTool(gateway, payload, headers) : TaskRoutes.begin(gateway, payload, payload.task, headers))

/** Whether the request in hand is a browser page's (ApiCaller.fromBrowser). */
const browserGet = Effect.map(HttpServerRequest.HttpServerRequest, (request) => fromBrowser(request.headers))

/** `/v1/tools`, `/v1/search`, `/v1/call`. */
export const ToolsLive = HttpApiBuilder.group(Api, "tools", (handlers) =>
  handlers
    // A browser page's GET lists nothing and starts nothing: state changes only on other methods.
    .handle("list", ({ urlParams }) =>
      Effect.flatMap(Effect.all([Gateway, browserGet]), ([gateway, cachedOnly]) =>
        Effect.flatMap(toolsListing(gateway, urlParams.ns, { cachedOnly }), (listing) =>
          forCaller(gateway, listing, (r, l) => ({ ...l, failures: l.failures.map((f) => ({ ...f, message: r.text(f.message) })) })))))
    .handle("search", ({ urlParams }) =>
      Effect.flatMap(browserGet, (cachedOnly) =>
        searchFor(urlParams, { cachedOnly })))
    .handle("searchFresh", ({ payload }) => searchFor(payload))
    .handle("call", ({ headers, payload }) =>
      Effect.flatMap(Gateway, (gateway) =>
        Effect.catchTags(
          callOrTask(gateway, payload, headers),
          {
            UpstreamFailed: (e) => Effect.flip(forCaller(gateway, e, redactFailure)),
            BadArguments: (e) => Effect.flip(forCaller(gateway, e, redactFailure))
          }
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
export const EventsLive = HttpApiBuilder.group(Api, "events", (handlers) => {
  // Built once per daemon: its open /v1/events streams, each held until its client leaves.
  let open = 0
  return handlers.handle("events", ({ urlParams }) =>
    Effect.gen(function*() {
      const max = yield* Effect.flatMap(Settings, (s) => s.get("transport.maxStreams"))
      if (open >= max) {
        return HttpServerResponse.unsafeJson(
          { error: `${max} event streams are open already (transport.maxStreams); try again later` },
          { status: 503, headers: { "retry-after": "5" } }
        )
      }
      const pool = yield* Pool
      const pending = yield* PendingCalls
      const keepAlive = yield* Effect.flatMap(Settings, (s) => s.get("transport.sseKeepAlive"))
      // A crash event carries the upstream's stderr tail: redacted but for the owner.
      const raw = yield* FiberRef.get(Redact.RawForOwner)
      const redactor = redactorOf(yield* Gateway)
      const shape = (event: Events.Event): Events.Event => (raw ? event : redactor.json(event) as Events.Event)
      const watcher = yield* ConfigWatcher
      const body = Events.sse(Events.filterOf(urlParams), keepAlive, shape, watcher.subscribe).pipe(
        Stream.provideService(Pool, pool),
        Stream.provideService(PendingCalls, pending),
        Stream.encodeText,
        // The place is held from the stream's start to its end, not from the request's: a
        // response never streamed holds none.
        (events) => Stream.acquireRelease(Effect.sync(() => void open++), () => Effect.sync(() => void open--)).pipe(Stream.flatMap(() => events))
      )
      return HttpServerResponse.stream(body, {
        contentType: "text/event-stream",
        headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
      })
    }))
})

// ---------------------------------------------------------------------------------------------
// Layers
// ---------------------------------------------------------------------------------------------

/** What the API runs on. */
export type Requirements = Gateway | Settings | Pool | PendingCalls | DaemonInfo | Backend | HostTasks | RecentCalls | ConfigWatcher | UpstreamAuth

/**
 * The implemented `/v1` API with `/v1/openapi.json`, for `HttpApiBuilder.serve` or `toWebHandler`.
 * The document's version is the daemon's own (DaemonInfo), so it changes with each release. Every
 * POST and PUT must be declared JSON (HttpJsonBody), on both listeners, before any route runs.
 */
export const layer: Layer.Layer<HttpApi.Api, never, Requirements> = Layer.unwrapEffect(
  Effect.map(DaemonInfo, (info) =>
    HttpApiBuilder.middlewareOpenApi({ path: OpenApiPath }).pipe(
      Layer.provideMerge(
        HttpApiBuilder.api(Api.annotate(OpenApi.Version, info.version)).pipe(
          Layer.provide(Layer.mergeAll(SystemLive, ToolsLive, SettingsLive, EventsLive, AskLive, TaskRoutes.TasksLive, CallsLive, jsonClientErrors))
        )
      ),
      Layer.merge(HttpApiBuilder.middleware(HttpJsonBody.requireJson))
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
