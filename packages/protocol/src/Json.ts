/**
 * Plain JSON helpers shared by the wire modules: the object guard, structural equality, and the
 * two Schema building blocks every MCP record uses.
 */
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** A JSON object as it came off the wire: string keys, values not yet looked at. */
export type JsonObject = { readonly [key: string]: unknown }

/** Schema for any JSON object (values unchecked). */
export const JsonObject: Schema.Record$<typeof Schema.String, typeof Schema.Unknown> = Schema.Record({
  key: Schema.String,
  value: Schema.Unknown
})

/** Whether a value is a JSON object (not null, not an array). */
export const isJsonObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * A struct whose unknown keys survive decoding. MCP says receivers ignore what they do not know,
 * and a gateway must not delete it on the way through, so every MCP record is built with this.
 */
export const open = <Fields extends Schema.Struct.Fields>(fields: Fields) => Schema.Struct(fields, JsonObject)

/**
 * An optional key that, when present, holds a value of `schema` (never `undefined`), which is
 * what `exactOptionalPropertyTypes` and JSON both mean by "optional".
 */
export const optionalKey = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** Whether an object has `key` as an own property (JSON.parse never produces inherited keys). */
export const hasKey = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key)

/**
 * Structural equality of two JSON values: key order does not matter, array order does.
 * Used to recognise content that is already present (e.g. structured content a server also
 * serialised as text).
 */
export const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]))
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const ka = Object.keys(a)
    const kb = Object.keys(b)
    return ka.length === kb.length && ka.every((k) => hasKey(b, k) && jsonEqual(a[k], b[k]))
  }
  return false
}

/** A copy of `o` without the given keys (the original is never mutated). */
export const omitKeys = (o: JsonObject, keys: ReadonlyArray<string>): JsonObject => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(o)) if (!keys.includes(k)) out[k] = v
  return out
}

/** One line naming the first thing a Schema decode found wrong, with its path, for error messages. */
export const describeParseError = (e: ParseResult.ParseError): string => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(e)[0]
  if (issue === undefined) return e.message
  return issue.path.length === 0 ? issue.message : `${issue.path.map(String).join(".")}: ${issue.message}`
}
