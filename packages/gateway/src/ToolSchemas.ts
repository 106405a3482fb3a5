/**
 * The input schema of the tool a modern `tools/call` names, for checking its `Mcp-Param-*` headers
 * against the tool's `x-mcp-header` annotations. The name goes through the call's one resolution
 * (Gateway.resolveTool: read in place from the live listing, else only the called tool's server
 * is listed through the ToolCatalog), so a call to one server never waits on another being started
 * or listed, and a tool the call could not reach has no schema either.
 *
 * The lookup asks as the call's own caller (its validated `_meta`), never as nobody: a server it
 * has to list is started for the lane and scope the call itself will use, not for a second one.
 * Being the call's own, its resolution is the call's too: the Server hands it back with the call
 * (`Caller.resolved`), and GatewayBackend calls by it rather than resolving the name again.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Gateway } from "./Gateway.js"
import type { Caller } from "./GatewayModel.js"
import * as GatewayBackend from "./GatewayBackend.js"
import * as Meta from "@mcpx-fx/protocol/Meta"
import * as Revision from "@mcpx-fx/protocol/Revision"
import type { SchemaLookup as HostSchemaLookup } from "@mcpx-fx/server/HttpHost"

/** Resolves a tool by the name hosts call it by, for its `inputSchema`; undefined when no server offers it. */
export type SchemaLookup = HostSchemaLookup

/** The gateway's caller for a schema lookup: the modern caller the Server will make of the same `_meta`. */
const callerOf = (meta: Meta.RequestMeta, sessionId: string | undefined): Caller => {
  const revision = meta[Meta.ProtocolVersionKey]
  return GatewayBackend.toGatewayCaller({
    // HttpHost asks only for a request whose `_meta` the Server accepts, whose version is a modern one.
    revision: Revision.isModernRevision(revision) ? revision : Revision.LatestModernRevision,
    era: "modern",
    clientCapabilities: meta[Meta.ClientCapabilitiesKey],
    ...(sessionId === undefined ? {} : { sessionId })
  })
}

/**
 * A lookup over `gateway`: the call's resolution, which the Server hands back with the call
 * (`Caller.resolved`) so GatewayBackend does not resolve the name again. A tool that cannot be
 * resolved (unknown, hidden, its server down) has no schema to check against and no resolution:
 * the call itself then resolves it and says what is wrong.
 */
export const make = (gateway: Gateway["Type"]): Effect.Effect<SchemaLookup, never, Scope.Scope> =>
  Effect.succeed((tool, meta, sessionId) => {
    // Nearly every call names a tool the live listing has: the same resolution, made in place.
    const known = gateway.peekTool(tool)
    if (known !== undefined) return Effect.succeed(known)
    return gateway.resolveTool(callerOf(meta, sessionId), tool, { suggest: false }).pipe(
      Effect.orElseSucceed(() => undefined)
    )
  })
