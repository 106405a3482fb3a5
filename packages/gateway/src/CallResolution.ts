/**
 * The one resolution of a called tool name: host-visible name → server → upstream name, held to
 * the server's `tools`/`excludeTools` filter → the tool's listing entry (and with it its input
 * schema). Every path that names a tool — a call, its retry, the `Mcp-Param-*` header check's
 * schema lookup, `/v1/call`'s argument check, describe — resolves through here (by way of
 * GatewayTools.resolveTool), so none can reach a tool another would refuse.
 *
 * Plain synchronous functions: this runs on every call.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type { GatewayServer } from "./GatewayModel.js"
import * as Names from "./Names.js"

/** Where a host-visible name points, before the server's listing is consulted. */
export interface Located {
  readonly server: GatewayServer
  /** The tool's name at its upstream. */
  readonly name: string
}

/**
 * A resolved call: where the name points and the visible tool there, as its server lists it
 * (upstream name). A class, so that one handed back from outside the gateway (the Server's
 * `Caller.resolved`, opaque to it) can be told from anything else by `instanceof`.
 *
 * It is made once per call and may be carried to the call (the header check's schema lookup
 * makes it, the call uses it): `servers` is the server table it was resolved in, and a reload
 * replaces that table (and builds every server anew, filters included), so a resolution that
 * predates a reload no longer matches and is made again (`current`). What it does not pin is
 * the upstream's own listing: a tool the upstream drops between the lookup and the call is
 * refused by the upstream, as it would be if it dropped it just after a call's own resolution.
 */
export class Resolution implements Located {
  constructor(
    readonly server: GatewayServer,
    readonly name: string,
    readonly tool: JsonObject,
    /** The host-visible name it was resolved from (`Names.qualify(server, name)`). */
    readonly asked: string,
    /** The server table it was resolved in. */
    readonly servers: ReadonlyArray<GatewayServer>
  ) {}

  /** The input schema the tool declares (undefined when it declares none). */
  get inputSchema(): unknown {
    return this.tool.inputSchema
  }
}

/** Whether the server's filter lets hosts see its tool `name` (an upstream name). */
export const allows = (server: GatewayServer, name: string): boolean => {
  const filter = server.configured.filter
  return filter === undefined || filter.all || filter.allows(name)
}

/**
 * The server and upstream name behind a host-visible name, or undefined when no server offers it
 * or its server's filter hides it: a hidden tool is as unknown as one that does not exist.
 */
export const locate = (servers: ReadonlyArray<GatewayServer>, name: string): Located | undefined => {
  const found = Names.resolve(servers, name)
  return found === undefined || !allows(found.server, found.name) ? undefined : found
}

/** Whether the servers a resolution was made in are still the ones in effect (no reload since). */
export const current = (resolution: Resolution, servers: ReadonlyArray<GatewayServer>): boolean => resolution.servers === servers

/** A resolution of `located` (found in `servers` by the host-visible name `asked`) to `tool`. */
export const resolved = (servers: ReadonlyArray<GatewayServer>, asked: string, located: Located, tool: JsonObject): Resolution =>
  new Resolution(located.server, located.name, tool, asked, servers)

/**
 * The resolution a caller carried for the tool it calls: only the gateway's own, and only for the
 * name called (a meta-tool's call names another tool than its request did).
 */
export const carried = (resolved: unknown, name: string): Resolution | undefined =>
  resolved instanceof Resolution && resolved.asked === name ? resolved : undefined

/** The host-visible name of a call's tool, named or already resolved. */
export const hostName = (tool: string | Resolution): string => (typeof tool === "string" ? tool : tool.asked)
