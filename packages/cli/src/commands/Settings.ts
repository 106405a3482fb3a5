/**
 * `mcpx-fx settings list|get`: the effective value of every setting and where it came from
 * (default, a config file, an MCPX_* variable or a flag). `set` and `unset` change a running
 * daemon's values and arrive with the daemon.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Settings from "@mcpx-fx/gateway/Settings"
import * as Effect from "effect/Effect"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"
import * as Layers from "../Layers.js"
import * as Output from "../Output.js"
import { closeMatches } from "../Suggest.js"
import { UsageError } from "../UsageError.js"
import { globalsFrom } from "./Root.js"

const group = Command.make("settings", { globals: GlobalOptions.options })

const rows = Effect.flatMap(Settings.Settings, (s) => s.list)

const list = Command.make("list", { globals: GlobalOptions.options }, ({ globals }) =>
  Effect.gen(function*() {
    const options = yield* globalsFrom(globals, (yield* group).globals)
    const all = yield* rows.pipe(Effect.provide(Layers.configured(options)))
    if (options.json) return yield* Output.json(all)
    yield* Output.text(Output.table(["PATH", "VALUE", "SOURCE"], all.map((r) => [r.path, Output.settingText(r), r.source])))
  })).pipe(
    Command.withDescription(
      describe(
        "List every setting with its effective value and its source: default, file:<path>, env:<VAR> or flag:<--flag>.",
        "mcpx-fx settings list --pool-max 3 --json"
      )
    )
  )

const unknownPath = (path: string): UsageError => {
  const close = closeMatches(path, Settings.registry, (s) => [s.path, s.flag, s.env])
  const hint = close.length > 0
    ? `did you mean ${close.map((s) => s.path).join(" or ")}?`
    : `expected one of: ${Settings.paths.join(", ")}`
  return new UsageError({ message: `unknown setting ${JSON.stringify(path)}; ${hint}` })
}

const get = Command.make(
  "get",
  { globals: GlobalOptions.options, path: Args.text({ name: "path" }).pipe(Args.withDescription("A setting path, e.g. pool.max.")) },
  ({ globals, path }) =>
    Effect.gen(function*() {
      const options = yield* globalsFrom(globals, (yield* group).globals)
      if (!Settings.isSettingPath(path)) return yield* unknownPath(path)
      const all = yield* rows.pipe(Effect.provide(Layers.configured(options)))
      const row = all.find((r) => r.path === path)
      if (row === undefined) return yield* Effect.dieMessage(`settings list has no row for ${path}`)
      yield* options.json ? Output.json(row) : Output.text(row.text)
    })
).pipe(
  Command.withDescription(
    describe(
      "Print one setting's effective value, spelled as an environment variable or flag would take it; " +
        "with --json, its whole row (value, source, default, env, flag, hot, expected, description).",
      "mcpx-fx settings get upstream.protocol --json"
    )
  )
)

/** `mcpx-fx settings`. */
export const command = group.pipe(
  Command.withDescription(
    describe(
      "Show settings: every knob has a path (pool.max), an environment variable (MCPX_POOL_MAX) and a flag " +
        "(--pool-max), resolved default < file < env < flag.",
      "mcpx-fx settings get pool.max"
    )
  ),
  Command.withSubcommands([list, get])
)
