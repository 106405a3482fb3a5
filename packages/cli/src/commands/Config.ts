/**
 * `mcpx-fx config`: what the gateway would run with. By default the merged, effective
 * configuration; `--path` the files that were found; `--sources` where each setting and each
 * server came from.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Config from "@mcpx-fx/config/Config"
import * as ConfigFile from "@mcpx-fx/config/ConfigFile"
import * as Redact from "@mcpx-fx/gateway/Redact"
import * as Settings from "@mcpx-fx/config/Settings"
import * as SettingsRegistry from "@mcpx-fx/config/SettingsRegistry"
import * as StateDir from "@mcpx-fx/config/StateDir"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"
import * as Layers from "../Layers.js"
import * as Output from "../Output.js"
import { UsageError } from "../UsageError.js"
import { globalsFrom } from "./Root.js"

// ---------------------------------------------------------------------------------------------
// --path
// ---------------------------------------------------------------------------------------------

/**
 * The files found, nearest first. It only looks for files and never parses them, so it still
 * answers while one of them is broken, which is when people ask.
 */
const showPath = Effect.fn("config.path")(function*(globals: GlobalOptions.Globals) {
  yield* Layers.checkFlags(globals)
  const fs = yield* FileSystem.FileSystem
  const environment = yield* Layers.ProcessEnvironment
  const search = yield* ConfigFile.searchPath(Layers.configInput(environment, globals))
  const found: Array<string> = []
  for (const file of search.candidates) {
    if (yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false))) found.push(file)
  }
  const namedBy = Option.getOrNull(search.namedBy)
  if (search.explicit && found.length === 0) {
    const file = search.candidates[0] ?? ""
    return yield* new ConfigFile.ConfigError({
      file,
      path: "",
      detail: `expected a config file (named by ${namedBy ?? "--config"}), but it does not exist`
    })
  }
  if (globals.json) return yield* Output.json({ files: found, explicit: search.explicit, namedBy, searched: search.candidates })
  if (found.length > 0) return yield* Output.text(found.join("\n"))
  yield* Output.text(["no config file found; looked in, nearest first:", ...search.candidates.map((c) => `  ${c}`)].join("\n"))
})

// ---------------------------------------------------------------------------------------------
// The effective configuration
// ---------------------------------------------------------------------------------------------

/**
 * Values of `env` and `headers` are where tokens live, and this output ends up in terminals,
 * transcripts and bug reports; their names are enough to check a configuration.
 */
const Redacted = "<redacted>"
const redact = (map: Readonly<Record<string, string>>): Record<string, string> => Object.fromEntries(Object.keys(map).map((k) => [k, Redacted]))

/** An upstream's OAuth settings as shown: the client secret only as being set. */
const authView = (auth: NonNullable<ServerDefinitionAuth>) => ({
  type: auth.type,
  ...(auth.clientId !== undefined ? { clientId: auth.clientId } : {}),
  ...(auth.clientSecret !== undefined ? { clientSecret: Redacted } : {}),
  ...(auth.clientMetadataUrl !== undefined ? { clientMetadataUrl: auth.clientMetadataUrl } : {}),
  ...(auth.scopes !== undefined ? { scopes: auth.scopes } : {}),
  ...(auth.redirectPort !== undefined ? { redirectPort: auth.redirectPort } : {})
})

type ServerDefinitionAuth = Extract<Config.ConfiguredServer["definition"], { readonly transport: "http" }>["auth"]

/** One server with its effective protocol and pool options (its own, else the settings'). */
const serverView = (server: Config.ConfiguredServer, settings: Settings.SettingsService) =>
  Effect.gen(function*() {
    const def = server.definition
    // A `--token=…` in args, a password in a URL: hidden like env and header values.
    const secrets = Redact.forDefinitions([def])
    const protocol = def.protocol ?? (yield* settings.get("upstream.protocol"))
    const duration = (path: "pool.idleTimeout" | "pool.callTimeout" | "pool.startTimeout") => SettingsRegistry.lookup(path).format
    const pool = {
      max: server.pool.max ?? (yield* settings.get("pool.max")),
      scope: server.pool.scope ?? (yield* settings.get("pool.scope")),
      idleTimeout: duration("pool.idleTimeout")(server.pool.idleTimeout ?? (yield* settings.get("pool.idleTimeout"))),
      callTimeout: duration("pool.callTimeout")(server.pool.callTimeout ?? (yield* settings.get("pool.callTimeout"))),
      startTimeout: duration("pool.startTimeout")(server.pool.startTimeout ?? (yield* settings.get("pool.startTimeout")))
    }
    const connection = def.transport === "stdio"
      ? {
        transport: def.transport,
        command: def.command,
        args: secrets.args(def.args),
        env: redact(def.env),
        ...(def.cwd !== undefined ? { cwd: def.cwd } : {})
      }
      : {
        transport: def.transport,
        url: secrets.text(def.url),
        headers: redact(def.headers),
        ...(def.auth !== undefined ? { auth: authView(def.auth) } : {})
      }
    // What a host sees of its tools: the patterns as written, and how they are offered.
    const tools = {
      ...(server.tools !== undefined ? { tools: server.tools } : {}),
      ...(server.excludeTools !== undefined ? { excludeTools: server.excludeTools } : {}),
      expose: server.expose ?? (yield* settings.get("tools.expose"))
    }
    return { namespace: server.namespace, file: server.file, ...connection, protocol, pool, ...tools }
  })

type ServerView = Effect.Effect.Success<ReturnType<typeof serverView>>

const shellWord = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : JSON.stringify(s))

const pairs = (map: Readonly<Record<string, string>>): string => Object.entries(map).map(([k, v]) => `${k}=${v}`).join(" ")

const authText = (auth: ReturnType<typeof authView>): string =>
  [
    auth.type,
    ...(auth.clientId !== undefined ? [`clientId ${auth.clientId}`] : []),
    ...(auth.clientSecret !== undefined ? [`clientSecret ${auth.clientSecret}`] : []),
    ...(auth.clientMetadataUrl !== undefined ? [`clientMetadataUrl ${auth.clientMetadataUrl}`] : []),
    ...(auth.scopes !== undefined ? [`scopes ${auth.scopes.join(" ")}`] : []),
    ...(auth.redirectPort !== undefined ? [`redirectPort ${auth.redirectPort}`] : [])
  ].join(", ")

const serverText = (name: string, v: ServerView): string => {
  const lines: Array<[string, string]> = [["transport", v.transport]]
  if (v.transport === "stdio") {
    lines.push(["command", [v.command, ...v.args].map(shellWord).join(" ")])
    if (Object.keys(v.env).length > 0) lines.push(["env", pairs(v.env)])
    if (v.cwd !== undefined) lines.push(["cwd", v.cwd])
  } else {
    lines.push(["url", v.url])
    if (Object.keys(v.headers).length > 0) lines.push(["headers", pairs(v.headers)])
    if (v.auth !== undefined) lines.push(["auth", authText(v.auth)])
  }
  lines.push(["protocol", v.protocol])
  const p = v.pool
  lines.push([
    "pool",
    `max ${p.max}, scope ${p.scope}, idleTimeout ${p.idleTimeout}, callTimeout ${p.callTimeout}, startTimeout ${p.startTimeout}`
  ])
  if (v.tools !== undefined) lines.push(["tools", v.tools.join(" ")])
  if (v.excludeTools !== undefined) lines.push(["excludeTools", v.excludeTools.join(" ")])
  lines.push(["expose", v.expose])
  return `  ${name}  (namespace ${v.namespace}, from ${v.file})\n${Output.columns(lines, "    ")}`
}

const showEffective = Effect.fn("config.effective")(function*(json: boolean) {
  const config = yield* Config.Config
  const settings = yield* Settings.Settings
  const stateDir = yield* StateDir.StateDir
  const rows = yield* settings.list
  const servers: Array<readonly [string, ServerView]> = []
  for (const server of config.servers) servers.push([server.name, yield* serverView(server, settings)])
  if (json) {
    return yield* Output.json({
      files: config.files,
      servers: Object.fromEntries(servers),
      disabled: config.disabled,
      settings: Object.fromEntries(rows.map((r) => [r.path, r.value])),
      stateDir: { path: stateDir.path, source: stateDir.source }
    })
  }
  const sections = [
    config.files.length > 0
      ? ["config files, nearest first:", ...config.files.map((f) => `  ${f}`)].join("\n")
      : "config files: none found (mcpx-fx config --path shows where it looked)",
    servers.length > 0
      ? ["servers:", ...servers.map(([name, v]) => serverText(name, v))].join("\n")
      : "servers: none",
    ...(config.disabled.length > 0
      ? [["disabled servers:", ...config.disabled.map((d) => `  ${d.name}  (in ${d.file})`)].join("\n")]
      : []),
    `settings:\n${Output.columns(rows.map((r) => [r.path, Output.settingText(r)]), "  ")}`,
    `state directory: ${stateDir.path} (from ${stateDir.source})`
  ]
  yield* Output.text(sections.join("\n\n"))
})

// ---------------------------------------------------------------------------------------------
// --sources
// ---------------------------------------------------------------------------------------------

const showSources = Effect.fn("config.sources")(function*(json: boolean) {
  const config = yield* Config.Config
  const rows = yield* Effect.flatMap(Settings.Settings, (s) => s.list)
  const settings = rows.map((r) => ({ path: r.path, value: r.value, source: r.source }))
  const servers = config.servers.map((s) => ({ name: s.name, namespace: s.namespace, file: s.file }))
  if (json) return yield* Output.json({ settings, servers, disabled: config.disabled })
  const sections = [
    Output.table(["SETTING", "VALUE", "SOURCE"], rows.map((r) => [r.path, Output.settingText(r), r.source])),
    servers.length > 0
      ? Output.table(["SERVER", "NAMESPACE", "FILE"], servers.map((s) => [s.name, s.namespace, s.file]))
      : "no servers configured",
    ...(config.disabled.length > 0
      ? [Output.table(["DISABLED SERVER", "FILE"], config.disabled.map((d) => [d.name, d.file]))]
      : [])
  ]
  yield* Output.text(sections.join("\n\n"))
})

// ---------------------------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------------------------

/** `mcpx-fx config`. */
export const command = Command.make(
  "config",
  {
    globals: GlobalOptions.options,
    path: Options.boolean("path").pipe(
      Options.withDescription("Print the config files found, nearest first, or where none was found.")
    ),
    sources: Options.boolean("sources").pipe(
      Options.withDescription("Print every setting with its source and every server with the file that defines it.")
    )
  },
  ({ globals, path, sources }) =>
    Effect.gen(function*() {
      const options = yield* globalsFrom(globals)
      if (path && sources) return yield* new UsageError({ message: "--path and --sources cannot be used together" })
      if (path) return yield* showPath(options)
      const show = sources ? showSources(options.json) : showEffective(options.json)
      yield* show.pipe(Effect.provide(Layers.configured(options)))
    })
).pipe(
  Command.withDescription(
    describe(
      "Print the effective configuration: servers (namespace, transport, command or url, protocol, pool) " +
        "merged from every config file found (nearest wins per server), and every setting. " +
        "Config files: --config or MCPX_CONFIG names the only one; otherwise .mcpx.json and .mcp.json " +
        "in the working directory and each directory above it, then ~/.config/mcpx-fx/config.json.",
      "mcpx-fx config --sources",
      "mcpx-fx config --path --config ./team.mcp.json"
    )
  )
)
