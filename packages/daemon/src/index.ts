/**
 * @mcpx-fx/daemon: what the long-running daemon adds around the gateway — the `/v1` HTTP API,
 * `/v1/ask` and `/v1/elicit` for callers that are not MCP hosts, lifecycle events, the config
 * watcher, and the daemon's files and token.
 */
/** The `/v1` HTTP API definition (routes, bodies, errors with statuses) for the daemon, OpenAPI and clients. */
export * as Api from "./Api.js"
/** The `/v1` API implemented over the gateway, and the shaping the CLI shares with it. */
export * as ApiHandlers from "./ApiHandlers.js"
/** The `/v1` API's own errors with their statuses. */
export * as ApiErrors from "./ApiErrors.js"
/** The `/v1/ask` and `/v1/elicit` routes. */
export * as AskApi from "./AskApi.js"
/** Calls that may ask, for callers that are not MCP hosts (`/v1/ask`, `mcpx-fx call`). */
export * as Ask from "./Ask.js"
/** Lifecycle events (`server.start`, `server.stop`, `server.era.stale`, …) as `/v1/events` streams them. */
export * as Events from "./Events.js"
/** The daemon's files in the state directory: the one-daemon lock, `daemon.json`, the socket path. */
export * as DaemonFiles from "./DaemonFiles.js"
/** Reloads on config file changes and SIGHUP, coalesced. */
export * as ConfigWatcher from "./ConfigWatcher.js"
