/**
 * The options every command takes: `--config FILE`, `--json`, and one flag per setting. The setting
 * flags are built from the gateway's registry, so a setting added there is a flag here with no
 * edit, spelled exactly as `Settings` expects it back in its flag layer.
 *
 * Every command in the tree declares these options, so they may follow every command word
 * (`mcpx-fx --json settings list`, `mcpx-fx settings list --pool-max 3`) and every `--help` lists
 * them. @effect/cli hands each level only the options written next to it; `combine` folds the
 * levels into one value.
 */
import * as Options from "@effect/cli/Options"
import * as Settings from "@mcpx-fx/config/Settings"
import * as SettingsRegistry from "@mcpx-fx/config/SettingsRegistry"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Record from "effect/Record"
import { UsageError } from "./UsageError.js"

/** The global options as given at one command level, or combined across levels. */
export interface Globals {
  /** `--config FILE`: the one config file to read. */
  readonly config: Option.Option<string>
  /** `--json`: machine-readable output. */
  readonly json: boolean
  /** Setting flags that were given, keyed by flag name (`--pool-max`), as `Settings` takes them. */
  readonly flags: Readonly<Record<string, string>>
}

// Read from the registry itself, not from a Settings service's listing: these options are built
// at every start, and a listing encodes every value through its Schema.
const settingHelp = (row: SettingsRegistry.AnySetting): string => {
  const text = Settings.defaultText(row)
  return `${row.description} Accepts ${row.expected}. Default: ${text === "" ? "none" : text}. ` +
    `Environment: ${row.env}. Setting: ${row.path}${row.hot ? "" : " (read at start)"}.`
}

const settingOption = (row: SettingsRegistry.AnySetting) =>
  // Plain text: the value is decoded by Settings, so a bad one is refused with the same message
  // whether it came from a flag, the environment or a file.
  Options.text(row.flag.replace(/^--/, "")).pipe(
    Options.withPseudoName("VALUE"),
    Options.withDescription(settingHelp(row)),
    Options.optional
  )

/** One optional text option per registry entry, keyed by its flag name. */
const settingOptions: Options.Options<Record<string, Option.Option<string>>> = Options.all(
  Object.fromEntries(SettingsRegistry.registry.map((row) => [row.flag, settingOption(row)] as const))
)

/** The global options, for a command's config: `Command.make(name, { globals: options, … })`. */
export const options: Options.Options<Globals> = Options.all({
  config: Options.text("config").pipe(
    Options.withPseudoName("FILE"),
    Options.withDescription(
      "Read only this config file instead of searching for .mcpx.json/.mcp.json (the MCPX_CONFIG variable does the same)."
    ),
    Options.optional
  ),
  json: Options.boolean("json").pipe(Options.withDescription("Print JSON instead of text.")),
  flags: settingOptions.pipe(Options.map(Record.getSomes))
})

/**
 * Folds the options given at each command level into one value. A value given at two levels is
 * refused rather than silently picked: `--pool-max 1 … --pool-max 2` has no obvious winner.
 */
export const combine = (levels: ReadonlyArray<Globals>): Either.Either<Globals, UsageError> => {
  let config = Option.none<string>()
  let json = false
  const flags: Record<string, string> = {}
  for (const level of levels) {
    if (Option.isSome(level.config)) {
      if (Option.isSome(config)) return Either.left(new UsageError({ message: "--config is given more than once" }))
      config = level.config
    }
    json = json || level.json
    for (const [flag, value] of Object.entries(level.flags)) {
      if (flag in flags) return Either.left(new UsageError({ message: `${flag} is given more than once` }))
      flags[flag] = value
    }
  }
  return Either.right({ config, json, flags })
}
