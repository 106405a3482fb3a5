/**
 * @mcpx-fx/gateway: the gateway core — configured servers under namespaces, aggregated listings,
 * routed calls and their changes, the tool catalog and search, and upstream calls kept alive
 * behind a question. Configuration lives in `@mcpx-fx/config`, the daemon's `/v1` API in
 * `@mcpx-fx/daemon`.
 */
/** The gateway core: configured servers under namespaces, aggregated listings, routed calls. */
export * as Gateway from "./Gateway.js"
/** How upstream names appear to hosts (`<namespace>__<name>`, `mcpx://<namespace>/<uri>`). */
export * as Names from "./Names.js"
/** The host-facing Server's Backend over the in-process gateway, for `mcpx-fx serve`. */
export * as GatewayBackend from "./GatewayBackend.js"
/** Tool input schemas by host-visible name, kept until a tools list_changed (for Mcp-Param-* checks). */
export * as ToolSchemas from "./ToolSchemas.js"
/** Every tool of every server, cached per generation, and the search over it. */
export * as ToolCatalog from "./ToolCatalog.js"
export * as ToolSearch from "./ToolSearch.js"
/** What a pending call is made of: its questions, moves, refusals and bounds. */
export * as PendingQuestions from "./PendingQuestions.js"
/** Upstream calls kept alive behind an `input_required`, and questions held for whoever answers them by id. */
export * as PendingCalls from "./PendingCalls.js"
/** Pending calls across a fleet: a retry of a call another instance holds is sent to it. */
export * as FleetPending from "./FleetPending.js"
/** What a caller asked through `input_required` may be asked, in 2026-07-28's words, and whether its answers fit. */
export * as QuestionFit from "./QuestionFit.js"
/** Secrets taken out of what the gateway shows (errors, URLs, commands). */
export * as Redact from "./Redact.js"
