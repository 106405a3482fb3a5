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

/** A resolved call: where the name points and the visible tool there, as its server lists it (upstream name). */
export interface Resolution extends Located {
  readonly tool: JsonObject
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

/** A resolution of `located` to `tool`. */
export const resolved = (located: Located, tool: JsonObject): Resolution => ({ server: located.server, name: located.name, tool })

/** The input schema a resolved tool declares (undefined when it declares none). */
export const inputSchema = (resolution: Resolution): unknown => resolution.tool.inputSchema

/** The host-visible name of a call's tool, named or already resolved. */
export const hostName = (tool: string | Resolution): string => (typeof tool === "string" ? tool : Names.qualify(tool.server, tool.name))
