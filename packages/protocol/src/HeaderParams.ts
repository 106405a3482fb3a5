/**
 * The `x-mcp-header` annotations of a tool's input schema: which arguments the tool asks to have
 * mirrored into `Mcp-Param-{V}` headers, whether those annotations keep the spec's rules (a tool
 * whose annotations break them must not be listed), and where each value sits in the arguments.
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import { hasKey, isJsonObject, type JsonObject } from "./Json.js"

/** The JSON Schema annotation that asks for an argument to be mirrored. */
export const Annotation = "x-mcp-header"

/** An argument a tool asks to have mirrored into `Mcp-Param-{header}`. */
export interface HeaderParam {
  /** The annotation's value: the header is `Mcp-Param-` + this. */
  readonly header: string
  /** The chain of property names from the arguments object to the value. */
  readonly path: ReadonlyArray<string>
  readonly type: "string" | "integer" | "boolean"
}

/** A tool's `x-mcp-header` annotations break a rule of the spec; the tool must not be listed. */
export class InvalidHeaderAnnotation extends Data.TaggedError("InvalidHeaderAnnotation")<{ readonly reason: string }> {}

const Token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

// Keywords whose values are schemas, by shape. Only `properties` keeps an annotation reachable.
const SchemaMapKeywords = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]
const SchemaKeywords = [
  "items",
  "additionalItems",
  "additionalProperties",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else"
]
const SchemaListKeywords = ["allOf", "anyOf", "oneOf", "prefixItems", "items"]

interface Found {
  readonly value: unknown
  readonly schema: JsonObject
  /** Property chain when reachable through `properties` alone, else undefined. */
  readonly path: ReadonlyArray<string> | undefined
  readonly at: string
}

const pointer = (segments: ReadonlyArray<string>): string =>
  segments.length === 0 ? "/" : segments.map((s) => "/" + s.replace(/~/g, "~0").replace(/\//g, "~1")).join("")

// Walks only schema positions, so a property that happens to be named "x-mcp-header" (a key of a
// `properties` map) or an `enum`/`const`/`default` value holding that key is never mistaken for
// an annotation.
const collect = (node: unknown, at: ReadonlyArray<string>, path: ReadonlyArray<string> | undefined, out: Array<Found>): void => {
  if (!isJsonObject(node)) return
  if (hasKey(node, Annotation)) out.push({ value: node[Annotation], schema: node, path, at: pointer(at) })
  for (const [k, v] of Object.entries(node)) {
    if (SchemaMapKeywords.includes(k) && isJsonObject(v)) {
      for (const [name, sub] of Object.entries(v)) {
        collect(sub, [...at, k, name], k === "properties" && path !== undefined ? [...path, name] : undefined, out)
      }
    } else if (SchemaListKeywords.includes(k) && Array.isArray(v)) {
      v.forEach((sub, i) => collect(sub, [...at, k, String(i)], undefined, out))
    } else if (SchemaKeywords.includes(k)) {
      collect(v, [...at, k], undefined, out)
    }
  }
}

const mirroredType = (schema: JsonObject): HeaderParam["type"] | undefined => {
  const allowed = (t: unknown): t is HeaderParam["type"] => t === "string" || t === "integer" || t === "boolean"
  const t = schema.type
  if (allowed(t)) return t
  // A nullable primitive (["string", "null"]) still has one header form; null means "omit".
  if (Array.isArray(t)) {
    const nonNull = t.filter((x) => x !== "null")
    if (nonNull.length === 1 && allowed(nonNull[0])) return nonNull[0]
  }
  return undefined
}

/**
 * The arguments a tool mirrors into headers, or why its annotations are invalid: an empty or
 * non-token value, a value used twice (case-insensitively), an annotation on a property that is
 * not `integer`, `string` or `boolean` (`number` is not allowed), or one that is not reachable from
 * the root through a chain of `properties` alone (not via `items`, `oneOf`/`anyOf`/`allOf`/`not`,
 * `if`/`then`/`else`, `$defs`/`$ref` or any other keyword, and not on the root itself).
 */
export const headerParams = (inputSchema: unknown): Either.Either<ReadonlyArray<HeaderParam>, InvalidHeaderAnnotation> => {
  const found: Array<Found> = []
  collect(inputSchema, [], [], found)
  const params: Array<HeaderParam> = []
  const seen = new Map<string, string>()
  for (const f of found) {
    const fail = (reason: string) => Either.left(new InvalidHeaderAnnotation({ reason: `${Annotation} at ${f.at}: ${reason}` }))
    if (f.path === undefined || f.path.length === 0) {
      return fail("the annotated schema is not reachable from the root through a chain of properties")
    }
    if (typeof f.value !== "string" || f.value.length === 0) return fail("the value must be a non-empty string")
    if (!Token.test(f.value)) return fail(`"${f.value}" is not an HTTP field-name token (RFC 9110 tchar only)`)
    const type = mirroredType(f.schema)
    if (type === undefined) {
      return fail(`"${f.value}" is on a property of type ${JSON.stringify(f.schema.type) ?? "(none)"}; only integer, string and boolean may be mirrored`)
    }
    const key = f.value.toLowerCase()
    const previous = seen.get(key)
    if (previous !== undefined) return fail(`"${f.value}" repeats "${previous}" (values must be unique, case-insensitively)`)
    seen.set(key, f.value)
    params.push({ header: f.value, path: f.path, type })
  }
  return Either.right(params)
}

/** A tool left out of a listing, and why. */
export interface ExcludedTool<T> {
  readonly tool: T
  readonly name: string
  readonly reason: string
}

/**
 * Splits a tool listing into the tools an HTTP client may offer and those it must exclude because
 * their `x-mcp-header` annotations are invalid (the spec asks for the name and reason to be logged).
 */
export const partitionTools = <T>(tools: ReadonlyArray<T>): {
  readonly kept: ReadonlyArray<T>
  readonly excluded: ReadonlyArray<ExcludedTool<T>>
} => {
  const kept: Array<T> = []
  const excluded: Array<ExcludedTool<T>> = []
  for (const tool of tools) {
    const schema = isJsonObject(tool) ? tool.inputSchema : undefined
    const r = headerParams(schema)
    if (Either.isRight(r)) kept.push(tool)
    else excluded.push({ tool, name: isJsonObject(tool) && typeof tool.name === "string" ? tool.name : "(unnamed)", reason: r.left.reason })
  }
  return { kept, excluded }
}

/** The value at a property path of the call arguments (undefined when any step is absent). */
export const valueAt = (args: unknown, path: ReadonlyArray<string>): unknown => {
  let cur: unknown = args
  for (const step of path) {
    if (!isJsonObject(cur) || !hasKey(cur, step)) return undefined
    cur = cur[step]
  }
  return cur
}

// A tool's schema is the same object call after call (the listing keeps it), so its annotations
// are read once.
const knownParams = new WeakMap<object, Either.Either<ReadonlyArray<HeaderParam>, InvalidHeaderAnnotation>>()

/** `headerParams`, read once per schema object. */
export const headerParamsOf = (inputSchema: unknown): Either.Either<ReadonlyArray<HeaderParam>, InvalidHeaderAnnotation> => {
  if (typeof inputSchema !== "object" || inputSchema === null) return headerParams(inputSchema)
  const known = knownParams.get(inputSchema)
  if (known !== undefined) return known
  const found = headerParams(inputSchema)
  knownParams.set(inputSchema, found)
  return found
}
