/**
 * The product core: the configured upstream servers under their namespaces, listings aggregated
 * across them, and calls routed to the right upstream session through the Pool.
 *
 * Listing is concurrent and forgiving: one slow or broken server is reported beside the others'
 * results, never allowed to hide them. Results of calls are passed through unchanged; shaping
 * them for a host's revision is the host-facing server's job.
 *
 * What hosts see of the tools goes through each server's `tools`/`excludeTools` filter, and a tool
 * is checked against its server's listing (the ToolCatalog's, listed once and kept until the
 * server's tools change) before it is called, so an unknown or hidden name is refused the same way
 * whatever the upstream's era. Nothing about one server waits on another.
 *
 * The servers themselves are a table a config reload replaces (ServerTable.ts, `reconfigure`).
 *
 * Changes: what every live upstream instance sends outside its calls is gathered into one stream
 * of list changes and resource updates (URIs re-homed as hosts see them). Resource subscriptions
 * are forwarded to the owning upstream and counted, so one upstream subscription serves every
 * host watching that URI and the last one to leave unsubscribes.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import { EraCache } from "@mcpx-fx/upstream/era/EraCache"
import { Pool } from "@mcpx-fx/upstream/pool/Pool"
import { Prober } from "@mcpx-fx/upstream/era/Prober"
import type { ProbeReport } from "@mcpx-fx/upstream/era/ProbeModel"
import type { Session } from "@mcpx-fx/upstream/session/SessionModel"
import * as TaskCall from "@mcpx-fx/upstream/session/TaskCall"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Predicate from "effect/Predicate"
import * as PubSub from "effect/PubSub"
import type * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import { Config, type LoadedConfig } from "@mcpx-fx/config/Config"
import * as CallObserver from "./CallObserver.js"
import * as CallResolution from "./CallResolution.js"
import * as Changes from "./internal/Changes.js"
import * as Deadlines from "./internal/Deadlines.js"
import * as ResourceWatches from "./internal/ResourceWatches.js"
import * as ServerSettings from "./internal/ServerSettings.js"
import * as UpstreamRequests from "./internal/UpstreamRequests.js"
import * as GatewayTools from "./GatewayTools.js"
import * as Listings from "./internal/Listings.js"
import * as Suggest from "@mcpx-fx/config/Suggest"
import * as Names from "./Names.js"
import { PendingCalls } from "./PendingCalls.js"
import * as ServerTable from "./ServerTable.js"
import { Settings } from "@mcpx-fx/config/Settings"
import { ToolCatalog } from "./ToolCatalog.js"
import {
  type Caller,
  type GatewayCallError,
  type GatewayChange,
  GatewayConfigError,
  type GatewayServer,
  type KnownTools,
  type KnownToolsOptions,
  type Listing,
  type ServerProtocol,
  UnknownName
} from "./GatewayModel.js"

/** The gateway's upstream side. */
export class Gateway extends Context.Tag("@mcpx-fx/gateway/Gateway")<Gateway, {
  /** The servers in effect now; a config reload (`reconfigure`) replaces them. */
  readonly servers: ReadonlyArray<GatewayServer>
  /** Every server's visible tools (or only those of the servers `only` accepts), listed now. */
  readonly listTools: (caller: Caller, only?: Predicate.Predicate<GatewayServer>) => Effect.Effect<Listing>
  /**
   * The visible tools known without starting a server: a server's listing since its last change, a
   * started server listed now, or the schema cache's; `refresh` lists every server (starting them),
   * `cachedOnly` lists none, not even a started one (for a browser's GET, which must not reach an
   * upstream at all: a server pooled per session or per call would start a process for it).
   */
  readonly knownTools: (caller: Caller, options: KnownToolsOptions) => Effect.Effect<KnownTools>
  /** One visible tool's whole definition (schemas, annotations) under its host-visible name. */
  readonly describeTool: (
    caller: Caller,
    name: string,
    options?: { readonly suggest?: boolean }
  ) => Effect.Effect<JsonObject, GatewayCallError>
  /**
   * The resolution of a host-visible name when the live listing has its visible tool (upstream
   * name, schemas, annotations), made in place; undefined when it would take a lookup to say.
   * The same resolution `resolveTool` would make, and as good to hand to `callTool`.
   */
  readonly peekTool: (name: string) => CallResolution.Resolution | undefined
  /**
   * The call's one resolution (CallResolution.ts): server, upstream name and visible tool behind a
   * host-visible name, read in place from the live listing when it has it, else by listing that
   * server alone (which may start it). What every path that names a tool goes through.
   */
  readonly resolveTool: (
    caller: Caller,
    name: string,
    options?: { readonly suggest?: boolean }
  ) => Effect.Effect<CallResolution.Resolution, GatewayCallError>
  /**
   * Runs a reloaded configuration: unchanged servers keep their processes, removed ones stop and
   * redefined ones restart once their calls finish, and hosts are told the lists changed.
   */
  readonly reconfigure: (config: LoadedConfig) => Effect.Effect<ServerTable.Diff, GatewayConfigError>
  readonly listPrompts: (caller: Caller) => Effect.Effect<Listing>
  readonly listResources: (caller: Caller) => Effect.Effect<Listing>
  readonly listResourceTemplates: (caller: Caller) => Effect.Effect<Listing>
  /**
   * Calls a tool by its host-visible name, resolved (and held to the server's tool filters) on
   * every round, or by the resolution the caller already made of it for this round (`resolveTool`,
   * `peekTool`: the same check, not made twice; made again if a reload came in between): `retry`
   * is what a modern retry adds to the params (`inputResponses`, the upstream's `requestState`),
   * and goes where the first round went only if the name still does. The upstream's result comes
   * back unchanged.
   */
  readonly callTool: (
    caller: Caller,
    tool: string | CallResolution.Resolution,
    args: JsonObject,
    meta?: JsonObject,
    retry?: JsonObject
  ) => Effect.Effect<JsonObject, GatewayCallError>
  readonly getPrompt: (caller: Caller, name: string, args: JsonObject, meta?: JsonObject, retry?: JsonObject) => Effect.Effect<JsonObject, GatewayCallError>
  readonly readResource: (caller: Caller, uri: string, meta?: JsonObject, retry?: JsonObject) => Effect.Effect<JsonObject, GatewayCallError>
  /** Sends any request to one server's session (completion, subscriptions, …) with the caller's context. */
  readonly forward: (caller: Caller, namespace: string, method: string, params: JsonObject) => Effect.Effect<JsonObject, GatewayCallError>
  readonly protocol: Effect.Effect<ReadonlyArray<ServerProtocol>>
  /** Probes a server now, ignoring the era cache, and reports what was sent and what decided it. */
  readonly probe: (namespace: string) => Effect.Effect<ProbeReport, GatewayCallError>
  /** A subscription, in place once this returns, to every upstream's changes. */
  readonly changes: Effect.Effect<Queue.Dequeue<GatewayChange>, never, Scope.Scope>
  /**
   * Subscribes upstream to a resource (its re-homed URI) for as long as the scope lasts, so its
   * updates arrive on `changes`. The upstream's refusal (e.g. a modern one, which has no
   * `resources/subscribe`) is the caller's failure.
   */
  readonly watchResource: (caller: Caller, uri: string) => Effect.Effect<void, GatewayCallError, Scope.Scope>
}>() {
  /**
   * The gateway over the configuration, settings, pool, prober, era cache and tool catalog (the
   * CLI's keeps its schema cache in the state dir; `ToolCatalog.layerMemory` keeps none); questions
   * nobody can be said to have caused are held in PendingCalls.
   */
  static readonly layer: Layer.Layer<Gateway, GatewayConfigError, Config | Settings | Pool | Prober | EraCache | PendingCalls | ToolCatalog> = Layer
    .scoped(
      Gateway,
      Effect.suspend(() => make)
    )
}

const make = Effect.gen(function*() {
  const config = yield* Config
  const settings = yield* Settings
  const pool = yield* Pool
  const prober = yield* Prober
  const cache = yield* EraCache
  const pending = yield* PendingCalls
  const catalog = yield* ToolCatalog

  const { build, checkPrefix, current, currentKnown, hotSettings } = yield* ServerSettings.make(settings, pending.hold)
  yield* checkPrefix(config)

  const deadlines = yield* Deadlines.make
  const atStart = yield* hotSettings
  const table = ServerTable.make(config.servers.map((configured) => build(configured, atStart)))

  const { listAll, request } = UpstreamRequests.make({ pool, deadlines, current, currentKnown })

  // What hosts may see of the tools, and what the catalog knows of them (GatewayTools.ts).
  const tools = GatewayTools.make({
    servers: () => table.servers,
    catalog,
    pool,
    listAll: (server, caller) => listAll(server, caller, Method.ToolsList, "tools"),
    unknownTool: (name, suggestions) => new UnknownName({ kind: "tool", name, suggestions: [...suggestions] })
  })
  const { listServerTools, resolveTool, unmatchedPatterns, visible } = tools

  const aggregate = Listings.aggregate({ servers: () => table.servers, listServerTools, listAll, unmatchedPatterns, visible })

  const listTools = aggregate(Method.ToolsList, "tools", Listings.renamed("name"))
  const listPrompts = aggregate(Method.PromptsList, "prompts", Listings.renamed("name"))
  const listResources = aggregate(Method.ResourcesList, "resources", Listings.renamed("uri"))
  const listResourceTemplates = aggregate(Method.ResourcesTemplatesList, "resourceTemplates", Listings.renamed("uriTemplate"))

  const unknown = (kind: UnknownName["kind"], name: string, listing: (c: Caller) => Effect.Effect<Listing>, caller: Caller) =>
    Effect.flatMap(listing(caller), (l) => {
      // A resource is named by its URI, whatever its display name.
      const key = kind === "resource" ? "uri" : "name"
      const known = l.items.flatMap((i) => (typeof i[key] === "string" ? [i[key]] : []))
      return Effect.fail(new UnknownName({ kind, name, suggestions: [...Suggest.closest(name, known)] }))
    })

  // `_meta` before the copy, set again over params' own: a key added after a spread is V8's slow
  // path, per call (docs/performance.md, A key added after a spread).
  const withMeta = (params: JsonObject, meta: JsonObject | undefined): JsonObject => {
    if (meta === undefined) return params
    const out: Record<string, unknown> = { _meta: meta, ...params }
    out._meta = meta
    return out
  }

  const serverByNamespace = (namespace: string) => Option.fromNullable(table.servers.find((s) => s.namespace === namespace || s.name === namespace))

  const noSuchServer = (namespace: string) =>
    new UnknownName({
      kind: "server",
      name: namespace,
      suggestions: [...Suggest.closest(namespace, table.servers.map((s) => s.namespace))]
    })

  const { changes, listen } = yield* Changes.make({ servers: () => table.servers, pool, catalog, current })
  const { watchResource } = ResourceWatches.make({
    servers: () => table.servers,
    request,
    listen,
    unknownResource: (uri, caller) => unknown("resource", uri, listResources, caller)
  })

  const reconfigure = (next: LoadedConfig): Effect.Effect<ServerTable.Diff, GatewayConfigError> =>
    Effect.gen(function*() {
      yield* checkPrefix(next)
      const hot = yield* hotSettings
      const d = ServerTable.diff(table.servers.map((s) => s.configured), next.servers)
      const before = table.servers
      table.replace(next.servers.map((configured) => build(configured, hot)))
      for (const name of [...d.removed, ...d.restarted]) {
        yield* pool.retire(name)
        yield* catalog.forget(name)
      }
      const touched = [...d.added, ...d.removed, ...d.restarted]
      for (const server of touched) {
        yield* PubSub.publish(changes, { _tag: "ToolsListChanged", server })
        yield* PubSub.publish(changes, { _tag: "PromptsListChanged", server })
        yield* PubSub.publish(changes, { _tag: "ResourcesListChanged", server })
      }
      for (const server of d.refiltered) yield* PubSub.publish(changes, { _tag: "ToolsListChanged", server })
      if (ServerTable.changesAnything(d)) {
        yield* Effect.logInfo(
          `servers reconfigured: added ${d.added.join(", ") || "none"}; removed ${d.removed.join(", ") || "none"}; ` +
            `restarted ${d.restarted.join(", ") || "none"}; refiltered ${d.refiltered.join(", ") || "none"} ` +
            `(${before.length} → ${table.servers.length} servers)`
        )
      }
      return d
    })

  /** A tool call to where its resolution points (Gateway.callTool: resolved once, by whoever asked first). */
  const callResolved = (
    caller: Caller,
    found: CallResolution.Resolution,
    args: JsonObject,
    meta: JsonObject | undefined,
    retry: JsonObject | undefined
  ): Effect.Effect<JsonObject, GatewayCallError> => {
    const params = withMeta({ name: found.name, arguments: args, ...retry }, meta)
    // Upstream tasks are followed to their end for every host (TaskCall); a retry whose state
    // names one answers its questions.
    const resumed = TaskCall.resumedTask(retry?.requestState)
    const answers = isJsonObject(retry?.inputResponses) ? retry.inputResponses : {}
    // The call's one observation (CallObserver.ts) learns the server and the era here.
    return CallObserver.withinCall(caller.observation, (observation) => {
      observation.server = found.server.namespace
      observation.upstream = true
      const send = resumed !== undefined
        ? (session: Session, ctx: Caller) => {
          observation.era = session.era
          return TaskCall.resume(session, resumed, answers, ctx)
        }
        : (session: Session, ctx: Caller) => {
          observation.era = session.era
          // A modern upstream may make any round a task, the last round of its questions included.
          return TaskCall.asTask(session, found.tool) && (retry === undefined || session.era === "modern")
            ? TaskCall.call(session, params, ctx)
            : session.request(Method.ToolsCall, params, ctx)
        }
      // flatMap and succeed: one step fewer than map, on every tool call.
      return Effect.flatMap(
        request(found.server, caller, Method.ToolsCall, params, send, true),
        (result) => Effect.succeed(Names.qualifyResult(found.server, Method.ToolsCall, result))
      )
    }, () => new CallObserver.Observation("gateway", CallResolution.hostName(found), caller.sessionId, caller.revision, undefined))
  }

  return Gateway.of({
    get servers() {
      return table.servers
    },
    listTools,
    listPrompts,
    listResources,
    listResourceTemplates,
    knownTools: tools.knownTools,
    peekTool: tools.peekTool,
    resolveTool: (caller, name, options) => resolveTool(caller, name, options?.suggest ?? true),
    describeTool: (caller, name, options) =>
      Effect.map(resolveTool(caller, name, options?.suggest ?? true), (found) => Names.qualifyTool(found.server, found.tool)),
    reconfigure,
    // A resolution made before a reload is made again, in the servers (and filters) now in effect.
    callTool: (caller, tool, args, meta, retry) =>
      typeof tool !== "string" && CallResolution.current(tool, table.servers)
        ? callResolved(caller, tool, args, meta, retry)
        : Effect.flatMap(resolveTool(caller, CallResolution.hostName(tool)), (found) => callResolved(caller, found, args, meta, retry)),
    getPrompt: (caller, name, args, meta, retry) => {
      const found = Names.resolve(table.servers, name)
      return found === undefined
        ? unknown("prompt", name, listPrompts, caller)
        : Effect.map(
          request(found.server, caller, Method.PromptsGet, withMeta({ name: found.name, arguments: args, ...retry }, meta)),
          (result) => Names.qualifyResult(found.server, Method.PromptsGet, result)
        )
    },
    readResource: (caller, uri, meta, retry) => {
      const found = Names.resolveUri(table.servers, uri)
      return found === undefined
        ? unknown("resource", uri, listResources, caller)
        : Effect.map(
          request(found.server, caller, Method.ResourcesRead, withMeta({ uri: found.uri, ...retry }, meta)),
          (result) => Names.qualifyResult(found.server, Method.ResourcesRead, result)
        )
    },
    forward: (caller, namespace, method, params) =>
      Option.match(serverByNamespace(namespace), {
        onNone: () => Effect.fail(noSuchServer(namespace)),
        onSome: (server) => Effect.map(request(server, caller, method, params), (result) => Names.qualifyResult(server, method, result))
      }),
    protocol: Effect.suspend(() =>
      Effect.forEach(table.servers, (configured) =>
        Effect.gen(function*() {
          const server = yield* current(configured)
          const report = yield* pool.report(server.name)
          const cached = yield* cache.get(server.configured.definition)
          return {
            server: server.name,
            namespace: server.namespace,
            preference: server.preference,
            era: Option.match(report, { onNone: () => null, onSome: (r) => r.era }),
            negotiated: Option.match(report, { onNone: () => null, onSome: (r) => r.negotiated }),
            eraSource: Option.match(report, { onNone: () => null, onSome: (r) => r.eraSource }),
            cached: Option.getOrNull(cached)
          } satisfies ServerProtocol
        }))
    ),
    probe: (namespace) =>
      Option.match(serverByNamespace(namespace), {
        onNone: () => Effect.fail(noSuchServer(namespace)),
        onSome: (configured) =>
          Effect.scoped(
            Effect.flatMap(current(configured), (server) =>
              Effect.map(
                prober.start(server.configured.definition, { ...server.pool.probe, ignoreCache: true }),
                (started) => started.report
              ))
          )
      }),
    changes: PubSub.subscribe(changes),
    watchResource
  })
})
