/**
 * Prompts: `prompts/list` and `prompts/get` (`title` since 2025-06-18, `icons` since 2025-11-25;
 * `prompts/get` may answer `input_required` in 2026-07-28).
 */
import * as Schema from "effect/Schema"
import { ContentBlock, Role } from "./Content.js"
import { Icon } from "./Implementation.js"
import { retryFields } from "./InputRequired.js"
import { JsonObject, open, optionalKey } from "./Json.js"
import { Cursor, resultFields } from "./Result.js"

/** An argument a prompt template accepts. */
export const PromptArgument = open({
  name: Schema.String,
  title: optionalKey(Schema.String),
  description: optionalKey(Schema.String),
  required: optionalKey(Schema.Boolean)
})
/** An argument a prompt template accepts. */
export type PromptArgument = typeof PromptArgument.Type

/** A prompt or prompt template. */
export const Prompt = open({
  name: Schema.String,
  title: optionalKey(Schema.String),
  description: optionalKey(Schema.String),
  arguments: optionalKey(Schema.Array(PromptArgument)),
  icons: optionalKey(Schema.Array(Icon)),
  _meta: optionalKey(JsonObject)
})
/** A prompt. */
export type Prompt = typeof Prompt.Type

/** Result of `prompts/list`. */
export const ListPromptsResult = open({ prompts: Schema.Array(Prompt), nextCursor: optionalKey(Cursor), ...resultFields })
/** Result of `prompts/list`. */
export type ListPromptsResult = typeof ListPromptsResult.Type

/** Params of `prompts/get`. */
export const GetPromptParams = open({
  name: Schema.String,
  arguments: optionalKey(Schema.Record({ key: Schema.String, value: Schema.String })),
  ...retryFields,
  _meta: optionalKey(JsonObject)
})
/** Params of `prompts/get`. */
export type GetPromptParams = typeof GetPromptParams.Type

/** One message of a rendered prompt. */
export const PromptMessage = open({ role: Role, content: ContentBlock })
/** One message of a rendered prompt. */
export type PromptMessage = typeof PromptMessage.Type

/** Result of `prompts/get`. */
export const GetPromptResult = open({
  description: optionalKey(Schema.String),
  messages: Schema.Array(PromptMessage),
  ...resultFields
})
/** Result of `prompts/get`. */
export type GetPromptResult = typeof GetPromptResult.Type
