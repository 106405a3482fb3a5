/**
 * An OAuth-protected MCP server on 127.0.0.1 for tests: the official SDK's modern handler
 * (`@modelcontextprotocol/server` 2.x, tools `whoami` and `write_note`) behind a bearer check
 * against an AuthServer, with its protected resource metadata (RFC 9728) at the path-based
 * well-known URI. A 401 names that metadata in `WWW-Authenticate`; a tool that needs a scope the
 * token lacks gets a 403 `insufficient_scope` naming the scopes it wants. `moveTo` points the
 * metadata at another authorization server, whose tokens alone are accepted from then on.
 */
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as z from "zod"
import { toRequest, writeResponse } from "../sdk/HttpHost.js"
import type { AuthServer } from "./AuthServer.js"

export interface ProtectedServerOptions {
  /** The scopes the metadata lists. */
  readonly scopesSupported?: ReadonlyArray<string>
  /** A tool and the scope calling it needs (step-up). */
  readonly toolScopes?: Readonly<Record<string, string>>
}

export interface ProtectedServer {
  /** The MCP endpoint. */
  readonly url: string
  /** How many MCP requests were refused with 401 and 403. */
  readonly refusals: { readonly unauthorized: number; readonly forbidden: number }
  /** From now on the metadata names `next`, and only its tokens are accepted. */
  readonly moveTo: (next: AuthServer) => void
  readonly close: () => Promise<void>
}

const surface = () => {
  const mcp = new McpServer({ name: "protected", version: "1.0.0" })
  mcp.registerTool("whoami", { description: "Says hello to an authorized caller", inputSchema: z.object({}) }, () => ({
    content: [{ type: "text", text: "hello, authorized caller" }]
  }))
  mcp.registerTool("write_note", { description: "Needs the write scope", inputSchema: z.object({}) }, () => ({
    content: [{ type: "text", text: "note written" }]
  }))
  return mcp
}

/** Starts the server on an ephemeral loopback port, trusting `authServer`. */
export const startProtectedServer = async (authServer: AuthServer, options: ProtectedServerOptions = {}): Promise<ProtectedServer> => {
  let trusted = authServer
  let origin = ""
  const refusals = { unauthorized: 0, forbidden: 0 }
  const handler = createMcpHandler(() => surface(), { legacy: "reject" })
  const metadataUrl = () => `${origin}/.well-known/oauth-protected-resource/mcp`

  const server = createServer((req, res) => {
    const abort = new AbortController()
    res.on("close", () => {
      if (!res.writableFinished) abort.abort()
    })
    const handle = async () => {
      const path = new URL(req.url ?? "/", origin).pathname
      if (req.method === "GET" && path === "/.well-known/oauth-protected-resource/mcp") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
          resource: `${origin}/mcp`,
          authorization_servers: [trusted.issuer],
          ...(options.scopesSupported === undefined ? {} : { scopes_supported: options.scopesSupported })
        }))
        return
      }
      if (path !== "/mcp") {
        res.writeHead(404).end()
        return
      }
      const request = await toRequest(req, abort.signal)
      const header = request.headers.get("authorization") ?? ""
      const grant = header.startsWith("Bearer ") ? trusted.verify(header.slice(7)) : undefined
      if (grant === undefined) {
        refusals.unauthorized++
        res.writeHead(401, {
          "content-type": "application/json",
          "www-authenticate": `Bearer error="invalid_token", resource_metadata="${metadataUrl()}"`
        }).end(JSON.stringify({ error: "invalid_token" }))
        return
      }
      const body = request.method === "POST" ? ((await request.clone().json().catch(() => ({}))) as { method?: string; params?: { name?: string } }) : {}
      const needed = body.method === "tools/call" ? options.toolScopes?.[body.params?.name ?? ""] : undefined
      if (needed !== undefined && !grant.scopes.includes(needed)) {
        refusals.forbidden++
        const wanted = [...new Set([...grant.scopes, needed])].join(" ")
        res.writeHead(403, {
          "content-type": "application/json",
          "www-authenticate": `Bearer error="insufficient_scope", scope="${wanted}", resource_metadata="${metadataUrl()}"`
        }).end(JSON.stringify({ error: "insufficient_scope" }))
        return
      }
      await writeResponse(await handler.fetch(request), res)
    }
    handle().catch(() => {
      if (!res.headersSent) res.writeHead(500).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url: `${origin}/mcp`,
    refusals,
    moveTo: (next) => {
      trusted = next
    },
    close: async () => {
      await handler.close()
      await new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
    }
  }
}
