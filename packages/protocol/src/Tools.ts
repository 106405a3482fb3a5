/**
 * Tools: `tools/list` and `tools/call`.
 *
 * Revision differences: `annotations` since 2025-03-26; `title`, `outputSchema`,
 * `structuredContent` and `_meta` since 2025-06-18; `icons` and `execution` since 2025-11-25.
 * `structuredContent` is an object in 2025-06-18 and 2025-11-25 and any JSON value in 2026-07-28.
 */
import * as Schema from "effect/Schema"
import { ContentBlock } from "./Content.js"
import { Icon } from "./Implementation.js"
import { retryFields } from "./InputRequired.js"
import { JsonObject, open, optionalKey } from "./Json.js"
import { Cursor, resultFields } from "./Result.js"
import { isModernRevision, type Revision } from "./Revision.js"
import { TaskMetadata, ToolExecution } from "./Tasks.js"

/** Behaviour hints (never trusted for decisions). */
export const ToolAnnotations = open({
  title: optionalKey(Schema.String),
  readOnlyHint: optionalKey(Schema.Boolean),
  destructiveHint: optionalKey(Schema.Boolean),
  idempotentHint: optionalKey(Schema.Boolean),
  openWorldHint: optionalKey(Schema.Boolean)
})
/** Behaviour hints. */
export type ToolAnnotations = typeof ToolAnnotations.Type

/** A tool's input schema: a JSON Schema whose root is `type: "object"`. */
export const InputSchema = open({ type: Schema.Literal("object") })
/** A tool's input schema. */
export type InputSchema = typeof InputSchema.Type

/** A tool definition. */
export const Tool = open({
  name: Schema.String,
  title: optionalKey(Schema.String),
  description: optionalKey(Schema.String),
  inputSchema: InputSchema,
  outputSchema: optionalKey(JsonObject),
  annotations: optionalKey(ToolAnnotations),
  icons: optionalKey(Schema.Array(Icon)),
  execution: optionalKey(ToolExecution),
  _meta: optionalKey(JsonObject)
})
/** A tool definition. */
export type Tool = typeof Tool.Type

/** Result of `tools/list`. */
export const ListToolsResult = open({ tools: Schema.Array(Tool), nextCursor: optionalKey(Cursor), ...resultFields })
/** Result of `tools/list`. */
export type ListToolsResult = typeof ListToolsResult.Type

/**
 * Params of `tools/call`: `task` is 2025-11-25's augmentation (a 2026 server ignores it), the retry
 * fields are MRTR's.
 */
export const CallToolParams = open({
  name: Schema.String,
  arguments: optionalKey(JsonObject),
  task: optionalKey(TaskMetadata),
  ...retryFields,
  _meta: optionalKey(JsonObject)
})
/** Params of `tools/call`. */
export type CallToolParams = typeof CallToolParams.Type

const callToolResultFields = {
  content: Schema.Array(ContentBlock),
  isError: optionalKey(Schema.Boolean),
  ...resultFields
}

/** Result of `tools/call` for 2025-06-18 and 2025-11-25 callers: structured content is an object. */
export const LegacyCallToolResult = open({ ...callToolResultFields, structuredContent: optionalKey(JsonObject) })
/** Result of `tools/call` for 2025 callers. */
export type LegacyCallToolResult = typeof LegacyCallToolResult.Type

/** Result of `tools/call` in 2026-07-28: structured content is any JSON value. */
export const ModernCallToolResult = open({ ...callToolResultFields, structuredContent: optionalKey(Schema.Unknown) })
/** Result of `tools/call` in 2026-07-28. */
export type ModernCallToolResult = typeof ModernCallToolResult.Type

/**
 * The `tools/call` result schema a revision's caller accepts. Revisions before 2025-06-18 have no
 * structured content at all (a downgraded result carries none), so the stricter legacy schema
 * serves them too.
 */
export const callToolResultFor = (revision: Revision): typeof LegacyCallToolResult | typeof ModernCallToolResult =>
  isModernRevision(revision) ? ModernCallToolResult : LegacyCallToolResult
