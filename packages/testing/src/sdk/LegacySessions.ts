/**
 * Sessionful 2025-era Streamable HTTP on top of an SDK's web-standard transport: one transport
 * (and one server instance) per `Mcp-Session-Id`, created by `initialize`, ended by DELETE.
 * This is the wiring most deployed servers use, and the only legacy wiring on which a server can
 * ask the client something mid-call (the answer arrives on a later POST and must reach the
 * same instance), so both SDK generations' fixtures share it. The transports themselves come
 * from the SDKs; this module only keeps the session table.
 */

/** The part of an SDK's `WebStandardStreamableHTTPServerTransport` the router drives. */
export interface SessionTransport {
  readonly handleRequest: (request: Request, options?: { parsedBody?: unknown }) => Promise<Response>
}

/** Callbacks the SDK transport fires as the session starts and ends. */
export interface SessionCallbacks {
  readonly onsessioninitialized: (sessionId: string) => void
  readonly onsessionclosed: (sessionId: string) => void
}

/** A freshly connected session: its transport and the way to tear its server down. */
export interface OpenedSession {
  readonly transport: SessionTransport
  readonly close: () => Promise<void>
}

const jsonRpcError = (status: number, code: number, message: string): Response =>
  new Response(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }), {
    status,
    headers: { "content-type": "application/json" }
  })

const isInitialize = (body: unknown): boolean => {
  const one = (m: unknown) => typeof m === "object" && m !== null && "method" in m && (m as { method: unknown }).method === "initialize"
  return Array.isArray(body) ? body.some(one) : one(body)
}

export interface LegacySessionRouter {
  readonly fetch: (request: Request) => Promise<Response>
  readonly close: () => Promise<void>
  readonly size: () => number
}

export const legacySessions = (open: (callbacks: SessionCallbacks) => Promise<OpenedSession>): LegacySessionRouter => {
  const sessions = new Map<string, OpenedSession>()

  const fetch = async (request: Request): Promise<Response> => {
    const sessionId = request.headers.get("mcp-session-id")
    if (sessionId !== null) {
      const session = sessions.get(sessionId)
      // 404 (not 400) tells a 2025 client its session is gone and it should initialize again.
      return session === undefined
        ? jsonRpcError(404, -32001, "Session not found")
        : session.transport.handleRequest(request)
    }
    if (request.method !== "POST") return jsonRpcError(400, -32000, "Bad Request: Mcp-Session-Id header is required")
    const text = await request.text()
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      return jsonRpcError(400, -32700, "Parse error: Invalid JSON")
    }
    if (!isInitialize(body)) return jsonRpcError(400, -32000, "Bad Request: Server not initialized")
    let registered: string | undefined
    // The transport fires this inside handleRequest, after `open` resolved, so `session` is set.
    let session: OpenedSession | undefined
    session = await open({
      onsessioninitialized: (id) => {
        registered = id
        if (session !== undefined) sessions.set(id, session)
      },
      onsessionclosed: (id) => {
        const closed = sessions.get(id)
        sessions.delete(id)
        closed?.close().catch(() => undefined)
      }
    })
    const response = await session.transport.handleRequest(request, { parsedBody: body })
    if (registered === undefined) await session.close().catch(() => undefined)
    return response
  }

  const close = async (): Promise<void> => {
    const all = [...sessions.values()]
    sessions.clear()
    await Promise.all(all.map((s) => s.close().catch(() => undefined)))
  }

  return { fetch, close, size: () => sessions.size }
}
