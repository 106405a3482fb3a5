/**
 * Serves a web-standard `fetch` handler (what both official SDKs' HTTP transports are written
 * against) on 127.0.0.1 with `node:http`, at the single path /mcp. The SDKs ship their own Node
 * adapters only as separate packages (`@modelcontextprotocol/node`, or express in v1), which are
 * not installed here; this adapter is deliberately thin so that what a client sees is the SDK's
 * own answer, not ours.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { log } from "./Cli.js"

/** What the HTTP host serves: one handler plus a teardown for whatever the handler keeps open. */
export interface HttpApp {
  readonly fetch: (request: Request) => Promise<Response>
  readonly close: () => Promise<void>
}

export const MCP_PATH = "/mcp"

const LOCAL_HOSTNAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"])

const hostnameOf = (hostHeader: string): string | undefined => {
  try {
    return new URL(`http://${hostHeader}`).hostname.toLowerCase()
  } catch {
    return undefined
  }
}

const forbidden = (message: string): Response =>
  new Response(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message } }), {
    status: 403,
    headers: { "content-type": "application/json" }
  })

/**
 * DNS-rebinding protection for a fixture whose SDK has no web-standard helper for it (the v1
 * SDK ships only an express middleware): a browser tricked into talking to 127.0.0.1 carries a
 * foreign Host or Origin, and a local unauthenticated server must refuse it.
 */
export const localhostOnly = (request: Request): Response | undefined => {
  const host = request.headers.get("host")
  const hostname = host === null ? undefined : hostnameOf(host)
  if (hostname === undefined || !LOCAL_HOSTNAMES.has(hostname)) return forbidden(`Invalid Host header: ${host}`)
  const origin = request.headers.get("origin")
  if (origin === null) return undefined
  let originHost: string
  try {
    originHost = new URL(origin).hostname.toLowerCase()
  } catch {
    return forbidden(`Invalid Origin header: ${origin}`)
  }
  return LOCAL_HOSTNAMES.has(originHost) ? undefined : forbidden(`Invalid Origin header: ${origin}`)
}

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

/** A node request as a web-standard Request (for the SDKs' fetch handlers). */
export const toRequest = async (req: IncomingMessage, signal: AbortSignal): Promise<Request> => {
  const headers = new Headers()
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!)
  const method = req.method ?? "GET"
  const hasBody = method !== "GET" && method !== "HEAD"
  // The URL is built from our own listening address, never from the Host header, which is
  // attacker-controlled input that the handlers validate themselves.
  const address = req.socket.localAddress ?? "127.0.0.1"
  const url = new URL(req.url ?? "/", `http://${address.includes(":") ? `[${address}]` : address}:${req.socket.localPort}`)
  return new Request(url, {
    method,
    headers,
    signal,
    ...(hasBody ? { body: await readBody(req) } : {})
  })
}

/** Writes a web-standard Response to a node response, streaming its body. */
export const writeResponse = async (response: Response, res: ServerResponse): Promise<void> => {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, key) => {
    headers[key] = value
  })
  res.writeHead(response.status, headers)
  if (response.body === null) {
    res.end()
    return
  }
  const reader = response.body.getReader()
  // A client that hangs up on an SSE stream must cancel the SDK's stream, or the SDK keeps
  // the request's work (and keep-alive timers) alive for nobody.
  res.on("close", () => {
    reader.cancel().catch(() => undefined)
  })
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (!res.write(value)) await new Promise<void>((resolve) => res.once("drain", resolve))
    }
  } catch {
    // The stream was cancelled because the client went away; nothing is left to write to.
  } finally {
    res.end()
  }
}

/** A running HTTP fixture. */
export interface HttpHost {
  readonly url: string
  readonly close: () => Promise<void>
}

/**
 * Listens on 127.0.0.1 (ephemeral port unless given), prints exactly one stdout line
 * `{"url":"http://127.0.0.1:<port>/mcp"}` once listening, and stops on SIGTERM/SIGINT.
 */
export const serveHttp = async (
  fixture: string,
  app: HttpApp,
  options: { readonly port: number | undefined; readonly guard?: (request: Request) => Response | undefined }
): Promise<HttpHost> => {
  const server = createServer((req, res) => {
    const abort = new AbortController()
    res.on("close", () => {
      if (!res.writableFinished) abort.abort()
    })
    const handle = async (): Promise<void> => {
      const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname
      if (path !== MCP_PATH) {
        res.writeHead(404, { "content-type": "text/plain" }).end("not found\n")
        return
      }
      const request = await toRequest(req, abort.signal)
      const refused = options.guard?.(request)
      const response = refused ?? (await app.fetch(request))
      await writeResponse(response, res)
    }
    handle().catch((error: unknown) => {
      log(fixture, `request failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" })
      res.end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve())
  })
  const { port } = server.address() as AddressInfo
  const url = `http://127.0.0.1:${port}${MCP_PATH}`
  let closing: Promise<void> | undefined
  const close = (): Promise<void> => (closing ??= (async () => {
    await app.close().catch((error: unknown) => log(fixture, `close failed: ${String(error)}`))
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })())
  const onSignal = (signal: NodeJS.Signals) => {
    log(fixture, `${signal}: shutting down`)
    close().then(
      () => process.exit(0),
      () => process.exit(1)
    )
  }
  process.once("SIGTERM", onSignal)
  process.once("SIGINT", onSignal)
  process.stdout.write(`${JSON.stringify({ url })}\n`)
  log(fixture, `listening on ${url}`)
  return { url, close }
}
