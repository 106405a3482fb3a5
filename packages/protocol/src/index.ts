/**
 * @mcpx-fx/protocol: the pure MCP wire model, shared by the upstream client and the host-facing
 * server. No I/O.
 */
/** Revisions, eras and negotiation helpers. */
export * as Revision from "./Revision.js"
/** Schemas for revision and era names. */
export * as RevisionSchema from "./RevisionSchema.js"
/** JSON-RPC and MCP error codes. */
export * as ErrorCode from "./ErrorCode.js"
/** Plain JSON helpers: the object guard, open records, structural equality. */
export * as Json from "./Json.js"
/** JSON-RPC 2.0 envelopes, the frame decoder that keeps raw JSON, and response builders. */
export * as JsonRpc from "./JsonRpc.js"
/** MCP method names and which revision has which. */
export * as Method from "./Method.js"
/** Client and server identity (`Implementation`) and icons. */
export * as Implementation from "./Implementation.js"
/** Client and server capabilities per era, and their projection onto a revision. */
export * as Capabilities from "./Capabilities.js"
/** Reserved `_meta` keys and validation of a modern request's `_meta`. */
export * as Meta from "./Meta.js"
/** Common result fields: resultType, ttlMs, cacheScope, pagination. */
export * as Result from "./Result.js"
/** Content blocks: text, image, audio, embedded resource, resource link. */
export * as Content from "./Content.js"
/** `initialize` and `server/discover`. */
export * as Lifecycle from "./Lifecycle.js"
/** `tools/list` and `tools/call`, with per-era structured content. */
export * as Tools from "./Tools.js"
/** Resources: list, templates, read, legacy subscribe, updated. */
export * as Resources from "./Resources.js"
/** Prompts: list and get. */
export * as Prompts from "./Prompts.js"
/** `completion/complete`. */
export * as Completion from "./Completion.js"
/** `elicitation/create` in form and URL modes. */
export * as Elicitation from "./Elicitation.js"
/** `sampling/createMessage`. */
export * as Sampling from "./Sampling.js"
/** `roots/list`. */
export * as Roots from "./Roots.js"
/** MRTR: `input_required` results and retry params. */
export * as InputRequired from "./InputRequired.js"
/** `subscriptions/listen`, its acknowledgement and stream tagging. */
export * as Subscriptions from "./Subscriptions.js"
/** Cancellation, progress, log and list_changed notifications. */
export * as Notifications from "./Notifications.js"
/** The experimental core tasks of 2025-11-25. */
export * as Tasks from "./Tasks.js"
/** The 2026-07-28 tasks extension. */
export * as TasksExtension from "./TasksExtension.js"
/** Data shapes and builders for -32020, -32021 and -32022. */
export * as ErrorData from "./ErrorData.js"
/** Mirrored modern headers: their names, what an outgoing request sends, and the checks of an incoming one. */
export * as HeaderCodec from "./HeaderCodec.js"
/** Header values: the `=?base64?…?=` sentinel encoding, and argument values as header text. */
export * as HeaderValue from "./HeaderValue.js"
/** A tool's `x-mcp-header` annotations: which arguments it mirrors, and whether it may be listed. */
export * as HeaderParams from "./HeaderParams.js"
/** Which era an HTTP POST belongs to, with the JSON-RPC error when it is refused. */
export * as Classify from "./Classify.js"
/** The HTTP status of a modern response, from its JSON-RPC error code. */
export * as HttpStatus from "./HttpStatus.js"
/** Result shaping: the modern envelope, downgrade for legacy callers, upgrade of legacy results. */
export * as Shape from "./Shape.js"
