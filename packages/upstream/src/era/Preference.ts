/**
 * `upstream.protocol`: which request mcpx-fx sends first to an upstream, and whether it may fall
 * back. Each value is named for that first request, not for an era's age. Older names are still
 * accepted wherever a value is read (config, env, flag, /v1/settings) and are normalised here, so
 * everything mcpx-fx reports shows the canonical value.
 */
import * as Either from "effect/Either"
import { Type as ParseIssueType } from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** The canonical values, in the order help text lists them. */
export const Preferences = [
  "prefer-discover",
  "prefer-initialize",
  "force-discover",
  "force-initialize",
  "follow"
] as const

/** A canonical `upstream.protocol` value. */
export type Preference = (typeof Preferences)[number]

/** The value used when nothing is configured: discover first, as the specification prescribes. */
export const DefaultPreference: Preference = "prefer-discover"

/** Older names and what they mean today (keys are lower case). */
export const PreferenceAliases: Readonly<Record<string, Preference>> = {
  modern: "prefer-discover",
  "prefer-modern": "prefer-discover",
  "prefer-stateless": "prefer-discover",
  "prefer-newest": "prefer-discover",
  legacy: "prefer-initialize",
  "prefer-legacy": "prefer-initialize",
  "prefer-session": "prefer-initialize",
  "prefer-oldest": "prefer-initialize",
  "force-modern": "force-discover",
  "force-stateless": "force-discover",
  "force-legacy": "force-initialize",
  "force-session": "force-initialize"
}

/** Every accepted spelling (canonical first), for error messages and help text. */
export const AcceptedPreferenceNames: ReadonlyArray<string> = [...Preferences, ...Object.keys(PreferenceAliases)]

/** Why a value was refused: it names the value and every accepted one. */
export const describeRefusal = (value: string): string =>
  `unknown upstream.protocol value ${JSON.stringify(value)}; expected one of: ${AcceptedPreferenceNames.join(", ")}`

/** Normalises a value (case-insensitive, aliases mapped) or explains why it is refused. */
export const normalizePreference = (value: string): Either.Either<Preference, string> => {
  const key = value.trim().toLowerCase()
  if ((Preferences as ReadonlyArray<string>).includes(key)) return Either.right(key as Preference)
  const alias = PreferenceAliases[key]
  return alias !== undefined ? Either.right(alias) : Either.left(describeRefusal(value))
}

/** Schema that decodes any accepted spelling to its canonical value and encodes the canonical one. */
export const PreferenceFromString: Schema.Schema<Preference, string> = Schema.transformOrFail(
  Schema.String,
  Schema.Literal(...Preferences),
  {
    strict: true,
    decode: (s, _, ast) => Either.mapLeft(normalizePreference(s), (message) => new ParseIssueType(ast, s, message)),
    encode: (p) => Either.right(p)
  }
)

/** Whether a preference may read and write the era cache (`force-*` never does). */
export const usesEraCache = (p: Preference): boolean => !p.startsWith("force-")
