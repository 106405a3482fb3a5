/**
 * `legacy-sse`: the deprecated 2024-11-05 HTTP+SSE transport. A GET (on /sse, or on /mcp, where a
 * client falling back from Streamable HTTP looks) opens the stream, whose first event `endpoint`
 * names where to POST; every reply and server→client request arrives as a `message` event.
 * POST to /mcp is 405, which is what sends a Streamable HTTP client to this fallback.
 */
import { randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import * as Connection from "./Connection.js"
import type { Context } from "./Context.js"
import * as Io from "./HttpIo.js"
import * as Sse from "./Sse.js"
import { decode, frame } from "./Wire.js"

export type Streams = Map<string, Connection.Connection>

export const MessagesPath = "/messages"

export const route = async (
  ctx: Context,
  streams: Streams,
  http: IncomingMessage,
  res: ServerResponse,
  url: URL
): Promise<void> => {
  if (http.method === "GET" && (url.pathname === "/sse" || url.pathname === "/mcp")) {
    const id = randomUUID()
    Sse.open(res)
    const connection = Connection.make(ctx, (m) => Sse.event(res, frame(m)), (code) => process.exit(code))
    streams.set(id, connection)
    res.on("close", () => {
      streams.delete(id)
      connection.close()
    })
    return Sse.event(res, `${MessagesPath}?sessionId=${id}`, "endpoint")
  }
  if (http.method === "POST" && url.pathname === MessagesPath) {
    const connection = streams.get(url.searchParams.get("sessionId") ?? "")
    if (connection === undefined) return Io.plain(res, 404, "unknown session")
    const decoded = decode(await Io.readBody(http))
    if (decoded._tag === "invalid") return Io.plain(res, 400, decoded.reason)
    Io.plain(res, 202, "Accepted")
    return connection.receive(decoded)
  }
  if (url.pathname === "/mcp") return Io.plain(res, 405, "", { allow: "GET" })
  Io.plain(res, 404, "Not Found")
}
