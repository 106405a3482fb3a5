/**
 * The tools hosts may see, as the Gateway serves them: each server's `tools`/`excludeTools` filter,
 * the ToolCatalog's listings (a server is listed when its listing is not current, and every
 * listing keeps the catalog current), the check of a called name against its server's listing,
 * and what is known of every server without starting any (for search).
 *
 * Everything here asks one server at a time, about that server: a call, a schema lookup or an
 * unknown name never waits on a server it does not name, except to suggest names for a namespace
 * that is itself unknown.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type { Pool } from "@mcpx-fx/upstream/pool/Pool"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Caller, GatewayCallError, GatewayServer, KnownTools, KnownToolsOptions, ListingFailure, UnknownName } from "./GatewayModel.js"
import * as Suggest from "@mcpx-fx/config/Suggest"
import * as CallResolution from "./CallResolution.js"
import * as Names from "./Names.js"
import type { ToolCatalog } from "./ToolCatalog.js"

/** What the tool view needs of the Gateway. */
export interface Deps {
  /** The servers in effect now. */
  readonly servers: () => ReadonlyArray<GatewayServer>
  readonly catalog: ToolCatalog["Type"]
  readonly pool: Pool["Type"]
  /** Every page of a server's `tools/list`. */
  readonly listAll: (server: GatewayServer, caller: Caller) => Effect.Effect<ReadonlyArray<JsonObject>, GatewayCallError>
  readonly unknownTool: (name: string, suggestions: ReadonlyArray<string>) => UnknownName
}

/** Whether hosts may see a tool (its upstream name against the server's filter). */
export const visible = (server: GatewayServer, tool: JsonObject): boolean => {
  const filter = server.configured.filter
  return filter === undefined || filter.all || (typeof tool.name === "string" && filter.allows(tool.name))
}

/** A server's visible tools under their host-visible names. */
const shown = (server: GatewayServer, tools: ReadonlyArray<JsonObject>): ReadonlyArray<JsonObject> =>
  tools.filter((t) => visible(server, t)).map((t) => Names.qualifyTool(server, t))

/** The tool view over the Gateway's servers. */
export const make = (deps: Deps) => {
  const { catalog } = deps

  // The unmatched patterns logged so far, by server definition: a reload compiles a new filter,
  // so a pattern still wrong after it is logged again.
  const logged = new WeakMap<object, Set<string>>()

  /**
   * The patterns of a server's `tools`/`excludeTools` that match none of `tools` (its whole
   * listing): a likely typo that would otherwise only show as missing tools. Each is logged once.
   */
  const unmatchedPatterns = (server: GatewayServer, tools: ReadonlyArray<JsonObject>): Effect.Effect<ReadonlyArray<ListingFailure>> =>
    Effect.suspend(() => {
      const filter = server.configured.filter
      if (filter === undefined || filter.all) return Effect.succeed([])
      const names = tools.flatMap((t) => (typeof t.name === "string" ? [t.name] : []))
      const warnings = filter.unmatched(names).map((u) => ({
        server: server.name,
        message: `${u.list} pattern ${JSON.stringify(u.pattern)} matches none of its ${names.length} tool${names.length === 1 ? "" : "s"}`
      }))
      const seen = logged.get(filter) ?? new Set<string>()
      logged.set(filter, seen)
      const fresh = warnings.filter((w) => !seen.has(w.message))
      for (const w of fresh) seen.add(w.message)
      return Effect.as(
        Effect.forEach(fresh, (w) => Effect.logWarning(w.message).pipe(Effect.annotateLogs("server", w.server)), { discard: true }),
        warnings
      )
    })

  // Every listing of a server's tools keeps the catalog current.
  const listServerTools = (server: GatewayServer, caller: Caller) => catalog.refresh(server.catalog, deps.listAll(server, caller))

  /** The visible tools of a server as the catalog knows them, without listing it. */
  const catalogued = (server: GatewayServer) =>
    Effect.flatMap(catalog.live(server.name), (live) => (Option.isSome(live) ? Effect.succeed(live) : catalog.stored(server.catalog))).pipe(
      Effect.map(Option.map((known) => shown(server, known.tools)))
    )

  /**
   * An unknown tool, with suggestions from what the catalog knows. A server the catalog knows
   * nothing of is listed only when the name points at it: a namespace that is itself a typo has
   * its two closest servers listed (so `legay.echo` still suggests `legacy__echo`), a bare name
   * every such server. Without `suggest` nothing is listed at all.
   */
  const unknownTool = (name: string, caller: Caller, suggest: boolean): Effect.Effect<never, UnknownName> =>
    Effect.gen(function*() {
      if (!suggest) return yield* deps.unknownTool(name, [])
      const servers = deps.servers()
      const at = name.indexOf(Names.Separator)
      const namespace = at > 0 ? name.slice(0, at) : undefined
      const namespaces = servers.map((s) => s.namespace)
      const near = namespace === undefined ? namespaces : namespaces.includes(namespace) ? [] : Suggest.closest(namespace, namespaces, 2)
      const names = yield* Effect.forEach(servers, (server) =>
        Effect.flatMap(catalogued(server), (known) => {
          if (Option.isSome(known)) return Effect.succeed(known.value)
          if (!near.includes(server.namespace)) return Effect.succeed([])
          return listServerTools(server, caller).pipe(Effect.map((tools) => shown(server, tools)), Effect.orElseSucceed(() => []))
        }), { concurrency: "unbounded" })
      const known = names.flat().flatMap((t) => (typeof t.name === "string" ? [t.name] : []))
      return yield* deps.unknownTool(name, Suggest.closest(name, known))
    })

  /**
   * The call's resolution (CallResolution.ts): the tool behind a host-visible name, checked
   * against its server's listing. The live listing answers in place (no listing, no upstream);
   * otherwise the server is listed, and only when the catalog has nothing current for it. A
   * listing the server cannot give at all (it has no tools/list) lets the call go ahead; a server
   * that cannot be reached fails here.
   */
  const resolveTool = (caller: Caller, name: string, suggest = true): Effect.Effect<CallResolution.Resolution, GatewayCallError> =>
    // Read when run, not when built: an effect built once may run again after the servers or their listings changed.
    Effect.suspend(() => resolveNow(caller, name, suggest))

  const resolveNow = (caller: Caller, name: string, suggest: boolean): Effect.Effect<CallResolution.Resolution, GatewayCallError> => {
    const servers = deps.servers()
    const found = CallResolution.locate(servers, name)
    if (found === undefined) return unknownTool(name, caller, suggest)
    const live = catalog.peek(found.server.catalog, found.name)
    if (live !== undefined) return Effect.succeed(CallResolution.resolved(servers, name, found, live))
    return catalog.lookup(found.server.catalog, found.name, listServerTools(found.server, caller)).pipe(
      Effect.catchTag("UpstreamRpcError", () => Effect.succeed(Option.some<JsonObject>({ name: found.name }))),
      Effect.flatMap((tool) =>
        Option.isNone(tool) ? unknownTool(name, caller, suggest) : Effect.succeed(CallResolution.resolved(servers, name, found, tool.value))
      )
    )
  }

  /**
   * The resolution of a host-visible name if the catalog's live listing has its tool; nothing is
   * listed or started. The same resolution as `resolveTool`'s in-place answer, without an effect.
   */
  const peekTool = (name: string): CallResolution.Resolution | undefined => {
    const servers = deps.servers()
    const found = CallResolution.locate(servers, name)
    if (found === undefined) return undefined
    const live = catalog.peek(found.server.catalog, found.name)
    return live === undefined ? undefined : CallResolution.resolved(servers, name, found, live)
  }

  /**
   * The visible tools known without starting a server: a listing since the server's last change,
   * a started server listed now, the schema cache's; `refresh` lists every server.
   */
  const knownTools = (caller: Caller, options: KnownToolsOptions): Effect.Effect<KnownTools> =>
    Effect.gen(function*() {
      const snapshot = yield* deps.pool.snapshot
      const started = new Set(snapshot.filter((p) => p.instances.some((i) => i.state === "ready")).map((p) => p.server))
      const parts = yield* Effect.forEach(deps.servers(), (server) =>
        Effect.gen(function*() {
          const live = yield* catalog.live(server.name)
          // A started server is listed (it answers at once); one not started is never started here.
          const tools = Option.isSome(live)
            ? live.value.tools
            : options.refresh || (options.cachedOnly !== true && started.has(server.name))
            ? yield* Effect.either(listServerTools(server, caller)).pipe(
              Effect.map((r) => (r._tag === "Right" ? r.right : { failure: r.left.message }))
            )
            : Option.getOrUndefined(Option.map(yield* catalog.stored(server.catalog), (k) => k.tools))
          if (tools === undefined) return { server, items: [], unlisted: true, failure: undefined }
          if ("failure" in tools) return { server, items: [], unlisted: false, failure: tools.failure }
          return { server, items: shown(server, tools).map((tool) => ({ server, tool })), unlisted: false, failure: undefined }
        }), { concurrency: "unbounded" })
      return {
        items: parts.flatMap((p) => p.items),
        unlisted: parts.filter((p) => p.unlisted).map((p) => p.server.name),
        failures: parts.flatMap((p) => (p.failure === undefined ? [] : [{ server: p.server.name, message: p.failure }]))
      }
    })

  return { visible, listServerTools, peekTool, resolveTool, knownTools, unmatchedPatterns }
}
