/**
 * The bodies of the `/v1` API's requests and responses (Api.ts puts them on its
 * routes): plain Schemas, apart from the HttpApi definitions, so the CLI's in-process
 * commands print the same shapes without building the API.
 */
import * as RevisionSchema from "@mcpx-fx/protocol/RevisionSchema"
import { EraRecord } from "@mcpx-fx/upstream/era/EraCache"
import { Lane } from "@mcpx-fx/upstream/pool/PoolModel"
import { PoolEvent } from "@mcpx-fx/upstream/pool/PoolEvents"
import { Preferences } from "@mcpx-fx/upstream/era/Preference"
import * as Schema from "effect/Schema"
import { ConfigEvent, ConfigState } from "./ConfigWatcher.js"
import { SettingRow, Source } from "@mcpx-fx/config/SettingsModel"
import { TaskRequest } from "./TasksApi.js"

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** `GET /v1/health`. */
export const Health = Schema.Struct({
  ok: Schema.Literal(true),
  version: Schema.String,
  pid: Schema.Number,
  uptimeMs: Schema.Number
})

/** A server that could not be listed, shown beside the others' results. */
export const ListingFailure = Schema.Struct({ server: Schema.String, message: Schema.String })

/** `GET /v1/tools` and `mcpx-fx tools --json`. */
export const ToolsListing = Schema.Struct({
  tools: Schema.Array(JsonObject),
  failures: Schema.Array(ListingFailure),
  /** `tools`/`excludeTools` patterns that match none of their server's tools (a daemon before them sends none). */
  warnings: Schema.optionalWith(Schema.Array(ListingFailure), { exact: true }),
  /**
   * A browser's GET only (ApiCaller.fromBrowser): the servers whose tools are not known yet, which
   * such a GET never lists or starts; the CLI's listing (or a POST search with `refresh`) does.
   */
  unlisted: Schema.optionalWith(Schema.Array(Schema.String), { exact: true })
})

/**
 * `GET /v1/search?q=&limit=`: words to look for and how many results. No `refresh`: a GET reaches
 * the daemon from any page (an image's URL), and listing servers never listed starts them.
 */
export const SearchQuery = Schema.Struct({
  q: Schema.optionalWith(Schema.String, { exact: true }),
  limit: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.positive()), { exact: true })
})

/** `POST /v1/search`: the same, and `refresh: true` to list (so start) the servers never listed. */
export const SearchRequest = Schema.Struct({
  q: Schema.optionalWith(Schema.String, { exact: true }),
  limit: Schema.optionalWith(Schema.Int.pipe(Schema.positive()), { exact: true }),
  refresh: Schema.optionalWith(Schema.Boolean, { exact: true })
})

/** `/v1/search` and `mcpx-fx search --json`: ranked hits, and what could not be searched. */
export const SearchListing = Schema.Struct({
  tools: Schema.Array(Schema.Struct({
    name: Schema.String,
    server: Schema.String,
    description: Schema.String,
    /** How the best term matched: exact, prefix, substring, namespace or description. */
    match: Schema.Literal("exact", "prefix", "substring", "namespace", "description")
  })),
  /** Servers never listed (not started, not in the schema cache); `POST /v1/search` with `refresh: true` lists them. */
  unlisted: Schema.Array(Schema.String),
  failures: Schema.Array(ListingFailure)
})

/** `POST /v1/call`: the tool as hosts name it (`ns__tool`, or `ns.tool`) and its arguments. */
export const CallRequest = Schema.Struct({
  tool: Schema.String,
  arguments: Schema.optionalWith(Schema.Unknown, { exact: true }),
  /** The caller's session, for servers pooled per session. */
  session: Schema.optionalWith(Schema.String, { exact: true }),
  /** Run the call as a task (TasksApi.ts): answered 202 with the task at once. */
  task: Schema.optionalWith(TaskRequest, { exact: true })
})

/**
 * `POST /v1/call`: the upstream's result unchanged (`mcpx-fx call --json` prints `result`). A tool
 * that reports `isError` is still a 200: the call worked and the tool said no.
 */
export const CallResponse = Schema.Struct({
  tool: Schema.String,
  result: JsonObject,
  isError: Schema.Boolean,
  durationMs: Schema.Number
})

/** One upstream's era, as `mcpx-fx protocol --json` lists it. */
export const ProtocolServer = Schema.Struct({
  server: Schema.String,
  namespace: Schema.String,
  preference: Schema.Literal(...Preferences),
  era: Schema.NullOr(RevisionSchema.EraSchema),
  negotiated: Schema.NullOr(Schema.String),
  eraSource: Schema.NullOr(Schema.Literal("probe", "cache", "forced")),
  cached: Schema.NullOr(EraRecord)
})

/** `GET /v1/protocol`: what mcpx-fx speaks to hosts, and what it speaks to each upstream. */
export const ProtocolReport = Schema.Struct({
  asServer: Schema.Struct({
    supported: Schema.Array(Schema.String),
    legacy: Schema.Array(Schema.String),
    modern: Schema.Array(Schema.String),
    latest: Schema.String,
    oldest: Schema.String
  }),
  asClient: Schema.Struct({
    /** The effective `upstream.protocol` (canonical; a server's own `protocol` key overrides it). */
    preference: Schema.Literal(...Preferences),
    eraCache: Schema.Boolean,
    legacy: Schema.Array(Schema.String),
    modern: Schema.Array(Schema.String),
    servers: Schema.Array(ProtocolServer)
  })
})

/** `POST /v1/probe/{server}` and `mcpx-fx probe --json`: one fresh start of the server, the era cache ignored. */
export const ProbeResult = Schema.Struct({
  server: Schema.String,
  preference: Schema.Literal(...Preferences),
  era: RevisionSchema.EraSchema,
  negotiated: Schema.String,
  eraSource: Schema.Literal("probe", "cache", "forced"),
  wire: Schema.Literal("stdio", "streamable-http", "http+sse"),
  durationMs: Schema.Number,
  /** What was sent and what each answer meant, with milliseconds since the start. */
  steps: Schema.Array(Schema.String),
  /** What the era cache holds for the server (the probe neither reads nor writes it). */
  cached: Schema.NullOr(EraRecord)
})

/** `GET /v1/settings` (`mcpx-fx settings list --json` prints `settings`). */
export const SettingsListing = Schema.Struct({ settings: Schema.Array(SettingRow) })

/** `PUT /v1/settings/{path}`: the value as JSON (a string is read as an env var would be). */
export const SetRequest = Schema.Struct({ value: Schema.Unknown })

/** One instance of a server's pool. */
export const InstanceRow = Schema.Struct({
  id: Schema.String,
  lane: Lane,
  key: Schema.String,
  state: Schema.Literal("queued", "starting", "ready"),
  era: Schema.optionalWith(RevisionSchema.EraSchema, { exact: true }),
  negotiated: Schema.optionalWith(Schema.String, { exact: true }),
  eraSource: Schema.optionalWith(Schema.Literal("probe", "cache", "forced"), { exact: true }),
  wire: Schema.optionalWith(Schema.String, { exact: true }),
  busy: Schema.Number,
  calls: Schema.Number,
  startedAt: Schema.optionalWith(Schema.Number, { exact: true }),
  idleSince: Schema.optionalWith(Schema.Number, { exact: true }),
  lastUsed: Schema.Number
})

/** One lane of a server's pool. */
export const LaneRow = Schema.Struct({
  lane: Lane,
  max: Schema.Number,
  live: Schema.Number,
  queued: Schema.Number,
  cooldown: Schema.optionalWith(
    Schema.Struct({ failures: Schema.Number, lastFailure: Schema.String, retryInMs: Schema.Number }),
    { exact: true }
  )
})

/** A server's pool: null until something has used it. */
export const PoolRow = Schema.Struct({
  lanes: Schema.Array(LaneRow),
  instances: Schema.Array(InstanceRow),
  legacyRefused: Schema.optionalWith(Schema.String, { exact: true })
})

/** An HTTP server's OAuth state (tokens are never shown); `needs-login` means `mcpx-fx auth login <server>`. */
export const AuthRow = Schema.Struct({
  state: Schema.Literal("valid", "expired", "needs-login", "none"),
  refreshable: Schema.Boolean,
  issuer: Schema.optionalWith(Schema.String, { exact: true }),
  /** When the access token expires, epoch milliseconds. */
  expiresAt: Schema.optionalWith(Schema.Number, { exact: true }),
  scopes: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }),
  /** Why a login is needed, when it is. */
  reason: Schema.optionalWith(Schema.String, { exact: true })
})

/** One configured server (`GET /v1/servers`); env and headers by key only, their values may be secrets. */
export const ServerRow = Schema.Struct({
  name: Schema.String,
  namespace: Schema.String,
  transport: Schema.Literal("stdio", "http"),
  command: Schema.optionalWith(Schema.String, { exact: true }),
  args: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }),
  cwd: Schema.optionalWith(Schema.String, { exact: true }),
  url: Schema.optionalWith(Schema.String, { exact: true }),
  envKeys: Schema.Array(Schema.String),
  headerKeys: Schema.Array(Schema.String),
  /** The config file that defined it. */
  file: Schema.String,
  /** The effective preference: the server's own `protocol` key, else `upstream.protocol`. */
  preference: Schema.Literal(...Preferences),
  scope: Schema.Literal("global", "session", "call"),
  callTimeoutMs: Schema.Number,
  pool: Schema.NullOr(PoolRow),
  /** HTTP servers authorized by OAuth: their token state. */
  auth: Schema.optionalWith(AuthRow, { exact: true })
})

/** `GET /v1/servers`. */
export const ServersListing = Schema.Struct({ servers: Schema.Array(ServerRow) })

/** Which layers the effective settings came from. */
export const SettingsSummary = Schema.Struct({
  /** How many settings each layer decides (`file` counts every file together). */
  sources: Schema.Struct({
    default: Schema.Number,
    file: Schema.Number,
    env: Schema.Number,
    flag: Schema.Number,
    runtime: Schema.Number
  }),
  /** Every setting not at its default, with where its value came from. */
  overridden: Schema.Array(Schema.Struct({ path: Schema.String, text: Schema.String, source: Source }))
})

/** `GET /v1/status`: the daemon, every server with its pool, and where the settings came from. */
export const Status = Schema.Struct({
  daemon: Schema.Struct({
    version: Schema.String,
    pid: Schema.Number,
    startedAt: Schema.Number,
    uptimeMs: Schema.Number,
    address: Schema.optionalWith(Schema.String, { exact: true }),
    port: Schema.optionalWith(Schema.Number, { exact: true }),
    socket: Schema.optionalWith(Schema.String, { exact: true }),
    configFiles: Schema.Array(Schema.String)
  }),
  /** The running configuration: its files, reloads, and the last refused reload (a daemon that watches). */
  config: Schema.optionalWith(ConfigState, { exact: true }),
  servers: Schema.Array(ServerRow),
  settings: SettingsSummary
})

/** `GET /v1/events` filters: comma-separated event types and server names. */
export const EventsQuery = Schema.Struct({
  types: Schema.optionalWith(Schema.String, { exact: true }),
  server: Schema.optionalWith(Schema.String, { exact: true })
})

/**
 * One lifecycle event on `/v1/events`: `{type, server, at, …}`, sent as an SSE frame whose `event:`
 * is the type (`server.start`, `server.stop`, `server.era.stale`, `server.crash`, `server.start.failed`),
 * or a configuration event without a server (`config.reload`, `config.error`).
 */
export const LifecycleEvent = Schema.Union(PoolEvent, ConfigEvent)
