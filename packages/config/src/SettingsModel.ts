/**
 * What the settings are reported and refused with: where a value came from, a listing's rows, the
 * answers to runtime changes, and the errors, for the service (Settings.ts), `/v1/settings` and
 * the CLI.
 */
import * as Schema from "effect/Schema"
import { paths, type SettingPath, type SettingValue } from "./SettingsRegistry.js"

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
export class UnknownSetting extends Schema.TaggedError<UnknownSetting>("@mcpx-fx/config/UnknownSetting")("UnknownSetting", {
  path: Schema.String,
  suggestions: Schema.Array(Schema.String)
}) {
  override get message(): string {
    const hint = this.suggestions.length > 0 ? `did you mean ${this.suggestions.join(" or ")}?` : `expected one of: ${paths.join(", ")}`
    return `unknown setting ${JSON.stringify(this.path)}; ${hint}`
  }
}

/** A runtime value the setting's codec refused; `detail` says what was expected (for `upstream.protocol`, every accepted name). */
export class InvalidSettingValue extends Schema.TaggedError<InvalidSettingValue>("@mcpx-fx/config/InvalidSettingValue")(
  "InvalidSettingValue",
  { path: Schema.String, detail: Schema.String }
) {
  override get message(): string {
    return `${this.path}: ${this.detail}`
  }
}
