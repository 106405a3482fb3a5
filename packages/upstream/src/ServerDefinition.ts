/**
 * One upstream server as configured: how to reach it (a stdio command or a Streamable HTTP URL)
 * and its own `protocol` preference. Config loading produces these; the transports, the prober
 * and the era cache consume them.
 */
import * as Schema from "effect/Schema"
import { PreferenceFromString } from "./Preference.js"

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

/** An upstream reached over Streamable HTTP (or, as a fallback, the 2024-11-05 HTTP+SSE transport). */
export class HttpDefinition extends Schema.Class<HttpDefinition>("@mcpx-fx/upstream/HttpDefinition")({
  transport: Schema.Literal("http"),
  name: Schema.String,
  url: Schema.String,
  headers: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), { default: () => ({}) }),
  protocol: Schema.optional(PreferenceFromString)
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
