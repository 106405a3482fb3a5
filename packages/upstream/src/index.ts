/**
 * @mcpx-fx/upstream: mcpx-fx as an MCP client of upstream servers of any era, over stdio or
 * Streamable HTTP.
 */
/** `upstream.protocol` values, aliases and normalisation. */
export * as Preference from "./Preference.js"
/** Configured upstream servers (stdio command or HTTP URL). */
export * as ServerDefinition from "./ServerDefinition.js"
/** Which protocol version to offer and accept, per era (-32022 retries, initialize counter-offers). */
export * as Negotiator from "./Negotiator.js"
/** Remembered upstream eras, in memory and in `<stateDir>/upstream-eras.json`. */
export * as EraCache from "./EraCache.js"
/** Upstream sessions by server, scope key and era lane: sharing, limits, idle reaping, cooldowns, `follow` lanes. */
export * as Pool from "./Pool.js"
