/**
 * @mcpx-fx/protocol: the pure MCP wire model, shared by the upstream client and the host-facing
 * server. No I/O.
 */
/** Revisions, eras and negotiation helpers. */
export * as Revision from "./Revision.js"
/** JSON-RPC and MCP error codes. */
export * as ErrorCode from "./ErrorCode.js"
