/**
 * One upstream server as configured: how to reach it (a stdio command or a Streamable HTTP URL)
 * and its own `protocol` preference. Config loading produces these; the transports, the prober
 * and the era cache consume them.
 */
import * as Schema from "effect/Schema"
import { PreferenceFromString } from "./era/Preference.js"

/** An upstream run as a child process speaking NDJSON on stdin/stdout. */
export class StdioDefinition extends Schema.Class<StdioDefinition>("@mcpx-fx/upstream/StdioDefinition")({
  transport: Schema.Literal("stdio"),
  /** The server's name as configured (the namespace comes from it). */
  name: Schema.String,
  command: Schema.String,
  args: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  env: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), { default: () => ({}) }),
  cwd: Schema.optional(Schema.String),
  /** The server's own `protocol` key; it overrides `upstream.protocol`. */
  protocol: Schema.optional(PreferenceFromString)
}) {}

/**
 * OAuth 2.1 for an HTTP upstream (config `"auth": {"type": "oauth", …}`): the client identity to use
 * when the server's authorization server has one registered for mcpx-fx, the scopes to ask for beyond
 * what the server names, and the loopback port the login listens on. Everything else is discovered.
 */
export class OAuthSettings extends Schema.Class<OAuthSettings>("@mcpx-fx/upstream/OAuthSettings")({
  type: Schema.Literal("oauth"),
  /** A pre-registered client id; without one mcpx-fx uses a Client ID Metadata Document or registers itself. */
  clientId: Schema.optional(Schema.String),
  /** The pre-registered client's secret (confidential clients only). */
  clientSecret: Schema.optional(Schema.String),
  /**
   * The HTTPS URL of a Client ID Metadata Document describing mcpx-fx (one you host), used as the
   * client id where the authorization server takes such documents and no clientId is set.
   */
  clientMetadataUrl: Schema.optional(Schema.String),
  /** Scopes requested in addition to the ones the server asks for. */
  scopes: Schema.optional(Schema.Array(Schema.String)),
  /** The loopback port `auth login` listens on for the redirect (default: one the system picks). */
  redirectPort: Schema.optional(Schema.Number)
}) {}

/** An upstream reached over Streamable HTTP (or, as a fallback, the 2024-11-05 HTTP+SSE transport). */
export class HttpDefinition extends Schema.Class<HttpDefinition>("@mcpx-fx/upstream/HttpDefinition")({
  transport: Schema.Literal("http"),
  name: Schema.String,
  url: Schema.String,
  headers: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), { default: () => ({}) }),
  protocol: Schema.optional(PreferenceFromString),
  /** How to authorize when the server asks (a 401); absent, only `headers` are sent. */
  auth: Schema.optional(OAuthSettings)
}) {}

/** Either kind of upstream definition. */
export const ServerDefinition = Schema.Union(StdioDefinition, HttpDefinition)
/** Either kind of upstream definition. */
export type ServerDefinition = typeof ServerDefinition.Type

/**
 * The fields that identify a server process for the era cache: command, args, env, cwd,
 * transport, url, headers. Leasing knobs and the name are deliberately left out, so renaming a
 * server or changing its pool size does not forget its era.
 */
export const processIdentity = (def: ServerDefinition): Record<string, unknown> =>
  def.transport === "stdio"
    ? { transport: "stdio", command: def.command, args: def.args, env: def.env, ...(def.cwd !== undefined ? { cwd: def.cwd } : {}) }
    : { transport: "http", url: def.url, headers: def.headers }
