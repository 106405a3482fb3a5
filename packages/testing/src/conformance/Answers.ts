/**
 * The answers the conformance client gives without a human or a model behind it: an elicitation
 * accepted with the defaults its schema declares (SEP-1034), roots that are empty, and arguments
 * for tools and prompts built from what their schemas require.
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import { type QuestionHandler, QuestionRefused, withPing } from "@mcpx-fx/upstream/session/Questions"
import * as Effect from "effect/Effect"

const propertiesOf = (schema: unknown): JsonObject => isJsonObject(schema) && isJsonObject(schema.properties) ? schema.properties : {}

const requiredOf = (schema: unknown): ReadonlyArray<string> =>
  isJsonObject(schema) && Array.isArray(schema.required)
    ? schema.required.filter((k): k is string => typeof k === "string")
    : []

/**
 * The content of an accepted form elicitation: every field whose schema declares a `default`
 * gets it, and a required field without one gets a value of its type, so the server sees what a
 * user who pressed "accept" without typing anything would send.
 */
export const acceptedContent = (requestedSchema: unknown): JsonObject => {
  const required = requiredOf(requestedSchema)
  const content: Record<string, unknown> = {}
  for (const [key, property] of Object.entries(propertiesOf(requestedSchema))) {
    if (isJsonObject(property) && property.default !== undefined) content[key] = property.default
    else if (required.includes(key)) content[key] = sampleValue(property)
  }
  return content
}

/** A value of the type a JSON Schema property names: its default, its first enum member, or a plain one. */
export const sampleValue = (property: unknown): unknown => {
  if (!isJsonObject(property)) return "sample"
  if (property.default !== undefined) return property.default
  if (Array.isArray(property.enum) && property.enum.length > 0) return property.enum[0]
  if (property.const !== undefined) return property.const
  switch (Array.isArray(property.type) ? property.type[0] : property.type) {
    case "integer":
      return 1
    case "number":
      return 1.5
    case "boolean":
      return true
    case "object":
      return sampleArguments(property)
    case "array":
      return []
    case "null":
      return null
    default:
      return "sample"
  }
}

/** Arguments for a tool (or an object property): every required property, with a value of its type. */
export const sampleArguments = (inputSchema: unknown): JsonObject => {
  const properties = propertiesOf(inputSchema)
  return Object.fromEntries(requiredOf(inputSchema).map((key) => [key, sampleValue(properties[key])]))
}

/**
 * Answers an upstream's questions for the conformance client: form elicitations are accepted with
 * their defaults (URL elicitations are declined: nobody is there to open the page), roots are
 * empty, and sampling is refused because no model stands behind this client.
 */
export const answerQuestions: QuestionHandler = withPing((q) => {
  switch (q.method) {
    case "elicitation/create":
      return Effect.succeed(
        q.params.mode === "url"
          ? { action: "decline" }
          : { action: "accept", content: acceptedContent(q.params.requestedSchema) }
      )
    case "roots/list":
      return Effect.succeed({ roots: [] })
    default:
      return Effect.fail(
        new QuestionRefused({ code: ErrorCode.MethodNotFound, message: `the conformance client cannot answer ${q.method}` })
      )
  }
})
