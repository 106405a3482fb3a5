/**
 * What the Gateway is made of and answers with: its servers as it runs them, its callers, its
 * listings and reports, the changes it publishes, and its errors.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type * as Revision from "@mcpx-fx/protocol/Revision"
import type { EraRecord } from "@mcpx-fx/upstream/era/EraCache"
import type { AbortHook } from "@mcpx-fx/cancel/Abortable"
import type { PoolServer } from "@mcpx-fx/upstream/pool/PoolModel"
import type { PoolError } from "@mcpx-fx/upstream/pool/PoolEvents"
import type { Preference } from "@mcpx-fx/upstream/era/Preference"
import type { ProbeError, ProbeReport } from "@mcpx-fx/upstream/era/ProbeModel"
import type { CallContext } from "@mcpx-fx/upstream/session/SessionModel"
import type { SessionError } from "@mcpx-fx/upstream/session/SessionErrors"
import * as Duration from "effect/Duration"
import * as Schema from "effect/Schema"
import type { ConfiguredServer } from "@mcpx-fx/config/Config"
import type { Observation } from "./CallObservation.js"
import type * as Names from "./Names.js"
import type { CatalogServer } from "./ToolCatalog.js"

/** mcpx-fx's identity towards upstreams. */
export const ClientInfo = { name: "mcpx-fx", version: "0.1.0" } as const

/**
 * Capabilities mcpx-fx declares to upstreams when a call brings none of its own. A shared upstream
 * session outlives the host that started it, so it declares what a host might answer: an
 * elicitation is cancelled and roots are none when nobody can be asked, and sampling is passed to
 * a host that declared it and refused for one that did not.
 */
export const DefaultClientCapabilities: JsonObject = { elicitation: { form: {} }, roots: {}, sampling: {} }

/** One configured server as the gateway runs it. */
export interface GatewayServer extends Names.Named {
  readonly name: string
  readonly configured: ConfiguredServer
  readonly pool: PoolServer
  readonly preference: Preference
  readonly callTimeout: Duration.Duration
  readonly scope: "global" | "session" | "call"
  /** How the ToolCatalog knows it. */
  readonly catalog: CatalogServer
}

/** Who is asking, and how to reach them with questions. */
export interface Caller extends CallContext {
  /** A caller-provided session identity (`dev.mcpx/session`, a host's session id, a legacy session). */
  readonly sessionId?: string
  /** The revision the caller reached mcpx-fx with; none (CLI, /v1) counts as modern. */
  readonly revision?: Revision.Revision
  /**
   * Called as each upstream call begins with a way to end it at once because the caller cannot
   * answer what it asks (a modern caller that declared nothing it can be asked); answers how to
   * let go of it, called when the call ends.
   */
  readonly cutShort?: CutShort
  /**
   * The tool call's one observation (CallObserver.ts), brought by whoever observes it (the
   * Backend, the daemon's `/v1` routes) for the Gateway to fill in rather than time it again.
   */
  readonly observation?: Observation
}

/** A name that no configured server offers; `suggestions` are the closest known names. */
export class UnknownName extends Schema.TaggedError<UnknownName>("@mcpx-fx/gateway/UnknownName")("UnknownName", {
  kind: Schema.Literal("tool", "prompt", "resource", "server"),
  name: Schema.String,
  suggestions: Schema.Array(Schema.String)
}) {
  override get message(): string {
    const hint = this.suggestions.length > 0 ? `; did you mean ${this.suggestions.join(", ")}?` : ""
    return `unknown ${this.kind} ${JSON.stringify(this.name)}${hint}`
  }
}

/** A call ran past `pool.callTimeout` and was cancelled upstream. */
export class CallTimedOut extends Schema.TaggedError<CallTimedOut>("@mcpx-fx/gateway/CallTimedOut")("CallTimedOut", {
  server: Schema.String,
  method: Schema.String,
  timeoutMs: Schema.Number
}) {
  override get message(): string {
    return `${this.server} did not answer ${this.method} within ${Duration.format(Duration.millis(this.timeoutMs))}; the call was cancelled`
  }
}

/** A server that could not be listed, and why (shown beside the others' results). */
export interface ListingFailure {
  readonly server: string
  readonly message: string
}

/** An aggregated listing. */
export interface Listing {
  readonly items: ReadonlyArray<JsonObject>
  readonly failures: ReadonlyArray<ListingFailure>
  /** Of a tools listing: the `tools`/`excludeTools` patterns that match none of their server's tools. */
  readonly warnings?: ReadonlyArray<ListingFailure>
}

/** A visible tool (its host-visible name) and the server it comes from. */
export interface KnownTool {
  readonly server: GatewayServer
  readonly tool: JsonObject
}

/** The tools known without starting a server, and the servers nothing is known of yet. */
/** How far `knownTools` may go to know a server's tools. */
export interface KnownToolsOptions {
  /** List every server, starting those not started. */
  readonly refresh: boolean
  /** List no server, started or not: only what is known already (the live listing, the schema cache). */
  readonly cachedOnly?: boolean
}

export interface KnownTools {
  readonly items: ReadonlyArray<KnownTool>
  /** Servers never listed (not started in this process and not in the schema cache). */
  readonly unlisted: ReadonlyArray<string>
  readonly failures: ReadonlyArray<ListingFailure>
}

/** What `mcpx-fx protocol` and `GET /v1/protocol` report for one upstream. */
export interface ServerProtocol {
  readonly server: string
  readonly namespace: string
  readonly preference: Preference
  readonly era: Revision.Era | null
  readonly negotiated: string | null
  readonly eraSource: ProbeReport["eraSource"] | null
  readonly cached: EraRecord | null
}

/**
 * A change upstream, as hosts are told it: which list changed, or which resource (its URI re-homed
 * as `mcpx://<namespace>/<uri>`) was updated, and the server it came from.
 */
export type GatewayChange =
  | { readonly _tag: "ToolsListChanged"; readonly server: string }
  | { readonly _tag: "PromptsListChanged"; readonly server: string }
  | { readonly _tag: "ResourcesListChanged"; readonly server: string }
  | { readonly _tag: "ResourceUpdated"; readonly server: string; readonly uri: string }

/** The configuration cannot be run as given (e.g. prefixing off with several servers). */
export class GatewayConfigError extends Schema.TaggedError<GatewayConfigError>("@mcpx-fx/gateway/GatewayConfigError")(
  "GatewayConfigError",
  { detail: Schema.String }
) {
  override get message(): string {
    return this.detail
  }
}

/** The only questions left are ones the caller did not declare it can take. */
export class CapabilitiesLacking extends Schema.TaggedError<CapabilitiesLacking>("@mcpx-fx/gateway/CapabilitiesLacking")(
  "CapabilitiesLacking",
  { requiredCapabilities: Schema.Record({ key: Schema.String, value: Schema.Unknown }) }
) {
  override get message(): string {
    return `the upstream asked for ${Object.keys(this.requiredCapabilities).join(", ")}, which the caller did not declare`
  }
}

/** Registers the way to end a call with `CapabilitiesLacking`; answers how to let go of it. */
export type CutShort = AbortHook<CapabilitiesLacking>

/** What a routed call can fail with (the upstream's own errors pass through as they are). */
export type GatewayCallError =
  | UnknownName
  | CallTimedOut
  | CapabilitiesLacking
  | PoolError
  | SessionError
  | ProbeError
