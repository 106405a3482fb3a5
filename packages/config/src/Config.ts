/**
 * The loaded configuration: every config file found (ConfigFile.ts reads each), merged nearest
 * first, each server entry built into a definition the pool can start. `Config` is the service.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { HttpDefinition, type ServerDefinition, StdioDefinition } from "@mcpx-fx/upstream/ServerDefinition"
import {
  ConfigError,
  type ConfigInput,
  ConfigWarning,
  type Environment,
  formatPath,
  namespaceOf,
  type ParsedFile,
  type PoolOptions,
  readFile,
  searchPath,
  type ServerEntry,
  type ServersKey
} from "./ConfigFile.js"
import * as AuthEntry from "./internal/AuthEntry.js"
import * as Expand from "./internal/Expand.js"
import * as ToolPattern from "./internal/ToolPattern.js"
import * as Settings from "./Settings.js"
import * as SettingsRegistry from "./SettingsRegistry.js"
import * as SettingsModel from "./SettingsModel.js"

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
  /** The `tools` (allow) and `excludeTools` (deny) patterns as written, and the filter they compile to. */
  readonly tools?: ReadonlyArray<string>
  readonly excludeTools?: ReadonlyArray<string>
  /** Absent: every tool passes (a configuration built in code). */
  readonly filter?: ToolPattern.ToolFilter
  /** The server's own `expose` key; absent: `tools.expose`. */
  readonly expose?: SettingsRegistry.ExposeMode
}

const expandAt = (
  file: string,
  server: string,
  path: ReadonlyArray<PropertyKey>,
  value: string,
  env: Environment["env"],
  vars: Readonly<Record<string, string>>
): Either.Either<string, ConfigError> =>
  Either.mapLeft(Expand.expand(value, env, vars), (issue) =>
    new ConfigError({
      file,
      path: formatPath(path),
      detail: issue._tag === "Unset"
        ? `environment variable ${issue.name} is not set (server ${JSON.stringify(server)}); ` +
          `expected it set, or \${${issue.name}:-default}`
        : issue._tag === "Input"
        ? `${issue.text} is a VS Code input prompt, which mcpx-fx cannot show; set an environment variable and write \${env:NAME}`
        : `expected \${NAME} or \${NAME:-default} (write $$ for a literal $), got ${JSON.stringify(issue.text)}`
    }))

const expandMap = (
  file: string,
  server: string,
  path: ReadonlyArray<PropertyKey>,
  map: Readonly<Record<string, string>>,
  env: Environment["env"],
  vars: Readonly<Record<string, string>>
): Either.Either<Record<string, string>, ConfigError> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(map)) {
    const expanded = expandAt(file, server, [...path, k], v, env, vars)
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

/** VS Code's named values: `${workspaceFolder}` is the folder that holds `.vscode/`, else the file's own. */
const vsCodeVars = (path: Path.Path, file: string, environment: Environment): Record<string, string> => {
  const dir = path.dirname(file)
  return { workspaceFolder: path.basename(dir) === ".vscode" ? path.dirname(dir) : dir, userHome: environment.home }
}

/** Turns one merged entry into a server definition: shape checks, `${VAR}` expansion, `cwd`. */
export const buildServer = Effect.fn("Config.buildServer")(function*(
  file: string,
  name: string,
  entry: ServerEntry,
  environment: Environment,
  key: ServersKey = "mcpServers"
) {
  const path = yield* Path.Path
  const keyPath = (...keys: ReadonlyArray<PropertyKey>) => [key, name, ...keys]
  const fail = (keys: ReadonlyArray<PropertyKey>, detail: string) => new ConfigError({ file, path: formatPath(keyPath(...keys)), detail })
  const env = environment.env
  const vars = vsCodeVars(path, file, environment)
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
    const command = yield* expandAt(file, name, keyPath("command"), entry.command, env, vars)
    if (command.trim() === "") return yield* fail(["command"], "expected a non-empty command")
    const args: Array<string> = []
    for (const [i, arg] of (entry.args ?? []).entries()) {
      args.push(yield* expandAt(file, name, keyPath("args", i), arg, env, vars))
    }
    const childEnv = yield* expandMap(file, name, keyPath("env"), entry.env ?? {}, env, vars)
    let cwd: string | undefined
    if (entry.cwd !== undefined) {
      const raw = yield* expandAt(file, name, keyPath("cwd"), entry.cwd, env, vars)
      const home = raw === "~" || raw.startsWith("~/") ? path.join(environment.home, raw.slice(1)) : raw
      // Relative to the file, not to wherever mcpx-fx happens to be started from.
      cwd = path.resolve(path.dirname(file), home)
    }
    return new StdioDefinition({ transport: "stdio", ...common, command, args, env: childEnv, ...(cwd !== undefined ? { cwd } : {}) })
  }
  if (entry.url !== undefined) {
    if (entry.type === "stdio") return yield* fail(["type"], `expected "http" for a server with a url, got "stdio"`)
    for (const k of ["args", "env", "cwd"] as const) {
      if (entry[k] !== undefined) return yield* fail([k], `expected no ${k} on an HTTP server (${k} go with command)`)
    }
    const url = yield* expandAt(file, name, keyPath("url"), entry.url, env, vars)
    // The raw value is quoted, not the expanded one, which may carry a token.
    if (!isHttpUrl(url)) return yield* fail(["url"], `expected an http:// or https:// URL, got ${JSON.stringify(entry.url)}`)
    const headers = yield* expandMap(file, name, keyPath("headers"), entry.headers ?? {}, env, vars)
    if (entry.auth === undefined) return new HttpDefinition({ transport: "http", ...common, url, headers })
    if (AuthEntry.hasAuthorizationHeader(entry.headers)) {
      return yield* fail(["auth"], "expected either auth or an Authorization header, not both")
    }
    const auth = yield* AuthEntry.buildAuth(entry.auth, (keys, value) => expandAt(file, name, keyPath("auth", ...keys), value, env, vars))
    return new HttpDefinition({ transport: "http", ...common, url, headers, auth })
  }
  return yield* fail([], "expected command (a stdio server) or url (an HTTP server)")
})

/** Compiles a server's `tools` and `excludeTools`; a bad pattern names the file, server and pattern. */
export const buildFilter = (
  file: string,
  name: string,
  entry: ServerEntry,
  key: ServersKey = "mcpServers"
): Either.Either<ToolPattern.ToolFilter, ConfigError> => {
  const compiled = (list: "tools" | "excludeTools"): Either.Either<ReadonlyArray<ToolPattern.Compiled> | undefined, ConfigError> => {
    const patterns = entry[list]
    if (patterns === undefined) return Either.right(undefined)
    const out: Array<ToolPattern.Compiled> = []
    for (const [i, pattern] of patterns.entries()) {
      const m = ToolPattern.compile(pattern)
      if (Either.isLeft(m)) {
        return Either.left(
          new ConfigError({
            file,
            path: formatPath([key, name, list, i]),
            detail: `expected a tool name, a glob or a /regex/ (server ${JSON.stringify(name)}), got ${JSON.stringify(pattern)}: ${m.left}`
          })
        )
      }
      out.push({ pattern, matches: m.right })
    }
    return Either.right(out)
  }
  return Either.flatMap(compiled("tools"), (allow) => Either.map(compiled("excludeTools"), (deny) => ToolPattern.filterOf(allow, deny ?? [])))
}

/**
 * Whether a stdio server runs mcpx-fx itself (`mcpx-fx serve`, `npx mcpx-fx`): a host's config that
 * lists mcpx-fx is often on mcpx-fx's own search path too, and starting it from there would have
 * every mcpx-fx start another one, without end.
 */
export const runsMcpxFx = (definition: ServerDefinition): boolean => {
  if (definition.transport !== "stdio") return false
  const base = (s: string) => s.split(/[\\/]/).pop() ?? s
  const isUs = (s: string) => /^mcpx-fx(@[^\s]*)?$/.test(base(s)) || /(^|[\\/])mcpx-fx\.js$/.test(s)
  if (isUs(definition.command)) return true
  const launcher = base(definition.command)
  if (launcher === "npx" || launcher === "bunx" || launcher === "pnpx" || launcher === "node") {
    const first = definition.args.find((a) => !a.startsWith("-"))
    return first !== undefined && isUs(first)
  }
  return false
}

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
  /** Unknown keys and skipped servers, for the user to see; none stops the configuration. */
  readonly warnings?: ReadonlyArray<ConfigWarning>
  /** Every file that was looked for, nearest first (to say where, when none was found). */
  readonly searched?: ReadonlyArray<string>
}

/** Merges parsed files (nearest first): the nearest entry of each server name wins whole. */
export const merge = Effect.fn("Config.merge")(function*(
  parsed: ReadonlyArray<ParsedFile>,
  environment: Environment,
  explicit: boolean,
  searched: ReadonlyArray<string> = []
) {
  const chosen = new Map<string, { readonly file: string; readonly entry: ServerEntry; readonly key: ServersKey }>()
  for (const p of parsed) {
    for (const { entry, key, name } of p.servers) if (!chosen.has(name)) chosen.set(name, { file: p.file, entry, key })
  }
  const servers: Array<ConfiguredServer> = []
  const disabled: Array<{ readonly name: string; readonly file: string }> = []
  const warnings: Array<ConfigWarning> = parsed.flatMap((p) => p.warnings)
  const namespaces = new Map<string, ConfiguredServer>()
  for (const [name, { entry, file, key }] of chosen) {
    if (entry.disabled === true) {
      disabled.push({ name, file })
      continue
    }
    const where = formatPath([key, name])
    // A typo'd key (`comand`) is the likeliest cause of an entry that does not build: say so in the error.
    const typos = warnings.filter((w) => w.file === file && w.path.startsWith(`${where}.`))
    const definition = yield* buildServer(file, name, entry, environment, key).pipe(
      Effect.mapError((e) =>
        typos.length === 0
          ? e
          : new ConfigError({ file: e.file, path: e.path, detail: `${e.detail} (${typos.map((w) => `${w.path}: ${w.detail}`).join("; ")})` })
      )
    )
    if (runsMcpxFx(definition)) {
      warnings.push(new ConfigWarning({ file, path: where, detail: "skipped: it runs mcpx-fx itself, which would start itself again" }))
      continue
    }
    const filter = yield* buildFilter(file, name, entry, key)
    const namespace = namespaceOf(name)
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
    const server: ConfiguredServer = {
      name,
      namespace,
      definition,
      pool: entry.pool ?? {},
      file,
      filter,
      ...(entry.tools !== undefined ? { tools: entry.tools } : {}),
      ...(entry.excludeTools !== undefined ? { excludeTools: entry.excludeTools } : {}),
      ...(entry.expose !== undefined ? { expose: entry.expose } : {})
    }
    namespaces.set(namespace, server)
    servers.push(server)
  }
  return {
    files: parsed.map((p) => p.file),
    explicit,
    servers,
    disabled,
    settingsFiles: parsed.map((p) => ({ file: p.file, values: p.settings })),
    warnings,
    searched
  } satisfies LoadedConfig
})

/**
 * Finds, reads and merges the configuration. An explicit file that does not exist is an error;
 * finding no file at all is not (there are simply no servers; `searched` says where it looked).
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
  const loaded = yield* merge(parsed, input, search.explicit, search.candidates)
  yield* Effect.logDebug("config loaded").pipe(
    Effect.annotateLogs({ files: loaded.files.join(", "), servers: loaded.servers.length })
  )
  return loaded
})

/**
 * Where a configuration was looked for, when none was found: the project file names in the
 * working directory and every directory above it, then the user's file.
 */
export const describeSearch = (searched: ReadonlyArray<string>): string => {
  const user = searched[searched.length - 1]
  const first = searched[0]
  if (first === undefined || user === undefined) return "nowhere"
  if (searched.length === 1) return first
  const cwd = first.slice(0, first.length - ProjectFileNamesFirst.length - 1)
  return `${ProjectFileNamesList} in ${cwd} and every directory above it, then ${user}`
}

const ProjectFileNamesFirst = ".mcpx.json"
const ProjectFileNamesList = ".mcpx.json, .mcp.json and .vscode/mcp.json"

/** The loaded configuration, as a service. */
export class Config extends Context.Tag("@mcpx-fx/config/Config")<Config, LoadedConfig>() {
  /** Discovers and loads the configuration for these inputs. */
  static readonly layer = (input: ConfigInput): Layer.Layer<Config, ConfigError, FileSystem.FileSystem | Path.Path> => Layer.effect(Config, load(input))

  /** A configuration given whole, for tests of services that read it. */
  static readonly layerStatic = (config: LoadedConfig): Layer.Layer<Config> => Layer.succeed(Config, config)
}

/** Settings fed by the loaded config's `settings` objects plus the given env and flags. */
export const layerSettings = (
  input: Omit<Settings.SettingsInput, "files">
): Layer.Layer<Settings.Settings, SettingsModel.SettingsError, Config> =>
  Settings.Settings.layerEffect(Effect.map(Config, (config) => ({ ...input, files: config.settingsFiles })))
