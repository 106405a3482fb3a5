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
 * For the same reason an unknown top-level key or server key is not an error but a warning naming
 * it (a typo such as `comand` would otherwise be silently ignored); the few keys other clients put
 * in their entries (`autoApprove`, `timeout`, …) pass without one. A server's `pool` block, which
 * is ours alone, refuses unknown keys.
 *
 * VS Code's shape is read too: `"servers": {...}` with `"type": "stdio" | "http"`, and its
 * `${env:NAME}`, `${workspaceFolder}` and `${userHome}` variables, so a `.vscode/mcp.json` works.
 *
 * Comments and trailing commas are allowed. `${VAR}`, `${VAR:-default}` and `$$` expand in
 * `command`, `args`, `env`, `cwd`, `url`, `headers` and `auth`, as in Claude Code; a relative `cwd`
 * is taken from the file's directory. An HTTP server's `auth` block is described in
 * internal/AuthEntry.ts.
 *
 * This file holds the format, where files are looked for, and reading one file; building servers
 * and merging files is Config.ts.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as AuthEntry from "./internal/AuthEntry.js"
import * as Codec from "./internal/Codec.js"
import * as Jsonc from "./internal/Jsonc.js"
import * as Suggest from "./Suggest.js"
import * as SettingsRegistry from "./SettingsRegistry.js"

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

/** Something in a file that is read but probably not what was meant (an unknown key). */
export class ConfigWarning extends Schema.TaggedClass<ConfigWarning>()("ConfigWarning", {
  file: Schema.String,
  path: Schema.String,
  detail: Schema.String
}) {
  get message(): string {
    return `${this.file}: ${this.path}: ${this.detail}`
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

const { exact, expecting, Text } = Codec
const TextList = expecting(Schema.Array(Text), "a list of strings")
const TextMap = expecting(Schema.Record({ key: Schema.String, value: Text }), "an object of strings")

/** The connection kinds other clients write in `type`; mcpx-fx only checks they fit the entry. */
const ServerTypes = ["stdio", "http", "streamable-http", "sse"] as const

/** A server's own `pool` block; every key falls back to the `pool.*` setting of the same name. */
export const PoolBlock = expecting(
  Schema.Struct({
    max: exact(SettingsRegistry.lookup("pool.max").fromJson),
    scope: exact(SettingsRegistry.lookup("pool.scope").fromJson),
    idleTimeout: exact(SettingsRegistry.lookup("pool.idleTimeout").fromJson),
    callTimeout: exact(SettingsRegistry.lookup("pool.callTimeout").fromJson),
    startTimeout: exact(SettingsRegistry.lookup("pool.startTimeout").fromJson)
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
    protocol: exact(SettingsRegistry.lookup("upstream.protocol").fromJson),
    pool: exact(PoolBlock),
    disabled: exact(expecting(Schema.Boolean, "true or false")),
    tools: exact(TextList),
    excludeTools: exact(TextList),
    expose: exact(SettingsRegistry.lookup("tools.expose").fromJson)
  }),
  "an object with command (a stdio server) or url (an HTTP server)"
)

/** One `mcpServers` entry as decoded. */
export type ServerEntry = typeof ServerEntry.Type

const ServerMap = expecting(Schema.Record({ key: Schema.String, value: ServerEntry }), "an object of servers")

/** The keys of a server entry mcpx-fx reads. */
export const ServerKeys: ReadonlyArray<string> = [
  "command",
  "args",
  "env",
  "cwd",
  "url",
  "headers",
  "auth",
  "type",
  "protocol",
  "pool",
  "disabled",
  "tools",
  "excludeTools",
  "expose"
]

/**
 * Keys other clients keep in the entries of a shared file, which mcpx-fx ignores without a
 * warning: Cline's and Roo's approvals and timeout, VS Code's `dev`, a `description`.
 */
export const ForeignServerKeys: ReadonlyArray<string> = ["autoApprove", "alwaysAllow", "timeout", "dev", "description"]

/** The top-level keys mcpx-fx reads, and VS Code's `inputs` and a `$schema`, which it ignores. */
export const TopLevelKeys: ReadonlyArray<string> = ["mcpServers", "servers", "settings", "inputs", "$schema"]

/** A whole config file. */
export const ConfigFile = expecting(
  Schema.Struct({
    mcpServers: exact(ServerMap),
    /** VS Code's name for the same object (`.vscode/mcp.json`). */
    servers: exact(ServerMap),
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
export const namespaceOf = (name: string): string => name.replace(/[^A-Za-z0-9_]/g, "_").replace(/_+/g, "_").replace(/_+$/, "")

// ---------------------------------------------------------------------------------------------
// Discovery
// ---------------------------------------------------------------------------------------------

/**
 * Files looked for in each directory from the working directory up, nearer name first: mcpx-fx's
 * own, Claude Code's and VS Code's (`.vscode/mcp.json`, the workspace's servers).
 */
export const ProjectFileNames = [".mcpx.json", ".mcp.json", ".vscode/mcp.json"] as const

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
 * The candidate files: the explicit one alone, or every `.mcpx.json`, `.mcp.json` and
 * `.vscode/mcp.json` from the working directory up to the root, then the user's `$XDG_CONFIG_HOME/mcpx-fx/config.json` (XDG ignores a
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
    for (const name of ProjectFileNames) candidates.push(path.join(dir, ...name.split("/")))
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

/** The key a file keeps its servers under: `mcpServers`, or VS Code's `servers`. */
export type ServersKey = "mcpServers" | "servers"

/** One server entry of a file, and the key it sits under. */
export interface FileServer {
  readonly name: string
  readonly entry: ServerEntry
  readonly key: ServersKey
}

/** One config file as read and checked, before merging. */
export interface ParsedFile {
  readonly file: string
  readonly servers: ReadonlyArray<FileServer>
  readonly settings: Readonly<Record<string, unknown>>
  /** Keys read but not known, each named with its path. */
  readonly warnings: ReadonlyArray<ConfigWarning>
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

const unknownKey = (file: string, path: ReadonlyArray<PropertyKey>, key: string, known: ReadonlyArray<string>) => {
  const near = Suggest.closest(key, known, 1)
  const hint = near.length > 0 ? `; did you mean ${near[0]}?` : ""
  return new ConfigWarning({ file, path: formatPath([...path, key]), detail: `unknown key, ignored${hint}` })
}

/** The keys of a file that mcpx-fx does not know, top level and per server. */
export const unknownKeys = (file: string, json: unknown): ReadonlyArray<ConfigWarning> => {
  if (!isRecord(json)) return []
  const out: Array<ConfigWarning> = []
  for (const key of Object.keys(json)) if (!TopLevelKeys.includes(key)) out.push(unknownKey(file, [], key, TopLevelKeys))
  const serverKnown = [...ServerKeys, ...ForeignServerKeys]
  for (const key of ["mcpServers", "servers"] as const) {
    const servers = json[key]
    if (!isRecord(servers)) continue
    for (const [name, entry] of Object.entries(servers)) {
      if (!isRecord(entry)) continue
      for (const k of Object.keys(entry)) if (!serverKnown.includes(k)) out.push(unknownKey(file, [key, name], k, ServerKeys))
    }
  }
  return out
}

/** Reads, parses and checks one file; every problem names the file and the key path. */
export const readFile = Effect.fn("Config.readFile")(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
  const text = yield* fs.readFileString(file).pipe(
    Effect.mapError((e) => new ConfigError({ file, path: "", detail: `cannot be read: ${e.message}` }))
  )
  return yield* parseText(file, text)
})

/** Parses and checks one file's text. */
export const parseText = (file: string, text: string): Effect.Effect<ParsedFile, ConfigError> =>
  Effect.gen(function*() {
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
    const servers: Array<FileServer> = []
    for (const key of ["mcpServers", "servers"] as const) {
      for (const [name, entry] of Object.entries(decoded[key] ?? {})) {
        if (name.trim() === "") {
          return yield* new ConfigError({ file, path: formatPath([key, name]), detail: "expected a non-empty server name" })
        }
        if (servers.some((s) => s.name === name)) {
          return yield* new ConfigError({
            file,
            path: formatPath([key, name]),
            detail: `expected each server once; ${JSON.stringify(name)} is also under mcpServers`
          })
        }
        servers.push({ name, entry, key })
      }
    }
    const settings = decoded.settings ?? {}
    for (const [key, value] of Object.entries(settings)) {
      const refused = SettingsRegistry.checkFileValue(key, value)
      if (Option.isSome(refused)) return yield* new ConfigError({ file, path: SettingsRegistry.fileKeyOf(key), detail: refused.value })
    }
    return { file, servers, settings, warnings: unknownKeys(file, json) } satisfies ParsedFile
  })
