/**
 * @mcpx-fx/upstream: mcpx-fx as an MCP client of upstream servers of any era, over stdio or
 * Streamable HTTP.
 */
/** `upstream.protocol` values, aliases and normalisation. */
export * as Preference from "./era/Preference.js"
/** Configured upstream servers (stdio command or HTTP URL). */
export * as ServerDefinition from "./ServerDefinition.js"
/** Which protocol version to offer and accept, per era (-32022 retries, initialize counter-offers). */
export * as Negotiator from "./era/Negotiator.js"
/** Remembered upstream eras, in memory and in `<stateDir>/upstream-eras.json`. */
export * as EraCache from "./era/EraCache.js"
/** Upstream sessions by server, scope key and era lane: sharing, limits, idle reaping, cooldowns, `follow` lanes. */
export * as Pool from "./pool/Pool.js"
/** One live connection to an upstream: the contract and the typed transport errors. */
export * as Transport from "./transport/Transport.js"
/** The Transport that picks stdio, Streamable HTTP or HTTP+SSE from a server definition. */
export * as TransportLayer from "./transport/TransportLayer.js"
/** The stdio transport: a child process speaking NDJSON. */
export * as StdioTransport from "./transport/StdioTransport.js"
/** The Streamable HTTP transport, both eras. */
export * as HttpTransport from "./transport/HttpTransport.js"
/** The deprecated 2024-11-05 HTTP+SSE transport, the fallback for servers that refuse Streamable HTTP. */
export * as HttpSseTransport from "./transport/HttpSseTransport.js"
/** Decides an upstream's era per `upstream.protocol` and reports what decided it. */
export * as Prober from "./era/Prober.js"
/** A negotiated upstream connection with one request surface for both eras. */
export * as Session from "./session/Session.js"
/** Answering what upstream servers ask (ping, roots, elicitation, sampling). */
export * as Questions from "./session/Questions.js"
/** The mirrored Mcp-* headers of modern HTTP requests. */
export * as ModernHeaders from "./transport/ModernHeaders.js"
/** The upstream process groups a daemon started, recorded so the next one can stop what a crash left behind. */
export * as ProcessGroups from "./os/ProcessGroups.js"
/** What Linux's /proc says about a process: start time, process group, environment, command line. */
export * as ProcessTable from "./os/ProcessTable.js"
/** State files read without blocking or without bound, and written atomically. */
export * as StateFile from "./os/StateFile.js"
