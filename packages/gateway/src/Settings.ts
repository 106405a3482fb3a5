/**
 * The settings registry and the service that resolves it. Every knob is one registry entry, and
 * its config-file key, `MCPX_*` environment variable, CLI flag and `/v1/settings` row are all
 * derived from that entry, so the spellings can never drift apart. Values are resolved with the
 * precedence default < file < env < flag < runtime, and each remembers which layer it came from.
 * The runtime layer (`PUT /v1/settings/{path}`) holds only hot settings: a cold one would report a
 * value nothing in the running process uses, so it is refused with `restartRequired` instead.
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { DefaultPreference } from "@mcpx-fx/upstream/Preference"
import * as Codec from "./internal/Codec.js"
import * as Names from "./Names.js"

// ---------------------------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------------------------

const words = (segment: string): ReadonlyArray<string> =>
  segment.replace(/([a-z0-9])([A-Z])/g, "$1 $2").split(" ")

/** The environment variable of a setting path: `upstream.eraCache` → `MCPX_UPSTREAM_ERA_CACHE`. */
export const envNameOf = (path: string): string =>
  `MCPX_${path.split(".").flatMap(words).join("_").toUpperCase()}`

/** The CLI flag of a setting path: `upstream.eraCache` → `--upstream-era-cache`. */
export const flagNameOf = (path: string): string =>
  `--${path.split(".").flatMap(words).join("-").toLowerCase()}`

/** How a setting is named inside a config file's `settings` object, for error messages. */
export const fileKeyOf = (path: string): string => `settings[${JSON.stringify(path)}]`

// ---------------------------------------------------------------------------------------------
// Registry
// ---------------------------------------------------------------------------------------------

/** One registry entry: the setting's names, value schemas, default and documentation. */
export interface Setting<P extends string, A> {
  /** The dotted path, which is also the key in a config file's `settings` object. */
  readonly path: P
  /** `MCPX_<PATH>`, derived from the path. */
  readonly env: string
  /** `--<path-kebab>`, derived from the path. */
  readonly flag: string
  readonly description: string
  /**
   * Whether a runtime change (`PUT /v1/settings/{path}`) takes effect without a restart: the
   * gateway re-reads a hot value on every call, while a cold one is read once at start.
   */
  readonly hot: boolean
  readonly default: A
  /** What a valid value looks like, for errors and help text. */
  readonly expected: string
  /** Decodes the text of an env var or flag. */
  readonly fromString: Schema.Schema<A, string>
  /** Decodes a config file's JSON value and encodes to the JSON a `/v1/settings` row shows. */
  readonly fromJson: Schema.Schema<A, unknown>
  /** The text form, as an env var or flag would hold it. */
  readonly format: (a: A) => string
  /** A secret: listings and `/v1/settings` say whether it is set, never what it is. */
  readonly secret: boolean
}

const define = <const P extends string, A>(
  path: P,
  spec: {
    readonly codec: Codec.Codec<A>
    readonly default: NoInfer<A>
    readonly hot: boolean
    readonly description: string
    readonly secret?: boolean
  }
): Setting<P, A> => ({
  path,
  secret: spec.secret ?? false,
  env: envNameOf(path),
  flag: flagNameOf(path),
  description: spec.description,
  hot: spec.hot,
  default: spec.default,
  expected: spec.codec.expected,
  fromString: spec.codec.fromString,
  fromJson: spec.codec.fromJson,
  format: spec.codec.format
})

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
    description:
      "Which request is sent to an upstream first (prefer-discover, prefer-initialize, force-discover, " +
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
    description:
      "How long a stdio upstream may take to answer server/discover before initialize is sent alongside it " +
      "(the discover is not abandoned); ten times as long for one the era cache says is modern."
  }),
  define("names.prefix", {
    codec: Codec.boolean,
    default: true,
    hot: false,
    description:
      "Show tools and prompts as <namespace>__<name> and resources under mcpx://<namespace>/. Only a configuration " +
      "with a single server may turn it off, so hosts see that server's names exactly."
  }),
  define("tools.expose", {
    codec: Codec.oneOf(ExposeModes),
    default: "all",
    hot: true,
    description:
      "What MCP hosts are shown: all (every tool), or search (three meta-tools that search, describe and call " +
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
    description:
      "How long a call whose upstream asked a question waits for its caller's answers (a 2026-07-28 host's retry, " +
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
  define("questions.gather", {
    codec: Codec.duration,
    default: Duration.millis(50),
    hot: true,
    description:
      "After an upstream asks, how long to wait for more questions before the caller is asked, so questions asked " +
        "together reach the caller in one round."
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
    description:
      "Browser origins allowed on /mcp and /v1 besides loopback and daemon.address, and the only ones granted CORS: " +
      "exact scheme://host[:port], comma-separated in the environment and on the command line."
  }),
  define("transport.allowedHosts", {
    codec: Codec.hosts,
    default: [],
    hot: false,
    description:
      "Host names a request to the daemon's TCP listener may use besides its own address (loopback names and " +
      "daemon.address at daemon.port): name (any port) or name:port, comma-separated. Any other Host is 403."
  }),
  define("transport.maxBatch", {
    codec: Codec.positiveInt,
    default: 100,
    hot: false,
    description:
      "The most messages one JSON-RPC batch may hold, over stdio and HTTP; a longer batch is refused whole with -32600. " +
      "A batch runs 8 of its requests at a time."
  }),
  define("transport.sessionIdleTimeout", {
    codec: Codec.duration,
    default: Duration.minutes(30),
    hot: false,
    description:
      "How long a legacy HTTP session may go without a request (nothing in flight) before it ends; its GET stream " +
      "closes and it answers 404, so the client initializes again."
  }),
  define("transport.maxSessions", {
    codec: Codec.positiveInt,
    default: 1000,
    hot: false,
    description:
      "The most legacy HTTP sessions held at once. A new initialize past it ends the least recently used session with " +
      "nothing in flight, or is refused with 503 when every session is busy."
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
    description:
      "A bearer token every request to /mcp and /v1 over TCP must carry (Authorization: Bearer <token>); the CLI's " +
      "unix socket needs none. Empty: none, unless daemon.address is not loopback, when one is generated into " +
      "<state>/daemon.token (mode 0600)."
  }),
  define("daemon.shutdownGrace", {
    codec: Codec.duration,
    default: Duration.seconds(10),
    hot: false,
    description: "When the daemon is asked to stop, how long calls in flight may still finish before they are cancelled."
  })
] as const

/** Any registry entry. */
export type AnySetting = (typeof registry)[number]

/** A setting's dotted path. */
export type SettingPath = AnySetting["path"]

/** The value type of the setting at `P`. */
export type SettingValue<P extends SettingPath> = Extract<AnySetting, { readonly path: P }>["default"]

// The registry holds settings of different value types; this widening is the one place they are
// handled alike (decode, format, encode), and each value only ever meets its own setting's schemas.
type Erased = Setting<SettingPath, unknown>
const erase = (s: AnySetting): Erased => s as unknown as Erased

const byPath: ReadonlyMap<string, Erased> = new Map(registry.map((s) => [s.path, erase(s)]))
const byFlag: ReadonlyMap<string, Erased> = new Map(registry.map((s) => [s.flag, erase(s)]))

/** Every setting path, for error messages and completion. */
export const paths: ReadonlyArray<SettingPath> = registry.map((s) => s.path)

/** Whether a string names a setting. */
export const isSettingPath = (path: string): path is SettingPath => byPath.has(path)

/** The registry entry at `path`. */
export const lookup = <P extends SettingPath>(path: P): Extract<AnySetting, { readonly path: P }> =>
  registry.find((s) => s.path === path) as Extract<AnySetting, { readonly path: P }>

/** Why an unknown setting path is refused. */
export const unknownSetting = (path: string): string =>
  `unknown setting ${JSON.stringify(path)}; expected one of: ${paths.join(", ")}`

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

// ---------------------------------------------------------------------------------------------
// Sources, rows, errors
// ---------------------------------------------------------------------------------------------

/** Where an effective value came from: `default`, `file:<path>`, `env:MCPX_X`, `flag:--x` (or `runtime`). */
export const Source = Schema.Union(
  Schema.Literal("default", "runtime"),
  Schema.TemplateLiteral("file:", Schema.String),
  Schema.TemplateLiteral("env:", Schema.String),
  Schema.TemplateLiteral("flag:", Schema.String)
)

/** Where an effective value came from. */
export type Source = typeof Source.Type

/** One setting as `mcpx-fx settings list`, `config --sources` and `/v1/settings` report it. */
export const SettingRow = Schema.Struct({
  path: Schema.String,
  /** The effective value as JSON (durations in their short form, origins as a list). */
  value: Schema.Unknown,
  /** The effective value as an env var or flag would spell it. */
  text: Schema.String,
  default: Schema.Unknown,
  source: Source,
  env: Schema.String,
  flag: Schema.String,
  hot: Schema.Boolean,
  expected: Schema.String,
  description: Schema.String
})

/** One row of the settings listing. */
export type SettingRow = typeof SettingRow.Type

/** A setting's effective value and where it came from. */
export interface Resolved<P extends SettingPath> {
  readonly path: P
  readonly value: SettingValue<P>
  readonly source: Source
}

/**
 * A setting value, flag or file key that was refused. The message names the source, the key as
 * the user spelled it there and what was expected, e.g.
 * `MCPX_POOL_MAX: expected a positive integer, got "abc"`.
 */
export class SettingsError extends Schema.TaggedError<SettingsError>()("SettingsError", {
  source: Source,
  /** The key as spelled at the source: the env var, the flag, or `settings["pool.max"]` in a file. */
  key: Schema.String,
  /** What was expected and what was found. */
  detail: Schema.String
}) {
  override get message(): string {
    return this.source.startsWith("file:") ? `${this.source.slice(5)}: ${this.key}: ${this.detail}` : `${this.key}: ${this.detail}`
  }
}

// ---------------------------------------------------------------------------------------------
// Resolution
// ---------------------------------------------------------------------------------------------

/** The `settings` object of one config file. */
export interface SettingsFile {
  /** The file's path, as reported in `file:<path>` sources. */
  readonly file: string
  /** Raw JSON values keyed by setting path. */
  readonly values: Readonly<Record<string, unknown>>
}

/** Everything the settings are resolved from; the CLI and tests pass these in explicitly. */
export interface SettingsInput {
  /** Config files' `settings` objects, nearest first (the first file that sets a key wins). */
  readonly files?: ReadonlyArray<SettingsFile>
  /** The environment; only registry variables are read, and an empty value counts as unset. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Flag values keyed by flag name (`--pool-max`; the dashes may be left off). */
  readonly flags?: Readonly<Record<string, string | undefined>>
}

interface Entry {
  readonly value: unknown
  readonly source: Source
}

const decodeAt = (
  schema: Schema.Schema<unknown, unknown>,
  raw: unknown,
  source: Source,
  key: string
): Either.Either<Entry, SettingsError> =>
  Either.mapBoth(Schema.decodeUnknownEither(schema)(raw), {
    onLeft: (e) => new SettingsError({ source, key, detail: Codec.firstIssue(e).message }),
    onRight: (value) => ({ value, source })
  })

const textSchema = (s: Erased): Schema.Schema<unknown, unknown> => s.fromString as Schema.Schema<unknown, unknown>

/**
 * Resolves every setting. Each layer that sets a value is decoded even when a higher layer
 * overrides it, so a typo in a file is reported instead of lying in wait for the day the env
 * var that hides it is removed.
 */
export const resolveAll = (input: SettingsInput): Either.Either<ReadonlyMap<SettingPath, Entry>, SettingsError> => {
  const entries = new Map<SettingPath, Entry>()
  for (const s of registry) entries.set(s.path, { value: s.default, source: "default" })

  const fromFiles = new Set<string>()
  for (const file of input.files ?? []) {
    const source: Source = `file:${file.file}`
    for (const [path, raw] of Object.entries(file.values)) {
      const setting = byPath.get(path)
      const key = fileKeyOf(path)
      if (setting === undefined) return Either.left(new SettingsError({ source, key, detail: unknownSetting(path) }))
      const decoded = decodeAt(setting.fromJson, raw, source, key)
      if (Either.isLeft(decoded)) return Either.left(decoded.left)
      if (fromFiles.has(path)) continue
      fromFiles.add(path)
      entries.set(setting.path, decoded.right)
    }
  }

  const env = input.env ?? {}
  for (const s of registry.map(erase)) {
    const raw = env[s.env]
    if (raw === undefined || raw === "") continue
    const decoded = decodeAt(textSchema(s), raw, `env:${s.env}`, s.env)
    if (Either.isLeft(decoded)) return Either.left(decoded.left)
    entries.set(s.path, decoded.right)
  }

  for (const [name, raw] of Object.entries(input.flags ?? {})) {
    if (raw === undefined) continue
    const flag = name.startsWith("--") ? name : `--${name}`
    const setting = byFlag.get(flag)
    if (setting === undefined) {
      const detail = `unknown setting flag; expected one of: ${registry.map((s) => s.flag).join(", ")}`
      return Either.left(new SettingsError({ source: `flag:${flag}`, key: flag, detail }))
    }
    const decoded = decodeAt(textSchema(setting), raw, `flag:${flag}`, flag)
    if (Either.isLeft(decoded)) return Either.left(decoded.left)
    entries.set(setting.path, decoded.right)
  }
  return Either.right(entries)
}

/** What a secret's value shows as once set. */
export const Hidden = "[redacted]"

const shownJson = (setting: Erased, value: unknown): unknown =>
  setting.secret && setting.format(value) !== "" ? Hidden : Schema.encodeSync(setting.fromJson)(value)

const shownText = (setting: Erased, value: unknown): string =>
  setting.secret && setting.format(value) !== "" ? Hidden : setting.format(value)

const rowOf = (setting: Erased, entry: Entry): SettingRow => ({
  path: setting.path,
  value: shownJson(setting, entry.value),
  text: shownText(setting, entry.value),
  default: Schema.encodeSync(setting.fromJson)(setting.default),
  source: entry.source,
  env: setting.env,
  flag: setting.flag,
  hot: setting.hot,
  expected: setting.expected,
  description: setting.description
})

/** What a runtime change did: the normalised value, and whether the running gateway uses it. */
export const SetResult = Schema.Struct({
  path: Schema.String,
  /** The value as JSON after normalisation (e.g. `legacy` → `prefer-initialize`). */
  value: Schema.Unknown,
  /** The value as an env var or flag would spell it. */
  text: Schema.String,
  /** Whether it is now the effective value: true for a hot setting. */
  applied: Schema.Boolean,
  /** A cold setting: nothing was stored; set it in a config file, env var or flag and restart. */
  restartRequired: Schema.Boolean,
  /** Where the effective value now comes from (`runtime` once applied). */
  source: Source,
  note: Schema.optionalWith(Schema.String, { exact: true })
})

/** What a runtime change did. */
export type SetResult = typeof SetResult.Type

/** What dropping a runtime override did: the value and source in effect afterwards. */
export const UnsetResult = Schema.Struct({
  path: Schema.String,
  /** False when there was no runtime override to drop. */
  removed: Schema.Boolean,
  value: Schema.Unknown,
  text: Schema.String,
  source: Source
})

/** What dropping a runtime override did. */
export type UnsetResult = typeof UnsetResult.Type

/** A path no registry entry has; `suggestions` are the closest paths. */
export class UnknownSetting extends Schema.TaggedError<UnknownSetting>("@mcpx-fx/gateway/UnknownSetting")("UnknownSetting", {
  path: Schema.String,
  suggestions: Schema.Array(Schema.String)
}) {
  override get message(): string {
    const hint = this.suggestions.length > 0 ? `did you mean ${this.suggestions.join(" or ")}?` : `expected one of: ${paths.join(", ")}`
    return `unknown setting ${JSON.stringify(this.path)}; ${hint}`
  }
}

/** A runtime value the setting's codec refused; `detail` says what was expected (for `upstream.protocol`, every accepted name). */
export class InvalidSettingValue extends Schema.TaggedError<InvalidSettingValue>("@mcpx-fx/gateway/InvalidSettingValue")(
  "InvalidSettingValue",
  { path: Schema.String, detail: Schema.String }
) {
  override get message(): string {
    return `${this.path}: ${this.detail}`
  }
}

/** The settings service: typed reads of effective values, their sources, and runtime overrides. */
export interface SettingsService {
  /** The effective value of one setting, typed by its path. */
  readonly get: <P extends SettingPath>(path: P) => Effect.Effect<SettingValue<P>>
  /** The effective value and where it came from. */
  readonly resolve: <P extends SettingPath>(path: P) => Effect.Effect<Resolved<P>>
  /** Every setting, in registry order, as `settings list` and `/v1/settings` show it. */
  readonly list: Effect.Effect<ReadonlyArray<SettingRow>>
  /**
   * Sets a runtime override from a JSON value (a string is read as an env var's text would be).
   * A hot setting takes effect at once; a cold one is checked but not stored (`restartRequired`).
   */
  readonly set: (path: string, value: unknown) => Effect.Effect<SetResult, UnknownSetting | InvalidSettingValue>
  /** Drops a runtime override, so the file, env or flag value (or the default) is in effect again. */
  readonly unset: (path: string) => Effect.Effect<UnsetResult, UnknownSetting>
  /**
   * Takes the `settings` objects of reloaded config files. Hot settings take their new file values
   * at once; a cold one that changed keeps its running value and is named in `restartRequired`.
   */
  readonly replaceFiles: (files: ReadonlyArray<SettingsFile>) => Effect.Effect<FilesReplaced, SettingsError>
}

/** What a config reload did to the settings. */
export interface FilesReplaced {
  /** Hot settings whose value changed and now apply. */
  readonly applied: ReadonlyArray<SettingPath>
  /** Cold settings whose file value changed; the running value stays until a restart. */
  readonly restartRequired: ReadonlyArray<SettingPath>
}

/** The refusal of a path no registry entry has, naming the closest paths. */
export const unknownSettingError = (path: string): UnknownSetting =>
  new UnknownSetting({ path, suggestions: [...Names.closest(path, paths)] })

/** Builds the service from explicit inputs; fails with the first refused value. */
export const make = Effect.fn("Settings.make")(function*(input: SettingsInput) {
  // Replaced whole by a config reload (replaceFiles); read on every get.
  let base = yield* resolveAll(input)
  const overridden = [...base].filter(([, e]) => e.source !== "default").map(([p, e]) => `${p}=${e.source}`)
  yield* Effect.logDebug("settings resolved").pipe(Effect.annotateLogs("overrides", overridden.join(" ")))
  // Runtime overrides sit apart from the resolved layers, so dropping one brings back exactly the
  // value the file, env or flag gave.
  const runtime = yield* Ref.make(new Map<SettingPath, Entry>())
  const baseEntry = (path: SettingPath): Entry => base.get(path) ?? { value: lookup(path).default, source: "default" }
  const entryIn = (m: ReadonlyMap<SettingPath, Entry>, path: SettingPath): Entry => m.get(path) ?? baseEntry(path)
  const entry = (path: SettingPath) => Effect.map(Ref.get(runtime), (m) => entryIn(m, path))
  const known = (path: string) =>
    Effect.suspend(() => {
      const setting = byPath.get(path)
      return setting === undefined
        ? Effect.fail(unknownSettingError(path))
        : Effect.succeed(setting)
    })
  const jsonOf = shownJson
  const service: SettingsService = {
    get: <P extends SettingPath>(path: P) =>
      Effect.map(entry(path), (e) => e.value as SettingValue<P>),
    resolve: <P extends SettingPath>(path: P) =>
      Effect.map(entry(path), (e): Resolved<P> => ({ path, value: e.value as SettingValue<P>, source: e.source })),
    list: Effect.map(Ref.get(runtime), (m) => registry.map((s) => rowOf(erase(s), entryIn(m, s.path)))),
    set: (path, raw) =>
      Effect.gen(function*() {
        const setting = yield* known(path)
        const value = yield* Either.match(Schema.decodeUnknownEither(setting.fromJson)(raw), {
          onLeft: (e) => Effect.fail(new InvalidSettingValue({ path, detail: Codec.firstIssue(e).message })),
          onRight: Effect.succeed
        })
        const shown = { path: setting.path, value: jsonOf(setting, value), text: shownText(setting, value) }
        if (!setting.hot) {
          const current = yield* entry(setting.path)
          return {
            ...shown,
            applied: false,
            restartRequired: true,
            source: current.source,
            note: `${setting.path} is read once at start: set it in a config file, ${setting.env} or ${setting.flag} and restart`
          } satisfies SetResult
        }
        yield* Ref.update(runtime, (m) => new Map(m).set(setting.path, { value, source: "runtime" }))
        yield* Effect.logInfo(`setting ${setting.path}=${shownText(setting, value)} (runtime)`)
        return { ...shown, applied: true, restartRequired: false, source: "runtime" } satisfies SetResult
      }),
    unset: (path) =>
      Effect.gen(function*() {
        const setting = yield* known(path)
        const removed = yield* Ref.modify(runtime, (m) => {
          if (!m.has(setting.path)) return [false, m] as const
          const next = new Map(m)
          next.delete(setting.path)
          return [true, next] as const
        })
        const now = baseEntry(setting.path)
        return {
          path: setting.path,
          removed,
          value: jsonOf(setting, now.value),
          text: shownText(setting, now.value),
          source: now.source
        } satisfies UnsetResult
      }),
    replaceFiles: (files) =>
      Effect.gen(function*() {
        const next = new Map(yield* resolveAll({ ...input, files }))
        const applied: Array<SettingPath> = []
        const restartRequired: Array<SettingPath> = []
        for (const s of registry.map(erase)) {
          const was = baseEntry(s.path)
          const now = next.get(s.path)
          if (now === undefined || s.format(now.value) === s.format(was.value)) continue
          if (s.hot) applied.push(s.path)
          else {
            restartRequired.push(s.path)
            next.set(s.path, was)
          }
        }
        base = next
        return { applied, restartRequired } satisfies FilesReplaced
      })
  }
  return service
})

/** The resolved settings. */
export class Settings extends Context.Tag("@mcpx-fx/gateway/Settings")<Settings, SettingsService>() {
  /** Settings from explicit inputs (files' `settings` objects, an env record, flag values). */
  static readonly layer = (input: SettingsInput): Layer.Layer<Settings, SettingsError> =>
    Layer.effect(Settings, make(input))

  /** Settings whose inputs are computed by an effect, e.g. read from the loaded `Config`. */
  static readonly layerEffect = <E, R>(
    input: Effect.Effect<SettingsInput, E, R>
  ): Layer.Layer<Settings, SettingsError | E, R> => Layer.effect(Settings, Effect.flatMap(input, make))

  /** Every setting at its default, for tests of services that read settings. */
  static readonly layerDefaults: Layer.Layer<Settings> = Layer.effect(Settings, Effect.orDie(make({})))
}

/** Reads one setting from the `Settings` in context. */
export const get = <P extends SettingPath>(path: P): Effect.Effect<SettingValue<P>, never, Settings> =>
  Effect.flatMap(Settings, (s) => s.get(path))
