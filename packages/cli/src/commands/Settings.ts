/**
 * `mcpx-fx settings list|get|set|unset`: the effective value of every setting and where it came
 * from (default, a config file, an MCPX_* variable, a flag, or a runtime override). `list` and
 * `get` ask the running daemon when there is one and resolve in-process otherwise; `set` and
 * `unset` change a running daemon's values, so they need one — a runtime override lives in the
 * daemon, and an invocation that ends at once would have nobody to apply it to.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Settings from "@mcpx-fx/config/Settings"
import * as SettingsRegistry from "@mcpx-fx/config/SettingsRegistry"
import * as SettingsModel from "@mcpx-fx/config/SettingsModel"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"
import * as Layers from "../Layers.js"
import * as Output from "../Output.js"
import { closeMatches } from "@mcpx-fx/config/Suggest"
import { UsageError } from "../UsageError.js"
import * as ViaDaemon from "../ViaDaemon.js"
import { globalsFrom } from "./Root.js"

const group = Command.make("settings", { globals: GlobalOptions.options })

const localRows = (options: GlobalOptions.Globals) => Effect.flatMap(Settings.Settings, (s) => s.list).pipe(Effect.provide(Layers.configured(options)))

const Rows = Schema.Array(SettingsModel.SettingRow)

const list = Command.make("list", { globals: GlobalOptions.options, local: ViaDaemon.localOption }, ({ globals, local }) =>
  Effect.gen(function*() {
    const options = yield* globalsFrom(globals, (yield* group).globals)
    const all = yield* ViaDaemon.orInProcess(options, local, {
      daemon: (client) => Effect.map(client.settings.list(), (body) => body.settings),
      inProcess: localRows(options)
    })
    if (options.json) return yield* ViaDaemon.printJson(Rows, all)
    yield* Output.text(Output.table(["PATH", "VALUE", "SOURCE"], all.map((r) => [r.path, Output.settingText(r), r.source])))
  })).pipe(
    Command.withDescription(
      describe(
        "List every setting with its effective value and its source: default, file:<path>, env:<VAR>, flag:<--flag> " +
          "or runtime (set on the running daemon). " + ViaDaemon.helpNote,
        "mcpx-fx settings list --pool-max 3 --json"
      )
    )
  )

const unknownPath = (path: string): UsageError => {
  const close = closeMatches(path, SettingsRegistry.registry, (s) => [s.path, s.flag, s.env])
  const hint = close.length > 0
    ? `did you mean ${close.map((s) => s.path).join(" or ")}?`
    : `expected one of: ${SettingsRegistry.paths.join(", ")}`
  return new UsageError({ message: `unknown setting ${JSON.stringify(path)}; ${hint}` })
}

// Checked here rather than by the daemon, so a typo gets the same suggestions on either route.
const knownPath = (path: string): Effect.Effect<string, UsageError> =>
  SettingsRegistry.isSettingPath(path) ? Effect.succeed(path) : Effect.fail(unknownPath(path))

const pathArg = Args.text({ name: "path" }).pipe(Args.withDescription("A setting path, e.g. pool.callTimeout."))

const get = Command.make(
  "get",
  { globals: GlobalOptions.options, local: ViaDaemon.localOption, path: pathArg },
  ({ globals, local, path }) =>
    Effect.gen(function*() {
      const options = yield* globalsFrom(globals, (yield* group).globals)
      yield* knownPath(path)
      const row = yield* ViaDaemon.orInProcess(options, local, {
        daemon: (client) => client.settings.get({ path: { path } }),
        inProcess: Effect.flatMap(localRows(options), (all) => {
          const found = all.find((r) => r.path === path)
          return found === undefined ? Effect.dieMessage(`settings list has no row for ${path}`) : Effect.succeed(found)
        })
      })
      yield* options.json ? ViaDaemon.printJson(SettingsModel.SettingRow, row) : Output.text(row.text)
    })
).pipe(
  Command.withDescription(
    describe(
      "Print one setting's effective value, spelled as an environment variable or flag would take it; " +
        "with --json, its whole row (value, source, default, env, flag, hot, expected, description). " +
        ViaDaemon.helpNote,
      "mcpx-fx settings get upstream.protocol --json"
    )
  )
)

/** A cold setting was given to `set`: the daemon checked the value but only reads it at start. */
export class RestartRequired extends Data.TaggedError("RestartRequired")<{ readonly note: string }> {
  override get message(): string {
    return this.note
  }
}

const set = Command.make(
  "set",
  {
    globals: GlobalOptions.options,
    path: pathArg,
    value: Args.text({ name: "value" }).pipe(
      Args.withDescription("The value, spelled as its environment variable would take it (9s, prefer-initialize, 3).")
    )
  },
  ({ globals, path, value }) =>
    Effect.gen(function*() {
      const options = yield* globalsFrom(globals, (yield* group).globals)
      yield* knownPath(path)
      const result = yield* ViaDaemon.required(
        "settings set",
        (client) => client.settings.set({ path: { path }, payload: { value } })
      )
      if (options.json) yield* ViaDaemon.printJson(SettingsModel.SetResult, result)
      else if (result.applied) yield* Output.text(`${result.path} = ${Output.settingText(result)} (${result.source})`)
      // Nothing was stored, so the command did not do what was asked: exit 1 with the daemon's note.
      if (!result.applied) return yield* new RestartRequired({ note: result.note ?? `${result.path} is read once at start` })
    })
).pipe(
  Command.withDescription(
    describe(
      "Override a setting on the running daemon until it stops or `settings unset`; the next call uses it. Only " +
        "hot settings (those read per call: upstream.protocol, timeouts, …) can change at runtime: a setting read at " +
        "start is checked, not stored, and the command exits 1 saying where to set it. Needs a running daemon " +
        "(exit 1 without one); setting flags do not apply to it.",
      "mcpx-fx settings set pool.callTimeout 90s"
    )
  )
)

const unset = Command.make(
  "unset",
  { globals: GlobalOptions.options, path: pathArg },
  ({ globals, path }) =>
    Effect.gen(function*() {
      const options = yield* globalsFrom(globals, (yield* group).globals)
      yield* knownPath(path)
      const result = yield* ViaDaemon.required("settings unset", (client) => client.settings.unset({ path: { path } }))
      if (options.json) return yield* ViaDaemon.printJson(SettingsModel.UnsetResult, result)
      const was = result.removed ? "" : "; there was no runtime override"
      yield* Output.text(`${result.path} = ${Output.settingText(result)} (${result.source}${was})`)
    })
).pipe(
  Command.withDescription(
    describe(
      "Drop the running daemon's runtime override of a setting, so its file, environment, flag or default value " +
        "is in effect again; prints that value and its source. Needs a running daemon (exit 1 without one).",
      "mcpx-fx settings unset pool.callTimeout"
    )
  )
)

/** `mcpx-fx settings`. */
export const command = group.pipe(
  Command.withDescription(
    describe(
      "Show and change settings: every knob has a path (pool.max), an environment variable (MCPX_POOL_MAX) and a " +
        "flag (--pool-max), resolved default < file < env < flag < runtime (set on a running daemon).",
      "mcpx-fx settings get pool.max"
    )
  ),
  Command.withSubcommands([list, get, set, unset])
)
