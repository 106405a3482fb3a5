/**
 * @mcpx-fx/gateway: the product — configuration, settings, the gateway core (namespaces,
 * aggregated listings, routed calls, changes), the /v1 API and the daemon's state files.
 */
/** The settings registry and its resolved values with their sources. */
export * as Settings from "./Settings.js"
/** The `mcpServers` config file: discovery, JSONC, merge, `${VAR}` expansion, server definitions. */
export * as Config from "./Config.js"
/** Where mcpx-fx keeps its state. */
export * as StateDir from "./StateDir.js"
/** The gateway core: configured servers under namespaces, aggregated listings, routed calls. */
export * as Gateway from "./Gateway.js"
/** How upstream names appear to hosts (`<namespace>__<name>`, `mcpx://<namespace>/<uri>`). */
export * as Names from "./Names.js"
/** The edit distance every "did you mean" measures with. */
export * as EditDistance from "./EditDistance.js"
/** The host-facing Server's Backend over the in-process gateway, for `mcpx-fx serve`. */
export * as GatewayBackend from "./GatewayBackend.js"
/** The `/v1` HTTP API definition (routes, bodies, errors with statuses) for the daemon, OpenAPI and clients. */
export * as Api from "./Api.js"
/** The `/v1` API implemented over the gateway, and the shaping the CLI shares with it. */
export * as ApiHandlers from "./ApiHandlers.js"
/** Tool input schemas by host-visible name, kept until a tools list_changed (for Mcp-Param-* checks). */
export * as ToolSchemas from "./ToolSchemas.js"
/** The daemon's files in the state directory: the one-daemon lock, `daemon.json`, the socket path. */
export * as DaemonFiles from "./DaemonFiles.js"
/** Lifecycle events (`server.start`, `server.stop`, `server.era.stale`, …) as `/v1/events` streams them. */
export * as Events from "./Events.js"
/** What a pending call is made of: its questions, moves, refusals and bounds. */
export * as PendingQuestions from "./PendingQuestions.js"
/** Upstream calls kept alive behind an `input_required`, and questions held for whoever answers them by id. */
export * as PendingCalls from "./PendingCalls.js"
/** What a caller asked through `input_required` may be asked, in 2026-07-28's words, and whether its answers fit. */
export * as QuestionFit from "./QuestionFit.js"
/** The `/v1/ask` and `/v1/elicit` routes. */
export * as AskApi from "./AskApi.js"
/** Calls that may ask, for callers that are not MCP hosts (`/v1/ask`, `mcpx-fx call`). */
export * as Ask from "./Ask.js"
/** The `/v1` API's own errors with their statuses. */
export * as ApiErrors from "./ApiErrors.js"
