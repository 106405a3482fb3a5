/**
 * @mcpx-fx/protocol: the pure MCP wire model, shared by the upstream client and the host-facing
 * server. No I/O.
 */
/** Revisions, eras and negotiation helpers. */
export * as Revision from "./Revision.js"
/** JSON-RPC and MCP error codes. */
export * as ErrorCode from "./ErrorCode.js"
/** Plain JSON helpers: the object guard, open records, structural equality. */
export * as Json from "./Json.js"
/** JSON-RPC 2.0 envelopes, the frame decoder that keeps raw JSON, and response builders. */
export * as JsonRpc from "./JsonRpc.js"
