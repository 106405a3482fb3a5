/**
 * How a setting is defined: its names derived from its path, and the registry entry built from a
 * codec. Split from SettingsRegistry.ts so each group of settings can live in its own module.
 */
import type * as Schema from "effect/Schema"
import type * as Codec from "./Codec.js"

// ---------------------------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------------------------

const words = (segment: string): ReadonlyArray<string> => segment.replace(/([a-z0-9])([A-Z])/g, "$1 $2").split(" ")

/** The environment variable of a setting path: `upstream.eraCache` → `MCPX_UPSTREAM_ERA_CACHE`. */
export const envNameOf = (path: string): string => `MCPX_${path.split(".").flatMap(words).join("_").toUpperCase()}`

/** The CLI flag of a setting path: `upstream.eraCache` → `--upstream-era-cache`. */
export const flagNameOf = (path: string): string => `--${path.split(".").flatMap(words).join("-").toLowerCase()}`

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

export const define = <const P extends string, A>(
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
