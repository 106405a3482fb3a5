/**
 * The config file: the `mcpServers` format that Claude Desktop, Claude Code and Cursor use, so an
 * existing file works unchanged, plus mcpx-fx's own keys.
 *
 * ```jsonc
 * {
 *   "mcpServers": {
 *     "github": {
 *       "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
 *       "env": { "GITHUB_TOKEN": "${GITHUB_TOKEN}" },
 *       "protocol": "follow",                              // overrides upstream.protocol
 *       "pool": { "max": 2, "idleTimeout": "10m", "scope": "session" }
 *     },
 *     "docs": { "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer ${DOCS_TOKEN}" } },
 *     "inherited": { "disabled": true },                   // drops a server a farther file defines
 *   },
 *   "settings": { "upstream.protocol": "prefer-initialize", "pool.callTimeout": "2m" }
 * }
 * ```
 *
 * Settings live in one flat `settings` object keyed by setting path (the same string as the
 * `/v1/settings` row and, transformed, the env var and flag), rather than as nested top-level
 * objects: the files are shared with other tools, and one reserved key cannot collide with theirs.
 * Other top-level keys and unknown keys in a server entry (`type`, `autoApprove`, …) are ignored
 * for the same reason; a server's `pool` block, which is ours alone, refuses unknown keys.
 *
 * Comments and trailing commas are allowed. `${VAR}`, `${VAR:-default}` and `$$` expand in
 * `command`, `args`, `env`, `cwd`, `url`, `headers` and `auth`, as in Claude Code; a relative `cwd`
 * is taken from the file's directory. An HTTP server's `auth` block is described in
 * internal/AuthEntry.ts.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { HttpDefinition, type ServerDefinition, StdioDefinition } from "@mcpx-fx/upstream/ServerDefinition"
import * as AuthEntry from "./internal/AuthEntry.js"
import * as Codec from "./internal/Codec.js"
import * as Expand from "./internal/Expand.js"
import * as Jsonc from "./internal/Jsonc.js"
import * as Settings from "./Settings.js"

// ---------------------------------------------------------------------------------------------
// Inputs and errors
// ---------------------------------------------------------------------------------------------

/** The process's environment, working directory and home, passed in so loading is hermetic. */
export interface Environment {
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
  readonly home: string
}

/** What config discovery needs: the environment plus the `--config FILE` flag, if given. */
export interface ConfigInput extends Environment {
  readonly configFlag?: string | undefined
}

/**
 * A configuration mistake, naming the file, the key path inside it (empty for the file as a
 * whole) and what was expected. The CLI prints `message` and exits 2.
 */
export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  file: Schema.String,
  /** The key path, e.g. `mcpServers.github.env.GITHUB_TOKEN` or `settings["pool.max"]`. */
  path: Schema.String,
  /** What was expected and what was found. */
  detail: Schema.String
}) {
  override get message(): string {
    return this.path === "" ? `${this.file}: ${this.detail}` : `${this.file}: ${this.path}: ${this.detail}`
  }
}

/** A key path as the user would write it to find the key: `mcpServers["my server"].args[0]`. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path
    .map((k, i) =>
      typeof k === "number"
        ? `[${k}]`
        : typeof k === "string" && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k)
        ? i === 0 ? k : `.${k}`
        : `[${JSON.stringify(String(k))}]`
    )
    .join("")

// ---------------------------------------------------------------------------------------------
// File schema
// ---------------------------------------------------------------------------------------------

const expecting = <S extends Schema.Schema.Any>(schema: S, expected: string): S =>
  schema.annotations({
    message: (issue) => ({ message: Codec.refusal(expected, issue.actual), override: false })
  }) as S

const exact = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

const Text = expecting(Schema.String, "a string")
const TextList = expecting(Schema.Array(Text), "a list of strings")
const TextMap = expecting(Schema.Record({ key: Schema.String, value: Text }), "an object of strings")

/** The connection kinds other clients write in `type`; mcpx-fx only checks they fit the entry. */
const ServerTypes = ["stdio", "http", "streamable-http", "sse"] as const

/** A server's own `pool` block; every key falls back to the `pool.*` setting of the same name. */
export const PoolBlock = expecting(
  Schema.Struct({
    max: exact(Settings.lookup("pool.max").fromJson),
    scope: exact(Settings.lookup("pool.scope").fromJson),
    idleTimeout: exact(Settings.lookup("pool.idleTimeout").fromJson),
    callTimeout: exact(Settings.lookup("pool.callTimeout").fromJson),
    startTimeout: exact(Settings.lookup("pool.startTimeout").fromJson)
  }).annotations({ parseOptions: { onExcessProperty: "error" } }),
  "an object with max, scope, idleTimeout, callTimeout or startTimeout"
)

/** A server's pool options as written (unset keys fall back to the settings). */
export type PoolOptions = typeof PoolBlock.Type

/** One entry of `mcpServers`, before variables are expanded. */
export const ServerEntry = expecting(
  Schema.Struct({
    command: exact(Text),
    args: exact(TextList),
    env: exact(TextMap),
    cwd: exact(Text),
    url: exact(Text),
    headers: exact(TextMap),
    auth: exact(AuthEntry.AuthBlock),
    type: exact(Codec.oneOf(ServerTypes).fromJson),
    protocol: exact(Settings.lookup("upstream.protocol").fromJson),
    pool: exact(PoolBlock),
    disabled: exact(expecting(Schema.Boolean, "true or false"))
  }),
  "an object with command (a stdio server) or url (an HTTP server)"
)

/** One `mcpServers` entry as decoded. */
export type ServerEntry = typeof ServerEntry.Type

/** A whole config file. */
export const ConfigFile = expecting(
  Schema.Struct({
    mcpServers: exact(expecting(Schema.Record({ key: Schema.String, value: ServerEntry }), "an object of servers")),
    settings: exact(
      expecting(Schema.Record({ key: Schema.String, value: Schema.Unknown }), "an object keyed by setting path")
    )
  }),
  "a JSON object with mcpServers"
)

/** A config file as decoded. */
export type ConfigFile = typeof ConfigFile.Type

// ---------------------------------------------------------------------------------------------
// Namespaces
// ---------------------------------------------------------------------------------------------

/**
 * The namespace of a server name: characters outside [A-Za-z0-9_] become `_`. Runs of `_` are
 * collapsed and trailing ones dropped, because tools are exposed as `<namespace>__<tool>` and
 * split at the first `__`; a namespace containing `__` or ending in `_` would split wrongly.
 * An empty result means the name has nothing usable.
 */
export const namespaceOf = (name: string): string =>
  name.replace(/[^A-Za-z0-9_]/g, "_").replace(/_+/g, "_").replace(/_+$/, "")

// ---------------------------------------------------------------------------------------------
// Discovery
// ---------------------------------------------------------------------------------------------

/** File names looked for in each directory from the working directory up, nearer name first. */
export const ProjectFileNames = [".mcpx.json", ".mcp.json"] as const

/** Where configuration is looked for. */
export interface SearchPath {
  /** True when `--config` or `MCPX_CONFIG` named the one file to read. */
  readonly explicit: boolean
  /** What named the file when explicit (`--config` or `MCPX_CONFIG`). */
  readonly namedBy: Option.Option<string>
  /** Candidate files, nearest first. */
  readonly candidates: ReadonlyArray<string>
}

const nonEmpty = (s: string | undefined): s is string => s !== undefined && s !== ""

/**
 * The candidate files: the explicit one alone, or every `.mcpx.json`/`.mcp.json` from the working
 * directory up to the root, then the user's `$XDG_CONFIG_HOME/mcpx-fx/config.json` (XDG ignores a
 * relative value) or `~/.config/mcpx-fx/config.json`.
 */
export const searchPath = Effect.fn("Config.searchPath")(function*(input: ConfigInput) {
  const path = yield* Path.Path
  const explicitBy = nonEmpty(input.configFlag)
    ? Option.some({ by: "--config", file: input.configFlag })
    : nonEmpty(input.env.MCPX_CONFIG)
    ? Option.some({ by: "MCPX_CONFIG", file: input.env.MCPX_CONFIG })
    : Option.none()
  if (Option.isSome(explicitBy)) {
    return {
      explicit: true,
      namedBy: Option.some(explicitBy.value.by),
      candidates: [path.resolve(input.cwd, explicitBy.value.file)]
    } satisfies SearchPath
  }
  const candidates: Array<string> = []
  let dir = path.resolve(input.cwd)
  for (;;) {
    for (const name of ProjectFileNames) candidates.push(path.join(dir, name))
    const parent = path.dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  const xdg = input.env.XDG_CONFIG_HOME
  const userDir = nonEmpty(xdg) && path.isAbsolute(xdg) ? xdg : path.join(input.home, ".config")
  candidates.push(path.join(userDir, "mcpx-fx", "config.json"))
  return {
    explicit: false,
    namedBy: Option.none(),
    candidates: candidates.filter((c, i) => candidates.indexOf(c) === i)
  } satisfies SearchPath
})

// ---------------------------------------------------------------------------------------------
// Reading one file
// ---------------------------------------------------------------------------------------------

/** One config file as read and checked, before merging. */
export interface ParsedFile {
  readonly file: string
  readonly servers: ReadonlyArray<readonly [name: string, entry: ServerEntry]>
  readonly settings: Readonly<Record<string, unknown>>
}

/** Reads, parses and checks one file; every problem names the file and the key path. */
export const readFile = Effect.fn("Config.readFile")(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
  const text = yield* fs.readFileString(file).pipe(
    Effect.mapError((e) => new ConfigError({ file, path: "", detail: `cannot be read: ${e.message}` }))
  )
  const json = yield* Either.mapLeft(Jsonc.parse(text), (e) =>
    new ConfigError({
      file,
      path: "",
      detail: `expected JSON (comments and trailing commas allowed); ${e.message} at line ${e.line}, column ${e.column}`
    }))
  const decoded = yield* Either.mapLeft(Schema.decodeUnknownEither(ConfigFile)(json), (e) => {
    const issue = Codec.firstIssue(e)
    return new ConfigError({ file, path: formatPath(issue.path), detail: issue.message })
  })
  const servers = Object.entries(decoded.mcpServers ?? {})
  for (const [name] of servers) {
    if (name.trim() === "") {
      return yield* new ConfigError({ file, path: formatPath(["mcpServers", name]), detail: "expected a non-empty server name" })
    }
  }
  const settings = decoded.settings ?? {}
  for (const [key, value] of Object.entries(settings)) {
    const refused = Settings.checkFileValue(key, value)
    if (Option.isSome(refused)) return yield* new ConfigError({ file, path: Settings.fileKeyOf(key), detail: refused.value })
  }
  return { file, servers, settings } satisfies ParsedFile
})

// ---------------------------------------------------------------------------------------------
// Building server definitions
// ---------------------------------------------------------------------------------------------

/** One configured upstream server, ready for the pool. */
export interface ConfiguredServer {
  readonly name: string
  /** `namespaceOf(name)`, unique across the configuration. */
  readonly namespace: string
  readonly definition: ServerDefinition
  /** The server's own pool options; absent keys fall back to the `pool.*` settings. */
  readonly pool: PoolOptions
  /** The file that defined it (the nearest one, when several do). */
  readonly file: string
}

const expandAt = (
  file: string,
  server: string,
  path: ReadonlyArray<PropertyKey>,
  value: string,
  env: Environment["env"]
): Either.Either<string, ConfigError> =>
  Either.mapLeft(Expand.expand(value, env), (issue) =>
    new ConfigError({
      file,
      path: formatPath(path),
      detail: issue._tag === "Unset"
        ? `environment variable ${issue.name} is not set (server ${JSON.stringify(server)}); ` +
          `expected it set, or \${${issue.name}:-default}`
        : `expected \${NAME} or \${NAME:-default} (write $$ for a literal $), got ${JSON.stringify(issue.text)}`
    }))

const expandMap = (
  file: string,
  server: string,
  path: ReadonlyArray<PropertyKey>,
  map: Readonly<Record<string, string>>,
  env: Environment["env"]
): Either.Either<Record<string, string>, ConfigError> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(map)) {
    const expanded = expandAt(file, server, [...path, k], v, env)
    if (Either.isLeft(expanded)) return Either.left(expanded.left)
    out[k] = expanded.right
  }
  return Either.right(out)
}

const isHttpUrl = (s: string): boolean => {
  try {
    const u = new URL(s)
    return u.protocol === "http:" || u.protocol === "https:"
  } catch {
    return false
  }
}

/** Turns one merged entry into a server definition: shape checks, `${VAR}` expansion, `cwd`. */
export const buildServer = Effect.fn("Config.buildServer")(function*(
  file: string,
  name: string,
  entry: ServerEntry,
  environment: Environment
) {
  const path = yield* Path.Path
  const at = (...keys: ReadonlyArray<PropertyKey>) => formatPath(["mcpServers", name, ...keys])
  const fail = (keys: ReadonlyArray<PropertyKey>, detail: string) => new ConfigError({ file, path: at(...keys), detail })
  const env = environment.env
  const common = { name, ...(entry.protocol !== undefined ? { protocol: entry.protocol } : {}) }

  if (entry.command !== undefined && entry.url !== undefined) {
    return yield* fail([], "expected either command (a stdio server) or url (an HTTP server), not both")
  }
  if (entry.command !== undefined) {
    if (entry.type !== undefined && entry.type !== "stdio") {
      return yield* fail(["type"], `expected "stdio" for a server with a command, got ${JSON.stringify(entry.type)}`)
    }
    if (entry.headers !== undefined) return yield* fail(["headers"], "expected no headers on a stdio server (headers go with url)")
    if (entry.auth !== undefined) return yield* fail(["auth"], "expected no auth on a stdio server (auth goes with url)")
    const command = yield* expandAt(file, name, ["mcpServers", name, "command"], entry.command, env)
    if (command.trim() === "") return yield* fail(["command"], "expected a non-empty command")
    const args: Array<string> = []
    for (const [i, arg] of (entry.args ?? []).entries()) {
      args.push(yield* expandAt(file, name, ["mcpServers", name, "args", i], arg, env))
    }
    const childEnv = yield* expandMap(file, name, ["mcpServers", name, "env"], entry.env ?? {}, env)
    let cwd: string | undefined
    if (entry.cwd !== undefined) {
      const raw = yield* expandAt(file, name, ["mcpServers", name, "cwd"], entry.cwd, env)
      const home = raw === "~" || raw.startsWith("~/") ? path.join(environment.home, raw.slice(1)) : raw
      // Relative to the file, not to wherever mcpx-fx happens to be started from.
      cwd = path.resolve(path.dirname(file), home)
    }
    return new StdioDefinition({ transport: "stdio", ...common, command, args, env: childEnv, ...(cwd !== undefined ? { cwd } : {}) })
  }
  if (entry.url !== undefined) {
    if (entry.type === "stdio") return yield* fail(["type"], `expected "http" for a server with a url, got "stdio"`)
    for (const key of ["args", "env", "cwd"] as const) {
      if (entry[key] !== undefined) return yield* fail([key], `expected no ${key} on an HTTP server (${key} go with command)`)
    }
    const url = yield* expandAt(file, name, ["mcpServers", name, "url"], entry.url, env)
    // The raw value is quoted, not the expanded one, which may carry a token.
    if (!isHttpUrl(url)) return yield* fail(["url"], `expected an http:// or https:// URL, got ${JSON.stringify(entry.url)}`)
    const headers = yield* expandMap(file, name, ["mcpServers", name, "headers"], entry.headers ?? {}, env)
    if (entry.auth === undefined) return new HttpDefinition({ transport: "http", ...common, url, headers })
    if (AuthEntry.hasAuthorizationHeader(entry.headers)) {
      return yield* fail(["auth"], "expected either auth or an Authorization header, not both")
    }
    const auth = yield* AuthEntry.buildAuth(entry.auth, (keys, value) => expandAt(file, name, ["mcpServers", name, "auth", ...keys], value, env))
    return new HttpDefinition({ transport: "http", ...common, url, headers, auth })
  }
  return yield* fail([], "expected command (a stdio server) or url (an HTTP server)")
})

// ---------------------------------------------------------------------------------------------
// Loading and merging
// ---------------------------------------------------------------------------------------------

/** The loaded configuration. */
export interface LoadedConfig {
  /** The files read, nearest first. */
  readonly files: ReadonlyArray<string>
  /** Whether `--config`/`MCPX_CONFIG` named the only file. */
  readonly explicit: boolean
  /** Effective servers: nearest definition per name, disabled ones left out. */
  readonly servers: ReadonlyArray<ConfiguredServer>
  /** Servers a nearer file disabled, and the file that did. */
  readonly disabled: ReadonlyArray<{ readonly name: string; readonly file: string }>
  /** Each file's `settings` object, nearest first; the input of the Settings file layer. */
  readonly settingsFiles: ReadonlyArray<Settings.SettingsFile>
}

/** Merges parsed files (nearest first): the nearest entry of each server name wins whole. */
export const merge = Effect.fn("Config.merge")(function*(
  parsed: ReadonlyArray<ParsedFile>,
  environment: Environment,
  explicit: boolean
) {
  const chosen = new Map<string, { readonly file: string; readonly entry: ServerEntry }>()
  for (const p of parsed) {
    for (const [name, entry] of p.servers) if (!chosen.has(name)) chosen.set(name, { file: p.file, entry })
  }
  const servers: Array<ConfiguredServer> = []
  const disabled: Array<{ readonly name: string; readonly file: string }> = []
  const namespaces = new Map<string, ConfiguredServer>()
  for (const [name, { entry, file }] of chosen) {
    if (entry.disabled === true) {
      disabled.push({ name, file })
      continue
    }
    const definition = yield* buildServer(file, name, entry, environment)
    const namespace = namespaceOf(name)
    const where = formatPath(["mcpServers", name])
    if (namespace === "") {
      return yield* new ConfigError({
        file,
        path: where,
        detail: "expected a server name with a letter or digit (the namespace keeps only [A-Za-z0-9_])"
      })
    }
    const taken = namespaces.get(namespace)
    if (taken !== undefined) {
      return yield* new ConfigError({
        file,
        path: where,
        detail: `expected a name with its own namespace; ${JSON.stringify(namespace)} is also the namespace of ` +
          `server ${JSON.stringify(taken.name)} (${taken.file}); rename one of them`
      })
    }
    const server: ConfiguredServer = { name, namespace, definition, pool: entry.pool ?? {}, file }
    namespaces.set(namespace, server)
    servers.push(server)
  }
  return {
    files: parsed.map((p) => p.file),
    explicit,
    servers,
    disabled,
    settingsFiles: parsed.map((p) => ({ file: p.file, values: p.settings }))
  } satisfies LoadedConfig
})

/**
 * Finds, reads and merges the configuration. An explicit file that does not exist is an error;
 * finding no file at all is not (there are simply no servers).
 */
export const load = Effect.fn("Config.load")(function*(input: ConfigInput) {
  const fs = yield* FileSystem.FileSystem
  const search = yield* searchPath(input)
  const found: Array<string> = []
  for (const file of search.candidates) {
    const exists = yield* fs.exists(file).pipe(
      Effect.mapError((e) => new ConfigError({ file, path: "", detail: `cannot be read: ${e.message}` }))
    )
    if (exists) found.push(file)
    else if (search.explicit) {
      const by = Option.getOrElse(search.namedBy, () => "--config")
      return yield* new ConfigError({ file, path: "", detail: `expected a config file (named by ${by}), but it does not exist` })
    }
  }
  const parsed: Array<ParsedFile> = []
  for (const file of found) parsed.push(yield* readFile(file))
  const loaded = yield* merge(parsed, input, search.explicit)
  yield* Effect.logDebug("config loaded").pipe(
    Effect.annotateLogs({ files: loaded.files.join(", "), servers: loaded.servers.length })
  )
  return loaded
})

/** The loaded configuration, as a service. */
export class Config extends Context.Tag("@mcpx-fx/gateway/Config")<Config, LoadedConfig>() {
  /** Discovers and loads the configuration for these inputs. */
  static readonly layer = (input: ConfigInput): Layer.Layer<Config, ConfigError, FileSystem.FileSystem | Path.Path> =>
    Layer.effect(Config, load(input))

  /** A configuration given whole, for tests of services that read it. */
  static readonly layerStatic = (config: LoadedConfig): Layer.Layer<Config> => Layer.succeed(Config, config)
}

/** Settings fed by the loaded config's `settings` objects plus the given env and flags. */
export const layerSettings = (
  input: Omit<Settings.SettingsInput, "files">
): Layer.Layer<Settings.Settings, Settings.SettingsError, Config> =>
  Settings.Settings.layerEffect(Effect.map(Config, (config) => ({ ...input, files: config.settingsFiles })))
