/**
 * What the `/v1` handlers (ApiHandlers.ts) and the CLI's in-process commands
 * shape alike: `toolsListing`, `callTool`, `protocolReport`, `serverRows` and the rest, so
 * `mcpx-fx tools|call|protocol --json` print the API's bodies without loading the API itself.
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as Revision from "@mcpx-fx/protocol/Revision"
import type { Pool } from "@mcpx-fx/upstream/pool/Pool"
import type { PoolStatus } from "@mcpx-fx/upstream/pool/PoolStatus"
import { type AuthStatus, UpstreamAuth } from "@mcpx-fx/upstream/auth/UpstreamAuth"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as ApiSchema from "./ApiBodies.js"
import { apiCaller, type CallerHeaders } from "./ApiCaller.js"
import * as ArgumentCheck from "./ArgumentCheck.js"
import { BadArguments, type UpstreamFailed, upstreamFailed } from "./ApiErrors.js"
import type { Gateway } from "@mcpx-fx/gateway/Gateway"
import { type GatewayCallError, type GatewayServer, UnknownName } from "@mcpx-fx/gateway/GatewayModel"
import * as Suggest from "@mcpx-fx/config/Suggest"
import { qualifiedToolName } from "@mcpx-fx/gateway/Names"
import * as Redact from "@mcpx-fx/gateway/Redact"
import * as ToolSearch from "@mcpx-fx/gateway/ToolSearch"
import type { Settings } from "@mcpx-fx/config/Settings"

type GatewayService = Gateway["Type"]
type SettingsService = Settings["Type"]

/**
 * Every tool, or one server's (`ns`): `GET /v1/tools` and `mcpx-fx tools --json`. With
 * `cachedOnly` (a browser's GET, ApiCaller.fromBrowser), only what is known already, no server
 * listed or started; the servers nothing is known of are `unlisted`.
 */
export const toolsListing = (
  gateway: GatewayService,
  namespace?: string,
  options: { readonly cachedOnly?: boolean } = {}
): Effect.Effect<typeof ApiSchema.ToolsListing.Type, UnknownName> =>
  Effect.gen(function*() {
    const servers = namespace === undefined
      ? gateway.servers
      : gateway.servers.filter((s) => s.namespace === namespace || s.name === namespace)
    if (namespace !== undefined && servers.length === 0) {
      const known = gateway.servers.map((s) => s.namespace)
      return yield* new UnknownName({ kind: "server", name: namespace, suggestions: [...Suggest.closest(namespace, known)] })
    }
    const names = new Set(servers.map((s) => s.name))
    if (options.cachedOnly === true) {
      const known = yield* gateway.knownTools({}, { refresh: false, cachedOnly: true })
      return {
        tools: known.items.filter((i) => names.has(i.server.name)).map((i) => i.tool),
        failures: known.failures.filter((f) => names.has(f.server)),
        unlisted: known.unlisted.filter((s) => names.has(s))
      }
    }
    const listing = yield* gateway.listTools({})
    const tools = namespace === undefined
      ? listing.items
      : listing.items.filter((t) => servers.some((s) => !s.prefixed || String(t.name).startsWith(`${s.namespace}__`)))
    return {
      tools,
      failures: listing.failures.filter((f) => names.has(f.server)),
      warnings: (listing.warnings ?? []).filter((w) => names.has(w.server))
    }
  })

/**
 * `/v1/search` and `mcpx-fx search`: what is known, ranked; servers not started are never started
 * unless `refresh`. With `cachedOnly` (a browser's GET), no server is listed at all.
 */
export const searchTools = (
  gateway: GatewayService,
  query: typeof ApiSchema.SearchRequest.Type,
  options: { readonly cachedOnly?: boolean } = {}
): Effect.Effect<typeof ApiSchema.SearchListing.Type> =>
  ToolSearch.search(gateway, {}, {
    query: query.q ?? "",
    ...(query.limit !== undefined ? { limit: query.limit } : {}),
    ...(query.refresh === true ? { refresh: true } : {}),
    ...(options.cachedOnly === true ? { cachedOnly: true } : {})
  })

/**
 * Calls one tool: `POST /v1/call`. A tool's `isError` result is a success here (the caller decides,
 * as `mcpx-fx call` does with exit 1); arguments that do not fit the tool's inputSchema
 * (ArgumentCheck.ts), or that the upstream refuses (-32602), are BadArguments.
 */
export const callTool = (
  gateway: GatewayService,
  request: typeof ApiSchema.CallRequest.Type,
  headers: typeof CallerHeaders.Type = {}
): Effect.Effect<typeof ApiSchema.CallResponse.Type, UnknownName | BadArguments | UpstreamFailed> =>
  Effect.gen(function*() {
    const tool = qualifiedToolName(request.tool)
    const caller = apiCaller(request.session, headers)
    const began = yield* Clock.currentTimeMillis
    const result = yield* ArgumentCheck.check(gateway, caller, tool, request.arguments ?? {}).pipe(
      // The check's resolution is the call's: the same caller and name, resolved once.
      Effect.flatMap((checked) => gateway.callTool(caller, checked.resolution, checked.args)),
      Effect.catchIf(
        (e): e is Exclude<GatewayCallError, UnknownName> => e._tag !== "UnknownName" && e._tag !== "BadArguments",
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

/** The pool's part of a row. A cooldown's last failure and a refusal quote what the upstream said. */
const poolRow = (status: PoolStatus | undefined, redact: Redact.Redactor): typeof ApiSchema.PoolRow.Type | null =>
  status === undefined
    ? null
    : {
      lanes: status.lanes.map((lane) =>
        lane.cooldown === undefined ? lane : { ...lane, cooldown: { ...lane.cooldown, lastFailure: redact.text(lane.cooldown.lastFailure) } }
      ),
      instances: status.instances,
      ...(status.legacyRefused !== undefined ? { legacyRefused: redact.text(status.legacyRefused) } : {})
    }

// Per server table (a reload makes a new one): the redactor's forms of each secret are worked out once.
const redactors = new WeakMap<ReadonlyArray<GatewayServer>, Redact.Redactor>()

/** What redacts this gateway's configured secrets from relayed text (ApiHandlers redacts for callers with it). */
export const redactorOf = (gateway: GatewayService): Redact.Redactor => {
  const servers = gateway.servers
  const known = redactors.get(servers)
  if (known !== undefined) return known
  const made = Redact.forDefinitions(servers.map((s) => s.configured.definition))
  redactors.set(servers, made)
  return made
}

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
    pool: poolRow(status, redact),
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
): Effect.Effect<ReadonlyArray<typeof ApiSchema.ServerRow.Type>, never, UpstreamAuth> =>
  Effect.gen(function*() {
    const snapshot = yield* pool.snapshot
    // The hot settings as they stand now, which is what the next call will use.
    const preference = yield* settings.get("upstream.protocol")
    const callTimeout = yield* settings.get("pool.callTimeout")
    const auth = yield* UpstreamAuth
    const redact = redactorOf(gateway)
    return yield* Effect.forEach(gateway.servers, (server) => {
      const def = server.configured.definition
      // A server OAuth does not apply to (stdio, its own Authorization header, UpstreamAuth.none) shows none.
      const authStatus = def.transport === "http" && auth.credentials(def) !== undefined
        ? Effect.asSome(auth.status(def))
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
