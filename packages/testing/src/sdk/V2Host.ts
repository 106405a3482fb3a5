/**
 * Runs a server surface written for `@modelcontextprotocol/server` 2.x in one of three eras,
 * over stdio or Streamable HTTP, using only the SDK's own serving entries:
 *
 * - dual:   `serveStdio(factory)` / `createMcpHandler(factory, {legacy:'reject'})` behind
 *           `isLegacyRequest`, with 2025 traffic routed to sessionful legacy transports (the
 *           composition the SDK documents for keeping sessions; its built-in stateless legacy
 *           fallback cannot carry a server→client question, so it is opt-in here);
 * - modern: the same entries with `legacy:'reject'` and no legacy route at all;
 * - legacy: a hand-wired `server.connect(transport)`, which the v2 SDK serves as 2025-era only
 *           (it answers `server/discover` with -32601 on stdio, 400 without a session on HTTP).
 */
import { randomUUID } from "node:crypto"
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  isJsonContentType,
  isLegacyRequest,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  type McpHttpHandler,
  type McpServer,
  originValidationResponse,
  WebStandardStreamableHTTPServerTransport
} from "@modelcontextprotocol/server"
import { serveStdio, StdioServerTransport } from "@modelcontextprotocol/server/stdio"
import { type FixtureArgs, log } from "./Cli.js"
import { type HttpApp, serveHttp } from "./HttpHost.js"
import { legacySessions } from "./LegacySessions.js"

export type Era = "legacy" | "modern"
export type V2Mode = "dual" | "modern" | "legacy"

/** Change notifications a surface can raise, delivered to every connected client of either era. */
export interface Notifier {
  readonly toolsChanged: () => void
  readonly promptsChanged: () => void
  readonly resourcesChanged: () => void
}

/** What a surface learns about the instance it is building. */
export interface SurfaceContext {
  readonly fixture: string
  readonly era: Era
  readonly transport: "stdio" | "http"
  readonly notify: Notifier
}

/** Builds one fresh server instance; called per connection (stdio, legacy HTTP session) or per modern HTTP request. */
export type Surface = (ctx: SurfaceContext) => McpServer

export interface V2Options {
  readonly fixture: string
  readonly mode: V2Mode
  readonly args: FixtureArgs
  readonly surface: Surface
  /** dual mode only: serve 2025 traffic with the SDK's default stateless fallback instead of sessions. */
  readonly statelessLegacy?: boolean
}

/**
 * Instances that own a long-lived channel (stdio connections, legacy HTTP sessions) receive
 * notifications through their own server; modern HTTP requests are one-shot, so their clients
 * hear about changes on `subscriptions/listen` streams fed by the handler's bus instead.
 */
const makeNotifier = (fixture: string, live: Set<McpServer>, handler: () => McpHttpHandler | undefined): Notifier => {
  const each = (send: (mcp: McpServer) => Promise<void>) => {
    for (const mcp of live) {
      if (!mcp.isConnected()) {
        live.delete(mcp)
        continue
      }
      send(mcp).catch((error: unknown) => log(fixture, `notification failed: ${String(error)}`))
    }
  }
  return {
    toolsChanged: () => {
      handler()?.notify.toolsChanged()
      each((mcp) => mcp.server.sendToolListChanged())
    },
    promptsChanged: () => {
      handler()?.notify.promptsChanged()
      each((mcp) => mcp.server.sendPromptListChanged())
    },
    resourcesChanged: () => {
      handler()?.notify.resourcesChanged()
      each((mcp) => mcp.server.sendResourceListChanged())
    }
  }
}

const localhostGuard = (request: Request): Response | undefined =>
  hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
    originValidationResponse(request, localhostAllowedOrigins())

const unsupportedMediaType = (): Response =>
  new Response(
    JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Content-Type must be application/json" } }),
    { status: 415, headers: { "content-type": "application/json" } }
  )

const runStdio = async (options: V2Options, live: Set<McpServer>, notify: Notifier): Promise<void> => {
  const { fixture, mode, surface } = options
  const onerror = (error: Error) => log(fixture, `stdio: ${error.message}`)
  if (mode === "legacy") {
    const mcp = surface({ fixture, era: "legacy", transport: "stdio", notify })
    live.add(mcp)
    await mcp.connect(new StdioServerTransport())
    return
  }
  serveStdio(
    ({ era }) => {
      const mcp = surface({ fixture, era, transport: "stdio", notify })
      live.add(mcp)
      return mcp
    },
    { legacy: mode === "modern" ? "reject" : "serve", onerror }
  )
}

const runHttp = async (options: V2Options, live: Set<McpServer>, notify: Notifier, setHandler: (h: McpHttpHandler) => void) => {
  const { fixture, mode, surface } = options
  const onerror = (error: Error) => log(fixture, `http: ${error.message}`)
  const sessions = legacySessions(async (callbacks) => {
    const mcp = surface({ fixture, era: "legacy", transport: "http", notify })
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: callbacks.onsessioninitialized,
      onsessionclosed: callbacks.onsessionclosed
    })
    await mcp.connect(transport)
    live.add(mcp)
    return {
      transport,
      close: async () => {
        live.delete(mcp)
        await mcp.close()
      }
    }
  })
  let app: HttpApp
  if (mode === "legacy") {
    app = sessions
  } else {
    const stateless = mode === "dual" && options.statelessLegacy === true
    const handler = createMcpHandler(({ era }) => surface({ fixture, era, transport: "http", notify }), {
      legacy: stateless ? "stateless" : "reject",
      onerror
    })
    setHandler(handler)
    const routeLegacy = mode === "dual" && !stateless
    app = {
      fetch: async (request) => {
        if (request.method === "POST" && !isJsonContentType(request.headers.get("content-type"))) {
          return unsupportedMediaType()
        }
        return routeLegacy && (await isLegacyRequest(request)) ? sessions.fetch(request) : handler.fetch(request)
      },
      close: async () => {
        await handler.close()
        await sessions.close()
      }
    }
  }
  await serveHttp(fixture, app, { port: options.args.port, guard: localhostGuard })
}

export const runV2 = async (options: V2Options): Promise<void> => {
  const live = new Set<McpServer>()
  let handler: McpHttpHandler | undefined
  const notify = makeNotifier(options.fixture, live, () => handler)
  log(options.fixture, `starting (${options.mode}) over ${options.args.http ? "http" : "stdio"}`)
  if (options.args.http) {
    await runHttp(options, live, notify, (h) => {
      handler = h
    })
  } else {
    await runStdio(options, live, notify)
  }
}
