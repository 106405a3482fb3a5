/** The conformance fixture's resources: static text and binary, a watched one, and a template. */
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/server"
import { PNG_BASE64 } from "./ConformanceContent.js"
import type { SurfaceContext } from "./V2Host.js"

export const registerResources = (mcp: McpServer, era: SurfaceContext["era"]) => {
  mcp.registerResource(
    "static-text",
    "test://static-text",
    { description: "A static text resource", mimeType: "text/plain" },
    (uri) => ({
      contents: [{ uri: uri.href, mimeType: "text/plain", text: "This is the content of the static text resource." }]
    })
  )
  mcp.registerResource(
    "static-binary",
    "test://static-binary",
    { description: "A static binary resource (PNG)", mimeType: "image/png" },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: "image/png", blob: PNG_BASE64 }] })
  )
  mcp.registerResource(
    "watched-resource",
    "test://watched-resource",
    { description: "A resource clients may subscribe to", mimeType: "text/plain" },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "Watched resource content." }] })
  )
  mcp.registerResource(
    "template-data",
    new ResourceTemplate("test://template/{id}/data", { list: undefined }),
    { description: "Data for an id", mimeType: "application/json" },
    (uri, variables) => {
      const id = String(variables["id"])
      return {
        contents: [
          {
            uri: uri.href,
            mimeType: "application/json",
            text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` })
          }
        ]
      }
    }
  )
  // 2026-07-28 removed resources/(un)subscribe (listen streams replace them), so only 2025-era
  // instances take these requests; the modern instance must answer them -32601.
  if (era === "legacy") {
    const subscribed = new Set<string>()
    mcp.server.registerCapabilities({ resources: { subscribe: true } })
    mcp.server.setRequestHandler("resources/subscribe", (request) => {
      subscribed.add(request.params.uri)
      return {}
    })
    mcp.server.setRequestHandler("resources/unsubscribe", (request) => {
      subscribed.delete(request.params.uri)
      return {}
    })
  }
}
