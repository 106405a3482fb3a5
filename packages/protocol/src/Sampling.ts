/**
 * `sampling/createMessage`: the server asks the client's LLM. Tool use inside sampling (`tools`,
 * `toolChoice`, `tool_use`/`tool_result` blocks, array content) arrived in 2025-11-25. Deprecated
 * but functional in 2026-07-28, where it travels as an input request.
 */
import * as Schema from "effect/Schema"
import { AudioContent, ContentBlock, ImageContent, Role, TextContent } from "./Content.js"
import { JsonObject, open, optionalKey } from "./Json.js"

/** The model asks to call a tool (2025-11-25). */
export const ToolUseContent = open({
  type: Schema.Literal("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: JsonObject,
  _meta: optionalKey(JsonObject)
})
/** The model asks to call a tool. */
export type ToolUseContent = typeof ToolUseContent.Type

/** The result of a tool use, fed back to the model (2025-11-25). */
export const ToolResultContent = open({
  type: Schema.Literal("tool_result"),
  toolUseId: Schema.String,
  content: Schema.Array(ContentBlock),
  structuredContent: optionalKey(Schema.Unknown),
  isError: optionalKey(Schema.Boolean),
  _meta: optionalKey(JsonObject)
})
/** The result of a tool use. */
export type ToolResultContent = typeof ToolResultContent.Type

/** A block inside a sampling message. */
export const SamplingContent = Schema.Union(TextContent, ImageContent, AudioContent, ToolUseContent, ToolResultContent)
/** A block inside a sampling message. */
export type SamplingContent = typeof SamplingContent.Type

/** One message of the conversation to sample; content is one block or (2025-11-25) several. */
export const SamplingMessage = open({
  role: Role,
  content: Schema.Union(SamplingContent, Schema.Array(SamplingContent)),
  _meta: optionalKey(JsonObject)
})
/** One message to sample. */
export type SamplingMessage = typeof SamplingMessage.Type

/** Advisory model preferences. */
export const ModelPreferences = open({
  hints: optionalKey(Schema.Array(open({ name: optionalKey(Schema.String) }))),
  costPriority: optionalKey(Schema.Number),
  speedPriority: optionalKey(Schema.Number),
  intelligencePriority: optionalKey(Schema.Number)
})
/** Advisory model preferences. */
export type ModelPreferences = typeof ModelPreferences.Type

/**
 * Params of `sampling/createMessage`. `tools` holds tool definitions as `tools/list` has them; they
 * stay plain objects here so this module does not depend on the tools module.
 */
export const CreateMessageParams = open({
  messages: Schema.Array(SamplingMessage),
  modelPreferences: optionalKey(ModelPreferences),
  systemPrompt: optionalKey(Schema.String),
  includeContext: optionalKey(Schema.Literal("none", "thisServer", "allServers")),
  temperature: optionalKey(Schema.Number),
  maxTokens: Schema.Number,
  stopSequences: optionalKey(Schema.Array(Schema.String)),
  metadata: optionalKey(JsonObject),
  tools: optionalKey(Schema.Array(JsonObject)),
  toolChoice: optionalKey(open({ mode: optionalKey(Schema.Literal("auto", "required", "none")) })),
  _meta: optionalKey(JsonObject)
})
/** Params of `sampling/createMessage`. */
export type CreateMessageParams = typeof CreateMessageParams.Type

/** Result of `sampling/createMessage`. */
export const CreateMessageResult = open({
  role: Role,
  content: Schema.Union(SamplingContent, Schema.Array(SamplingContent)),
  model: Schema.String,
  stopReason: optionalKey(Schema.String),
  _meta: optionalKey(JsonObject)
})
/** Result of `sampling/createMessage`. */
export type CreateMessageResult = typeof CreateMessageResult.Type
