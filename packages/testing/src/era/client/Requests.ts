/** Frames and headers a test sends to the era fixture, in both eras' shapes. */
import * as Revision from "@mcpx-fx/protocol/Revision"
import type { Id, JsonObject } from "../Wire.js"

export const meta = (capabilities: JsonObject = {}, version: string = Revision.LatestModernRevision): JsonObject => ({
  "io.modelcontextprotocol/protocolVersion": version,
  "io.modelcontextprotocol/clientCapabilities": capabilities,
  "io.modelcontextprotocol/clientInfo": { name: "era-test", version: "0.0.0" }
})

/** Params of a modern request: `extra` plus the per-request `_meta`. */
export const modern = (extra: JsonObject = {}, capabilities: JsonObject = {}, version?: string): JsonObject => ({
  ...extra,
  _meta: meta(capabilities, version)
})

export const initialize = (version: string = Revision.LatestLegacyRevision, capabilities: JsonObject = {}): JsonObject => ({
  protocolVersion: version,
  capabilities,
  clientInfo: { name: "era-test", version: "0.0.0" }
})

export const call = (name: string, args: JsonObject = {}): JsonObject => ({ name, arguments: args })

export const rpc = (id: Id, method: string, params?: JsonObject): JsonObject => ({
  jsonrpc: "2.0",
  id,
  method,
  ...(params === undefined ? {} : { params })
})

export const notification = (method: string, params?: JsonObject): JsonObject => ({
  jsonrpc: "2.0",
  method,
  ...(params === undefined ? {} : { params })
})

/** The mirrored headers a modern POST carries. */
export const modernHeaders = (method: string, name?: string, version: string = Revision.LatestModernRevision) => ({
  "mcp-protocol-version": version,
  "mcp-method": method,
  ...(name === undefined ? {} : { "mcp-name": name })
})
