/**
 * @mcpx-fx/server: mcpx-fx as an MCP server, in every revision at once, in front of a Backend.
 */
/** The port the Server asks: listings, calls, prompts, resources, completion, and their typed errors. */
export * as Backend from "./Backend.js"
/** mcpx-fx's own MRTR requestState: HMAC-signed, expiring, bound to method and params, never to a session. */
export * as RequestState from "./RequestState.js"
/** The transport-free protocol core: one message in, at most one response out, for both eras. */
export * as Server from "./Server.js"
/** Change delivery, transport-free: legacy list_changed and resources/subscribe, modern subscriptions/listen. */
export * as Subscriptions from "./Subscriptions.js"
/** The stdio host transport: concurrent requests, cancellation, batches by revision, drain at end of input. */
export * as StdioHost from "./StdioHost.js"
/** The Streamable HTTP host transport: the `/mcp` endpoint for both eras, legacy sessions, Origin policy. */
export * as HttpHost from "./HttpHost.js"
/** The fleet port: several daemons as one gateway, reaching the process that holds a live call. */
export * as Fleet from "./Fleet.js"
