/**
 * How a caller that is asked through `input_required` (a 2026-07-28 host, `/v1/ask`) takes a legacy
 * upstream's questions: which it may be asked, in the words of 2026-07-28, and whether its answers
 * fit what was asked before they go back upstream.
 *
 * A caller is only asked what its capabilities say it can answer (2026-07-28 MRTR: an
 * `input_required` never carries a request of an undeclared kind); anything else is `Lacking`,
 * for PendingCalls to answer on its behalf or, when nothing else can be asked, to refuse the call
 * with -32021 — except `roots/list`, which is about the client rather than the call, and is
 * answered with no roots.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as Capabilities from "@mcpx-fx/protocol/Capabilities"
import * as Elicitation from "@mcpx-fx/protocol/Elicitation"
import { describeParseError, isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as Roots from "@mcpx-fx/protocol/Roots"
import * as Sampling from "@mcpx-fx/protocol/Sampling"
import { noRoots, type Question } from "@mcpx-fx/upstream/session/Questions"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { Asker, Take } from "./PendingQuestions.js"

/**
 * A progress token in a question's `_meta` names the upstream's request on its connection with
 * mcpx-fx; an `inputRequests` entry is no request of the host's, so it has nowhere to send
 * progress, and the token is left out (an emptied `_meta` with it).
 */
const withoutProgressToken = (params: JsonObject): JsonObject => {
  const meta = params._meta
  if (!isJsonObject(meta) || meta.progressToken === undefined) return params
  const { _meta: _, ...rest } = params
  const { progressToken: _token, ...kept } = meta
  return Object.keys(kept).length === 0 ? rest : { ...rest, _meta: kept }
}

const ask = (method: string, params: JsonObject): Take => ({ _tag: "Ask", question: { method, params: withoutProgressToken(params) } })
const lacking = (required: JsonObject): Take => ({ _tag: "Lacking", required })

const elicitation = (declared: JsonObject | undefined, params: JsonObject): Take => {
  const mode = params.mode === "url" ? "url" : "form"
  // `elicitation: {}` declares form mode only (2026-07-28 client/elicitation).
  const modes = declared === undefined ? [] : declared.form === undefined && declared.url === undefined ? ["form"] : [
    ...(declared.form !== undefined ? ["form"] : []),
    ...(declared.url !== undefined ? ["url"] : [])
  ]
  if (!modes.includes(mode)) return lacking({ elicitation: mode === "form" ? {} : { url: {} } })
  // 2026-07-28 URL elicitations carry no id: the caller learns the outcome by retrying.
  const { elicitationId: _id, ...shown } = params
  return ask(Method.ElicitationCreate, shown)
}

const sampling = (declared: JsonObject | undefined, params: JsonObject): Take => {
  if (declared === undefined) return lacking({ sampling: {} })
  if (params.tools !== undefined && declared.tools === undefined) return lacking({ sampling: { tools: {} } })
  // Context inclusion is deprecated and needs `sampling.context`; without it the request is asked
  // without the hint rather than not at all.
  const { includeContext, ...rest } = params
  const keepContext = includeContext !== undefined && includeContext !== "none" && declared.context !== undefined
  return ask(Method.SamplingCreateMessage, keepContext ? { ...rest, includeContext } : rest)
}

const capability = (capabilities: JsonObject, name: string): JsonObject | undefined => {
  const c = capabilities[name]
  return isJsonObject(c) ? c : undefined
}

/** How a caller that declared `capabilities` takes each kind of question. */
export const take = (capabilities: JsonObject) => (question: Question): Take => {
  switch (question.method) {
    case Method.Ping:
      return { _tag: "Answer", result: {} }
    case Method.ElicitationCreate:
      return elicitation(capability(capabilities, "elicitation"), question.params)
    case Method.SamplingCreateMessage:
      return sampling(capability(capabilities, "sampling"), question.params)
    case Method.RootsList:
      // Roots are the client's: a caller that declared none is not asked, and owes nothing.
      return capability(capabilities, "roots") === undefined ? { _tag: "Answer", result: noRoots } : ask(Method.RootsList, question.params)
    default:
      return lacking({ [question.method]: {} })
  }
}

const decode = <A, I>(schema: Schema.Schema<A, I>, answer: unknown) => Either.mapLeft(Schema.decodeUnknownEither(schema)(answer), describeParseError)

type Primitive = string | number | boolean | ReadonlyArray<string>

/** The values a choice offers: `enum`, or the `const`s of titled `oneOf`/`anyOf` options (2025-11-25). */
export const choices = (schema: JsonObject): ReadonlyArray<unknown> | undefined => {
  if (Array.isArray(schema.enum)) return schema.enum
  const titled = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : undefined
  return titled?.flatMap((o) => (isJsonObject(o) && o.const !== undefined ? [o.const] : []))
}

/** Whether one accepted form value fits its property's schema (type, enum, bounds). */
const fieldProblem = (name: string, property: JsonObject, value: Primitive): string | undefined => {
  const type = property.type
  const got = Array.isArray(value) ? "array" : typeof value
  if (type === "integer" && !(typeof value === "number" && Number.isInteger(value))) return `${name} must be an integer`
  if (type === "number" && typeof value !== "number") return `${name} must be a number`
  if ((type === "string" || type === "boolean") && got !== type) return `${name} must be a ${type}`
  if (type === "array" && !Array.isArray(value)) return `${name} must be an array of strings`
  const options = choices(property)
  const list = (values: ReadonlyArray<unknown>) => values.map((o) => JSON.stringify(o)).join(", ")
  if (options !== undefined && !options.includes(value)) return `${name} must be one of ${list(options)}`
  if (Array.isArray(value)) {
    const items = isJsonObject(property.items) ? choices(property.items) : undefined
    const stray = items === undefined ? undefined : value.find((v) => !items.includes(v))
    if (items !== undefined && stray !== undefined) return `${name} may hold only ${list(items)}, not ${JSON.stringify(stray)}`
    if (typeof property.minItems === "number" && value.length < property.minItems) return `${name} needs at least ${property.minItems} items`
    if (typeof property.maxItems === "number" && value.length > property.maxItems) return `${name} takes at most ${property.maxItems} items`
  }
  if (typeof value === "number") {
    if (typeof property.minimum === "number" && value < property.minimum) return `${name} must be at least ${property.minimum}`
    if (typeof property.maximum === "number" && value > property.maximum) return `${name} must be at most ${property.maximum}`
  }
  if (typeof value === "string") {
    if (typeof property.minLength === "number" && value.length < property.minLength) return `${name} is shorter than ${property.minLength}`
    if (typeof property.maxLength === "number" && value.length > property.maxLength) return `${name} is longer than ${property.maxLength}`
  }
  return undefined
}

/** An accepted form's content against the schema it was asked with. */
const formProblem = (schema: unknown, content: Readonly<Record<string, Primitive>> | undefined): string | undefined => {
  if (!isJsonObject(schema)) return undefined
  const properties = isJsonObject(schema.properties) ? schema.properties : {}
  const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === "string") : []
  const given = content ?? {}
  const missing = required.filter((r) => given[r] === undefined)
  if (missing.length > 0) return `an accepted form needs ${missing.join(", ")}`
  for (const [name, value] of Object.entries(given)) {
    const property = properties[name]
    if (!isJsonObject(property)) continue
    const problem = fieldProblem(name, property, value)
    if (problem !== undefined) return problem
  }
  return undefined
}

/** Whether `answer` answers `asked`; the result to send upstream. */
export const fit = (asked: Question, answer: unknown): Either.Either<JsonObject, string> => {
  switch (asked.method) {
    case Method.ElicitationCreate:
      return Either.flatMap(decode(Elicitation.ElicitResult, answer), (result): Either.Either<JsonObject, string> => {
        if (result.action !== "accept") return Either.right({ action: result.action })
        if (asked.params.mode === "url") return Either.right({ action: "accept" })
        const problem = formProblem(asked.params.requestedSchema, result.content)
        return problem === undefined ? Either.right(result) : Either.left(problem)
      })
    case Method.SamplingCreateMessage:
      return decode(Sampling.CreateMessageResult, answer)
    case Method.RootsList:
      return decode(Roots.ListRootsResult, answer)
    default:
      return isJsonObject(answer) ? Either.right(answer) : Either.left("expected an object")
  }
}

/** The asker for a caller that declared `capabilities` for its request. */
export const asker = (capabilities: JsonObject): Asker => ({ take: take(capabilities), fit })

/**
 * Whether a caller that declared `capabilities` can be asked nothing at all: every question but
 * `ping` would be `Lacking`, so its calls never end in `input_required`.
 */
export const asksNothing = Capabilities.asksNothing
