/**
 * @mcpx-fx/gateway: the product — configuration, settings, and (as they land) the gateway core,
 * the /v1 API and the daemon.
 */
/** The settings registry and its resolved values with their sources. */
export * as Settings from "./Settings.js"
/** The `mcpServers` config file: discovery, JSONC, merge, `${VAR}` expansion, server definitions. */
export * as Config from "./Config.js"
/** Where mcpx-fx keeps its state. */
export * as StateDir from "./StateDir.js"
