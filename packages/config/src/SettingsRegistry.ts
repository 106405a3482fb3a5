/**
 * The settings registry: every knob is one entry, and its config-file key, `MCPX_*` environment
 * variable, CLI flag and `/v1/settings` row are all derived from that entry, so the spellings can
 * never drift apart. The Settings service (Settings.ts) resolves and serves them.
 */
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { DefaultPreference } from "@mcpx-fx/upstream/era/Preference"
import * as Codec from "./internal/Codec.js"
import { define, type Setting } from "./internal/SettingDefine.js"
import { fleetSettings } from "./FleetSettings.js"

export { envNameOf, fileKeyOf, flagNameOf, type Setting } from "./internal/SettingDefine.js"

/** Who shares one upstream session: everyone, one caller session, or one call. */
export const PoolScopes = ["global", "session", "call"] as const

/** A `pool.scope` value. */
export type PoolScope = (typeof PoolScopes)[number]

/** The codec for pool scopes, shared with the config file's per-server `pool` block. */
export const poolScopeCodec: Codec.Codec<PoolScope> = Codec.oneOf(PoolScopes)

/** What hosts are shown of the tools: every tool, or three meta-tools that search, describe and call them. */
export const ExposeModes = ["all", "search"] as const

/** A `tools.expose` value. */
export type ExposeMode = (typeof ExposeModes)[number]

/** Every setting, in the order `settings list` shows them. */
export const registry = [
  define("upstream.protocol", {
    codec: Codec.preference,
    default: DefaultPreference,
    hot: true,
    description: "Which request is sent to an upstream first (prefer-discover, prefer-initialize, force-discover, " +
      "force-initialize, follow; older names are accepted and normalised). A server's own protocol key overrides it."
  }),
  define("upstream.eraCache", {
    codec: Codec.boolean,
    default: true,
    hot: false,
    description: "Remember each upstream's era in <state>/upstream-eras.json, so later starts skip the probe."
  }),
  define("upstream.probeTimeout", {
    codec: Codec.duration,
    default: Duration.seconds(2),
    hot: true,
    description: "How long a stdio upstream may take to answer server/discover before initialize is sent alongside it " +
      "(the discover is not abandoned); ten times as long for one the era cache says is modern."
  }),
  define("upstream.stdinBuffer", {
    codec: Codec.positiveInt,
    default: 16 * 1024 * 1024,
    hot: false,
    description: "How many characters may wait to reach a stdio upstream's stdin. Past it, a new request to that server is " +
      "answered at once with an error naming it and this setting, so a server that reads slower than a host " +
      "sends cannot make mcpx-fx hold the host's requests in memory without end."
  }),
  define("names.prefix", {
    codec: Codec.boolean,
    default: true,
    hot: false,
    description: "Show tools and prompts as <namespace>__<name> and resources under mcpx://<namespace>/. Only a configuration " +
      "with a single server may turn it off, so hosts see that server's names exactly."
  }),
  define("tools.expose", {
    codec: Codec.oneOf(ExposeModes),
    default: "all",
    hot: true,
    description: "What MCP hosts are shown: all (every tool), or search (three meta-tools that search, describe and call " +
      "the tools, so a large configuration costs the model three tool definitions). A server's expose key overrides it."
  }),
  define("pool.max", {
    codec: Codec.positiveInt,
    default: 1,
    hot: false,
    description: "Upstream sessions per server, scope key and era lane, unless the server's pool block says otherwise."
  }),
  define("pool.scope", {
    codec: poolScopeCodec,
    default: "global",
    hot: false,
    description: "Who shares an upstream session: global (everyone), session (each caller session), call (each call)."
  }),
  define("pool.idleTimeout", {
    codec: Codec.duration,
    default: Duration.minutes(5),
    hot: true,
    description: "How long an unused upstream session is kept before it is stopped."
  }),
  define("pool.callTimeout", {
    codec: Codec.duration,
    default: Duration.seconds(60),
    hot: true,
    description: "How long one call to an upstream may run before it is cancelled."
  }),
  define("pool.startTimeout", {
    codec: Codec.duration,
    default: Duration.seconds(30),
    hot: true,
    description: "How long an upstream may take to start and complete its handshake or probe."
  }),
  define("questions.ttl", {
    codec: Codec.duration,
    default: Duration.minutes(10),
    hot: false,
    description: "How long a call whose upstream asked a question waits for its caller's answers (a 2026-07-28 host's retry, " +
      "/v1/ask, mcpx-fx elicit) before the question is answered for it (an elicitation cancelled) and the call cancelled."
  }),
  define("questions.maxRounds", {
    codec: Codec.positiveInt,
    default: 8,
    hot: true,
    description: "How many rounds of questions one call may put to its caller before it is cancelled."
  }),
  define("questions.maxPending", {
    codec: Codec.positiveInt,
    default: 256,
    hot: true,
    description: "How many calls may wait for their callers' answers at once; past it, a call that asks is cancelled with an error."
  }),
  define("questions.maxQuestions", {
    codec: Codec.positiveInt,
    default: 32,
    hot: true,
    description: "How many questions one call may have open at once; past it, the call is cancelled with an error and the " +
      "questions answered for its caller. With questions.maxPending, it bounds every question held."
  }),
  define("questions.gather", {
    codec: Codec.duration,
    default: Duration.millis(50),
    hot: true,
    description: "After an upstream asks, how long to wait for more questions before the caller is asked, so questions asked " +
      "together reach the caller in one round."
  }),
  define("tasks.after", {
    codec: Codec.duration,
    default: Duration.seconds(2),
    hot: false,
    description: "For a 2026-07-28 host that declared the tasks extension: a call that has not answered within this becomes a " +
      "task (the host gets a CreateTaskResult and polls tasks/get). A tool whose upstream supports tasks is one at once."
  }),
  define("tasks.ttl", {
    codec: Codec.duration,
    default: Duration.hours(1),
    hot: false,
    description: "How long a task stays readable (tasks/get, /v1/tasks) after it was created; then it is purged."
  }),
  define("tasks.pollInterval", {
    codec: Codec.duration,
    default: Duration.seconds(1),
    hot: false,
    description: "How often hosts are told to poll a task (pollIntervalMs)."
  }),
  define("tasks.perCaller", {
    codec: Codec.positiveInt,
    default: 64,
    hot: false,
    description: "How many unfinished tasks one caller may hold; past it, a tool that runs only as a task is refused with an error " +
      "and any other call answers in its request."
  }),
  define("tasks.total", {
    codec: Codec.positiveInt,
    default: 1024,
    hot: false,
    description: "How many unfinished tasks mcpx-fx holds in all; past it, as for tasks.perCaller."
  }),
  define("tasks.store", {
    codec: Codec.storeUrl,
    default: "",
    hot: false,
    secret: true,
    description: "Where tasks are kept: empty for the embedded SQLite file <state>/tasks.db (no server needed), or a PostgreSQL " +
      "URL (postgres://user@host:5432/db) that several mcpx-fx instances can share."
  }),
  define("transport.stdioDrain", {
    codec: Codec.duration,
    default: Duration.seconds(5),
    hot: false,
    description: "After a host closes stdin, how long requests in flight get to answer before they are cancelled."
  }),
  define("transport.sseKeepAlive", {
    codec: Codec.duration,
    default: Duration.seconds(15),
    hot: false,
    description: "Interval of the keep-alive comment on open SSE streams."
  }),
  define("transport.allowedOrigins", {
    codec: Codec.origins,
    default: [],
    hot: false,
    description: "Browser origins allowed on /mcp and /v1 besides loopback and daemon.address, and the only ones granted CORS: " +
      "exact scheme://host[:port], comma-separated in the environment and on the command line."
  }),
  define("transport.allowedHosts", {
    codec: Codec.hosts,
    default: [],
    hot: false,
    description: "Host names a request to the daemon's TCP listener may use besides its own address (loopback names and " +
      "daemon.address at daemon.port): name (any port) or name:port, comma-separated. Any other Host is 403."
  }),
  define("transport.maxBatch", {
    codec: Codec.positiveInt,
    default: 100,
    hot: false,
    description: "The most messages one JSON-RPC batch may hold, over stdio and HTTP; a longer batch is refused whole with -32600. " +
      "A batch runs 8 of its requests at a time."
  }),
  define("transport.sessionIdleTimeout", {
    codec: Codec.duration,
    default: Duration.minutes(30),
    hot: false,
    description: "How long a legacy HTTP session may go without a request (nothing in flight) before it ends; its GET stream " +
      "closes and it answers 404, so the client initializes again."
  }),
  define("transport.maxSessions", {
    codec: Codec.positiveInt,
    default: 1000,
    hot: false,
    description: "The most legacy HTTP sessions held at once. A new initialize past it ends the least recently used session with " +
      "nothing in flight, or is refused with 503 when every session is busy."
  }),
  define("transport.maxStreams", {
    codec: Codec.positiveInt,
    default: 256,
    hot: false,
    description: "The most streams that stay open until their client leaves: 2026-07-28 subscriptions/listen streams over HTTP, " +
      "and apart from them /v1/events streams. Past it a new one is refused with 503 and Retry-After."
  }),
  define("transport.headersTimeout", {
    codec: Codec.duration,
    default: Duration.seconds(10),
    hot: false,
    description: "How long an HTTP client may take to send a request's headers to the daemon; a slower one is answered 408 and " +
      "its connection closed."
  }),
  define("transport.requestTimeout", {
    codec: Codec.duration,
    default: Duration.seconds(60),
    hot: false,
    description: "How long an HTTP client may take to send a whole request (headers and body) to the daemon; a slower one is " +
      "answered 408 and its connection closed. The response may stream for as long as it needs."
  }),
  define("daemon.maxConnections", {
    codec: Codec.nonNegativeInt,
    default: 0,
    hot: false,
    description: "The most TCP connections the daemon holds at once; more are closed as they come, so a flood cannot use up the " +
      "file descriptors the CLI socket and the upstreams need. 0: the process's open-file limit less 256."
  }),
  define("daemon.address", {
    codec: Codec.host,
    default: "127.0.0.1",
    hot: false,
    description: "Address the daemon listens on for /mcp and /v1."
  }),
  define("daemon.port", {
    codec: Codec.port,
    default: 7717,
    hot: false,
    description: "TCP port the daemon listens on; 0 picks an ephemeral port."
  }),
  define("daemon.token", {
    codec: Codec.token,
    default: "",
    hot: false,
    secret: true,
    description: "A bearer token every request to /mcp and /v1 over TCP must carry (Authorization: Bearer <token>); the CLI's " +
      "unix socket needs none. Empty: none, unless daemon.address is not loopback, when one is generated into " +
      "<state>/daemon.token (mode 0600)."
  }),
  define("daemon.shutdownGrace", {
    codec: Codec.duration,
    default: Duration.seconds(10),
    hot: false,
    description: "When the daemon is asked to stop, how long calls in flight may still finish before they are cancelled."
  }),
  define("log.format", {
    codec: Codec.oneOf(["text", "json"]),
    default: "text",
    hot: false,
    description: "How log lines on stderr look: text for a person, json for one JSON object per line (time, level, message, the " +
      "annotations, trace_id/span_id inside a span). It takes effect once the config file is read: lines before that " +
      "(a bad config's own error) are text. --log-format and MCPX_LOG_FORMAT decide from the first line."
  }),
  ...fleetSettings
] as const

/**
 * The environment names of the secret settings (`MCPX_DAEMON_TOKEN`): never handed down to a stdio
 * server's process, which inherits the rest of mcpx-fx's environment.
 */
export const secretEnvNames: ReadonlyArray<string> = registry.filter((s) => s.secret).map((s) => s.env)

/** Any registry entry. */
export type AnySetting = (typeof registry)[number]

/** A setting's dotted path. */
export type SettingPath = AnySetting["path"]

/** The value type of the setting at `P`. */
export type SettingValue<P extends SettingPath> = Extract<AnySetting, { readonly path: P }>["default"]

// The registry holds settings of different value types; this widening is the one place they are
// handled alike (decode, format, encode), and each value only ever meets its own setting's schemas.
export type Erased = Setting<SettingPath, unknown>
export const erase = (s: AnySetting): Erased => s as unknown as Erased

export const byPath: ReadonlyMap<string, Erased> = new Map(registry.map((s) => [s.path, erase(s)]))
export const byFlag: ReadonlyMap<string, Erased> = new Map(registry.map((s) => [s.flag, erase(s)]))

/** Every setting path, for error messages and completion. */
export const paths: ReadonlyArray<SettingPath> = registry.map((s) => s.path)

/** Whether a string names a setting. */
export const isSettingPath = (path: string): path is SettingPath => byPath.has(path)

/** The registry entry at `path`. */
export const lookup = <P extends SettingPath>(path: P): Extract<AnySetting, { readonly path: P }> =>
  registry.find((s) => s.path === path) as Extract<AnySetting, { readonly path: P }>

/** Why an unknown setting path is refused. */
export const unknownSetting = (path: string): string => `unknown setting ${JSON.stringify(path)}; expected one of: ${paths.join(", ")}`

/**
 * Checks a config file's value for a setting, returning why it is refused. The config loader
 * uses it so a bad value is reported with the file and key before anything starts.
 */
export const checkFileValue = (path: string, value: unknown): Option.Option<string> => {
  const setting = byPath.get(path)
  if (setting === undefined) return Option.some(unknownSetting(path))
  return Either.match(Schema.decodeUnknownEither(setting.fromJson)(value), {
    onLeft: (e) => Option.some(Codec.firstIssue(e).message),
    onRight: () => Option.none()
  })
}
