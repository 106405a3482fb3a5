/**
 * `completion/complete`: argument completion for prompts and resource templates (`context` since
 * 2025-06-18; the `completions` server capability since 2025-03-26).
 */
import * as Schema from "effect/Schema"
import { JsonObject, open, optionalKey } from "./Json.js"
import { resultFields } from "./Result.js"

/** Completion for a prompt's argument. */
export const PromptReference = open({ type: Schema.Literal("ref/prompt"), name: Schema.String, title: optionalKey(Schema.String) })
/** Completion for a resource template's variable. */
export const ResourceTemplateReference = open({ type: Schema.Literal("ref/resource"), uri: Schema.String })

/** Params of `completion/complete`. */
export const CompleteParams = open({
  ref: Schema.Union(PromptReference, ResourceTemplateReference),
  argument: open({ name: Schema.String, value: Schema.String }),
  context: optionalKey(open({ arguments: optionalKey(Schema.Record({ key: Schema.String, value: Schema.String })) })),
  _meta: optionalKey(JsonObject)
})
/** Params of `completion/complete`. */
export type CompleteParams = typeof CompleteParams.Type

/** The most values one completion result may carry. */
export const MaxValues = 100

/**
 * Result of `completion/complete`. The 100-value cap is not enforced on decode: a gateway trims an
 * upstream's oversized answer rather than failing the caller.
 */
export const CompleteResult = open({
  completion: open({
    values: Schema.Array(Schema.String),
    total: optionalKey(Schema.Number),
    hasMore: optionalKey(Schema.Boolean)
  }),
  ...resultFields
})
/** Result of `completion/complete`. */
export type CompleteResult = typeof CompleteResult.Type
