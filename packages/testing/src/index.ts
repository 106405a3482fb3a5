/**
 * @mcpx-fx/testing: upstream fixtures (our own odd servers and servers built on the official
 * SDKs), helpers to start them, and conformance drivers. Never imported by product code.
 */
/** Paths to bundled fixtures and helpers that start them. */
export * as Fixtures from "./Fixtures.js"
