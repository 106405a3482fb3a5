/**
 * `mcpx-fx servers list|add|remove|enable|disable`: the configured servers, and edits of the
 * config file that keep its comments and layout (ConfigEdit.ts). An edit goes to the file `--config`
 * or `MCPX_CONFIG` names, else to the nearest config file found (`add` creates `.mcp.json` in the
 * working directory when there is none; `remove` and `enable` go to the nearest file that names
 * the server). A running daemon watches its files, so it picks the change up by itself.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Config from "@mcpx-fx/config/Config"
import * as ConfigFile from "@mcpx-fx/config/ConfigFile"
import * as ConfigEdit from "@mcpx-fx/config/ConfigEdit"
import * as Suggest from "@mcpx-fx/config/Suggest"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"
import * as Layers from "../Layers.js"
import * as Output from "../Output.js"
import { UsageError } from "../UsageError.js"
import * as ViaDaemon from "../ViaDaemon.js"
import { globalsFrom } from "./Root.js"

const group = Command.make("servers", { globals: GlobalOptions.options })

const optionsOf = (globals: GlobalOptions.Globals) => Effect.flatMap(group, (g) => globalsFrom(globals, g.globals))

/** The files that exist on the search path, nearest first, and where a new one would go. */
const files = (globals: GlobalOptions.Globals) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const environment = yield* Layers.ProcessEnvironment
    const search = yield* ConfigFile.searchPath(Layers.configInput(environment, globals))
    const existing: Array<string> = []
    for (const file of search.candidates) if (yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false))) existing.push(file)
    const fallback = search.explicit ? search.candidates[0]! : path.join(environment.cwd, ".mcp.json")
    return { existing: search.explicit ? [search.candidates[0]!] : existing, nearest: existing[0] ?? fallback, explicit: search.explicit }
  })

/** Every server any file names (enabled or not), for "did you mean". */
const knownNames = (existing: ReadonlyArray<string>) =>
  Effect.map(
    Effect.forEach(existing, (file) => Effect.orElseSucceed(ConfigEdit.read(file), () => undefined)),
    (docs) => [...new Set(docs.flatMap((d) => (d === undefined ? [] : [...d.entries.keys()])))]
  )

const unknownServer = (name: string, known: ReadonlyArray<string>) => {
  const near = Suggest.closest(name, known)
  const hint = near.length > 0 ? `did you mean ${near.join(", ")}?` : `configured: ${known.join(", ") || "(none)"}`
  return new UsageError({ message: `unknown server ${JSON.stringify(name)}; ${hint}` })
}

/** The nearest file that names the server, read. */
const nearestNaming = (globals: GlobalOptions.Globals, name: string) =>
  Effect.gen(function*() {
    const { existing } = yield* files(globals)
    for (const file of existing) {
      const doc = yield* ConfigEdit.read(file)
      if (doc.entries.has(name)) return doc
    }
    return yield* unknownServer(name, yield* knownNames(existing))
  })

/**
 * One read-modify-write of a config file under its edit lock: the file is read afresh once the
 * lock is held, so an edit made meanwhile by another `servers` command is kept. `text` undefined
 * writes nothing; `said` is printed with the file's name either way.
 */
const edit = <E, R>(
  file: string,
  change: (doc: ConfigEdit.Document) => Effect.Effect<{ readonly text: string | undefined; readonly said: string }, E, R>
) =>
  ConfigEdit.locked(
    file,
    Effect.gen(function*() {
      const doc = yield* ConfigEdit.read(file)
      const { said, text } = yield* change(doc)
      if (text !== undefined) yield* ConfigEdit.write(doc.file, text)
      yield* Console.log(`${said} in ${doc.file}`)
    })
  )

const nameArg = Args.text({ name: "name" }).pipe(Args.withDescription("The server's name (its namespace is made from it)."))

interface Row {
  readonly name: string
  readonly namespace: string
  readonly enabled: boolean
  readonly transport: string
  readonly target: string
  readonly file: string
}

/** The rows, and the daemon they came from (none: the config files found from here). */
interface Listed {
  readonly rows: ReadonlyArray<Row>
  readonly daemon: { readonly pid: number; readonly files: ReadonlyArray<string> } | undefined
}

/** The servers of the config files found from here, enabled and disabled. */
const configuredRows = (options: GlobalOptions.Globals) =>
  Effect.map(Effect.provide(Config.Config, Layers.configured(options)), (config): Listed => ({
    rows: [
      ...config.servers.map((s): Row => {
        const d = s.definition
        const target = d.transport === "stdio" ? [d.command, ...d.args].join(" ") : d.url
        return { name: s.name, namespace: s.namespace, enabled: true, transport: d.transport, target, file: s.file }
      }),
      ...config.disabled.map((s): Row => ({ name: s.name, namespace: ConfigFile.namespaceOf(s.name), enabled: false, transport: "", target: "", file: s.file }))
    ],
    daemon: undefined
  }))

/**
 * The servers a running daemon runs and those its files disable, from the files it read (which
 * need not be the ones found from here: it was started elsewhere, or by `npm start`).
 */
const daemonRows = (client: ViaDaemon.Client) =>
  Effect.map(client.system.status(), (status): Listed => ({
    rows: [
      ...status.servers.map((s): Row => ({
        name: s.name,
        namespace: s.namespace,
        enabled: true,
        transport: s.transport,
        target: s.transport === "stdio" ? [s.command ?? "", ...(s.args ?? [])].join(" ") : s.url ?? "",
        file: s.file
      })),
      ...(status.config?.disabled ?? []).map((s): Row => ({
        name: s.name,
        namespace: ConfigFile.namespaceOf(s.name),
        enabled: false,
        transport: "",
        target: "",
        file: s.file
      }))
    ],
    daemon: { pid: status.daemon.pid, files: status.config?.files ?? status.daemon.configFiles }
  }))

const list = Command.make("list", { globals: GlobalOptions.options, local: ViaDaemon.localOption }, ({ globals, local }) =>
  Effect.gen(function*() {
    const options = yield* optionsOf(globals)
    const { daemon, rows } = yield* ViaDaemon.orInProcess(options, local, { daemon: daemonRows, inProcess: configuredRows(options) })
    if (options.json) return yield* Output.json(daemon === undefined ? { servers: rows } : { servers: rows, daemon })
    const from = daemon === undefined
      ? []
      : [`the running daemon's (pid ${daemon.pid}), from ${daemon.files.length === 0 ? "no config file" : daemon.files.join(", ")}:`]
    const table = rows.length === 0
      ? "(no servers)"
      : Output.table(
        ["SERVER", "STATE", "TRANSPORT", "COMMAND OR URL", "FILE"],
        rows.map((r) => [r.name, r.enabled ? "enabled" : "disabled", r.transport || "-", r.target || "-", r.file])
      )
    yield* Output.text([...from, table].join("\n"))
  })).pipe(
    Command.withDescription(
      describe(
        "List the configured servers, enabled and disabled, with the file each comes from. With a daemon running, " +
          "its servers and the files it read (--local: the files found from here). " + ViaDaemon.helpNote,
        "mcpx-fx servers list --json"
      )
    )
  )

const add = Command.make(
  "add",
  {
    globals: GlobalOptions.options,
    name: nameArg,
    target: Args.text({ name: "command-or-url" }).pipe(Args.withDescription("The command to run (a stdio server) or an http(s):// URL.")),
    args: Args.text({ name: "args" }).pipe(Args.withDescription("The command's arguments (put -- before ones that start with -)."), Args.repeated),
    env: Options.keyValueMap("env").pipe(Options.withDescription("An environment variable for the server, KEY=VALUE (repeatable)."), Options.optional),
    header: Options.keyValueMap("header").pipe(Options.withDescription("An HTTP header for a URL server, NAME=VALUE (repeatable)."), Options.optional)
  },
  ({ args, env, globals, header, name, target }) =>
    Effect.gen(function*() {
      const options = yield* optionsOf(globals)
      const where = yield* files(options)
      const taken = yield* knownNames(where.existing)
      const clash = taken.find((t) => t === name || ConfigFile.namespaceOf(t) === ConfigFile.namespaceOf(name))
      if (clash !== undefined) {
        return yield* new UsageError({
          message:
            `a server ${JSON.stringify(clash)} is already configured${clash === name ? "" : ` with the same namespace ${ConfigFile.namespaceOf(name)}`}; ` +
            "remove it first, or choose another name"
        })
      }
      const isUrl = /^https?:\/\//.test(target)
      const record = (m: Option.Option<HashMap.HashMap<string, string>>) =>
        Option.match(m, { onNone: () => undefined, onSome: (h) => Object.fromEntries(HashMap.toEntries(h)) })
      const envs = record(env)
      const headers = record(header)
      if (isUrl && (args.length > 0 || envs !== undefined)) {
        return yield* new UsageError({ message: "a URL server takes no arguments or --env (give --header instead)" })
      }
      if (!isUrl && headers !== undefined) return yield* new UsageError({ message: "--header is for a URL server" })
      const entry = isUrl
        ? { url: target, ...(headers !== undefined ? { headers } : {}) }
        : { command: target, ...(args.length > 0 ? { args: [...args] } : {}), ...(envs !== undefined ? { env: envs } : {}) }
      yield* edit(where.nearest, (doc): Effect.Effect<{ readonly text: string; readonly said: string }, UsageError | ConfigFile.ConfigError> =>
        doc.entries.has(name)
          // Added by another command since the check above.
          ? Effect.fail(new UsageError({ message: `a server ${JSON.stringify(name)} is already configured; remove it first, or choose another name` }))
          : Effect.map(ConfigEdit.addServer(doc, name, entry), (text) => ({ text, said: `added ${name}` })))
    })
).pipe(
  Command.withDescription(
    describe(
      "Add a server to the nearest config file (or --config; .mcp.json in this directory when there is none), keeping " +
        "its comments and layout. A running daemon picks it up by itself.",
      "mcpx-fx servers add github -- npx -y @modelcontextprotocol/server-github"
    )
  )
)

const remove = Command.make("remove", { globals: GlobalOptions.options, name: nameArg }, ({ globals, name }) =>
  Effect.gen(function*() {
    const found = yield* nearestNaming(yield* optionsOf(globals), name)
    yield* edit(found.file, (doc) => Effect.map(ConfigEdit.removeServer(doc, name), (text) => ({ text, said: `removed ${name}` })))
  })).pipe(
    Command.withDescription(
      describe("Remove a server from the nearest config file that names it, keeping the rest of the file as it is.", "mcpx-fx servers remove github")
    )
  )

const disable = Command.make("disable", { globals: GlobalOptions.options, name: nameArg }, ({ globals, name }) =>
  Effect.gen(function*() {
    const options = yield* optionsOf(globals)
    const where = yield* files(options)
    const known = yield* knownNames(where.existing)
    if (!known.includes(name)) return yield* unknownServer(name, known)
    yield* edit(where.nearest, (doc) =>
      ConfigEdit.disablesHere(doc, name)
        ? Effect.succeed({ text: undefined, said: `${name} is already disabled` })
        : Effect.map(ConfigEdit.disableServer(doc, name), (text) => ({ text, said: `disabled ${name}` })))
  })).pipe(
    Command.withDescription(
      describe(
        "Disable a server in the nearest config file: \"disabled\": true on its entry, or an entry saying only that when " +
          "a farther file defines it.",
        "mcpx-fx servers disable github"
      )
    )
  )

const enable = Command.make("enable", { globals: GlobalOptions.options, name: nameArg }, ({ globals, name }) =>
  Effect.gen(function*() {
    const found = yield* nearestNaming(yield* optionsOf(globals), name)
    yield* edit(found.file, (doc) =>
      !ConfigEdit.disablesHere(doc, name)
        ? Effect.succeed({ text: undefined, said: `${name} is not disabled` })
        : Effect.map(ConfigEdit.enableServer(doc, name), (text) => ({ text, said: `enabled ${name}` })))
  })).pipe(
    Command.withDescription(
      describe("Enable a server the nearest config file that names it disables.", "mcpx-fx servers enable github")
    )
  )

/** `mcpx-fx servers`. */
export const command = group.pipe(
  Command.withDescription(
    describe("List the configured servers, or add, remove, enable or disable one in a config file.", "mcpx-fx servers list")
  ),
  Command.withSubcommands([list, add, remove, enable, disable])
)
