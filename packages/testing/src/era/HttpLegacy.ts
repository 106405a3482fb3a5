/**
 * Legacy Streamable HTTP (2025-03-26 … 2025-11-25): `initialize` mints an Mcp-Session-Id, later
 * requests must carry it, GET opens the session's stream, DELETE ends it. Server→client requests
 * (ask_name's elicitation) travel on the POST's own SSE stream; the answer comes back as a POST.
 */
import { randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { type Context, debug } from "./Context.js"
import * as Legacy from "./Legacy.js"
import type { Mode } from "./Options.js"
import { LegacySession } from "./Session.js"
import * as Io from "./HttpIo.js"
import * as Sse from "./Sse.js"
import { failure, frame, type Message, type Notification, type Request, type Response } from "./Wire.js"

interface HttpSession {
  readonly legacy: LegacySession
  stream: ServerResponse | undefined
}

export type Sessions = Map<string, HttpSession>

const SessionHeader = "mcp-session-id"

/**
 * A sessionless request other than initialize/ping, which is how a modern probe looks to a legacy
 * server: each odd mode answers with a plain 400/404 that carries no recognised modern error.
 */
const preInit = (mode: Mode, res: ServerResponse, req: Request): void => {
  switch (mode) {
    case "legacy-silent":
      return Io.plain(res, 400)
    case "legacy-exit":
      return Io.plain(res, 404, "Not Found")
    case "legacy-32602":
      return Io.json(res, 400, failure(req.id, ErrorCode.InvalidParams, `${req.method} before initialize`))
    case "dual":
    case "slow-discover":
      return Io.json(res, 400, failure(req.id, ErrorCode.InvalidParams, `${req.method} needs _meta, or initialize first`))
    default:
      return Io.json(res, 404, failure(req.id, ErrorCode.MethodNotFound, `method not found: ${req.method}`))
  }
}

/** The reply to one POST: JSON, or an SSE stream opened as soon as something must go before the response. */
class PostReply {
  private streaming = false
  constructor(
    private readonly res: ServerResponse,
    private readonly preferStream: boolean,
    private readonly headers: Record<string, string> = {}
  ) {
    // Legacy replies are 200 whatever they hold, so a stream can open before the reply is known,
    // which lets the client see the call under way (and keeps a slow call's POST visibly alive).
    if (preferStream) this.open()
  }

  readonly send = (m: Message): void => {
    this.open()
    Sse.event(this.res, frame(m))
  }

  finish(r: Response | undefined): void {
    if (this.res.writableEnded || this.res.destroyed) return
    // A cancelled request withholds its reply: an event stream with nothing on it.
    if (r === undefined || this.streaming || this.preferStream) {
      this.open()
      if (r !== undefined) Sse.event(this.res, frame(r))
      this.res.end()
      return
    }
    Io.json(this.res, 200, r, this.headers)
  }

  private open(): void {
    if (this.streaming) return
    this.streaming = true
    Sse.open(this.res, this.headers)
  }
}

const prefersStream = (ctx: Context, req: Request): boolean => ctx.options.reply === "sse" || (ctx.options.reply === "auto" && req.method === "tools/call")

const serve = async (
  ctx: Context,
  session: LegacySession,
  res: ServerResponse,
  req: Request,
  headers: Record<string, string> = {}
): Promise<void> => {
  const reply = new PostReply(res, prefersStream(ctx, req), headers)
  const signal = session.inflight.begin(req.id)
  try {
    const r = await Legacy.handle(ctx, session, req, reply.send, signal)
    if (signal.aborted) debug(`cancelled ${req.method} ${JSON.stringify(req.id)}`)
    reply.finish(signal.aborted ? undefined : r)
  } finally {
    session.inflight.end(req.id)
  }
}

export const postRequest = async (
  ctx: Context,
  sessions: Sessions,
  http: IncomingMessage,
  res: ServerResponse,
  req: Request
): Promise<void> => {
  const sid = Io.header(http, SessionHeader)
  if (req.method === "initialize") {
    const id = randomUUID()
    const legacy = new LegacySession(id)
    sessions.set(id, { legacy, stream: undefined })
    return serve(ctx, legacy, res, req, { "mcp-session-id": id })
  }
  if (sid === undefined) {
    if (req.method === "ping") return Io.json(res, 200, { jsonrpc: "2.0", id: req.id, result: {} })
    return preInit(ctx.options.mode, res, req)
  }
  const session = sessions.get(sid)
  if (session === undefined) return Io.json(res, 404, failure(req.id, -32001, "session not found"))
  const version = Io.header(http, "mcp-protocol-version")
  if (version !== undefined && !ctx.options.legacyVersions.includes(version)) {
    return Io.json(res, 400, failure(req.id, ErrorCode.InvalidRequest, `unsupported MCP-Protocol-Version ${version}`))
  }
  return serve(ctx, session.legacy, res, req)
}

/** Notifications and responses (answers to our questions) are acknowledged with 202. */
export const postOther = (
  sessions: Sessions,
  http: IncomingMessage,
  res: ServerResponse,
  m: { readonly _tag: "notification"; readonly message: Notification } | { readonly _tag: "response"; readonly message: Response }
): void => {
  const sid = Io.header(http, SessionHeader)
  const session = sid === undefined ? undefined : sessions.get(sid)
  if (sid !== undefined && session === undefined) return Io.json(res, 404, failure(null, -32001, "session not found"))
  if (m._tag === "response") {
    if (session === undefined || !session.legacy.deliver(m.message)) {
      return Io.json(res, 400, failure(null, ErrorCode.InvalidRequest, "a response to nothing"))
    }
    return Io.plain(res, 202)
  }
  if (m.message.method === "notifications/cancelled") session?.legacy.inflight.cancel(m.message.params?.["requestId"])
  Io.plain(res, 202)
}

export const get = (sessions: Sessions, http: IncomingMessage, res: ServerResponse): void => {
  const sid = Io.header(http, SessionHeader)
  if (sid === undefined) return Io.plain(res, 405, "", { allow: "POST, DELETE" })
  const session = sessions.get(sid)
  if (session === undefined) return Io.plain(res, 404, "session not found")
  // One stream per session: a second would silently take half the notifications.
  if (session.stream !== undefined) return Io.plain(res, 409, "a stream is already open for this session")
  session.stream = res
  Sse.open(res)
  res.write(": stream open\n\n")
  res.on("close", () => {
    if (session.stream === res) session.stream = undefined
  })
}

export const remove = (sessions: Sessions, http: IncomingMessage, res: ServerResponse): void => {
  const sid = Io.header(http, SessionHeader)
  if (sid === undefined) return Io.plain(res, 400, "Mcp-Session-Id is required")
  const session = sessions.get(sid)
  if (session === undefined) return Io.plain(res, 404, "session not found")
  sessions.delete(sid)
  session.stream?.end()
  session.legacy.close()
  Io.plain(res, 204)
}
