/**
 * `--http`: Streamable HTTP on 127.0.0.1 at /mcp (or the 2024-11-05 HTTP+SSE transport in
 * legacy-sse mode). Announces itself with one stdout line, `{"url":"http://127.0.0.1:<port>/mcp"}`,
 * which is what `Fixtures.startHttpFixture` waits for.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as Revision from "@mcpx-fx/protocol/Revision"
import { type Context, debug } from "./Context.js"
import * as HttpLegacy from "./HttpLegacy.js"
import * as HttpModern from "./HttpModern.js"
import * as HttpSse from "./HttpSse.js"
import * as Modern from "./Modern.js"
import { type Mode, Modes, servesModern, withMode } from "./Options.js"
import * as Io from "./HttpIo.js"
import * as TraceLog from "./TraceLog.js"
import { decode, failure, isObject, type JsonObject } from "./Wire.js"

/** Whether a POST belongs to the modern era: by `_meta`, or by a header naming a modern revision. */
const isModernPost = (ctx: Context, http: IncomingMessage, method: string, params: JsonObject | undefined): boolean => {
  const { mode } = ctx.options
  if (mode === "modern-only") return true
  if (!servesModern(mode)) return false
  const version = Io.header(http, "mcp-protocol-version")
  if (version !== undefined && Revision.atLeast(version, Revision.LatestModernRevision)) return true
  return Modern.claimsModern(method, params)
}

const post = async (ctx: Context, sessions: HttpLegacy.Sessions, http: IncomingMessage, res: ServerResponse) => {
  const decoded = decode(await Io.readBody(http))
  switch (decoded._tag) {
    case "invalid":
      return Io.json(res, 400, failure(decoded.id, decoded.code, decoded.reason))
    case "request": {
      const req = decoded.message
      const modern = isModernPost(ctx, http, req.method, req.params)
      ctx.log(modern ? "modern" : "legacy", req.method)
      TraceLog.record(req.method, req.params)
      return modern
        ? HttpModern.post(ctx, http, res, req)
        : HttpLegacy.postRequest(ctx, sessions, http, res, req)
    }
    case "notification": {
      const n = decoded.message
      const modern = isModernPost(ctx, http, n.method, n.params)
      ctx.log(modern ? "modern" : "legacy", n.method)
      // Modern notifications over HTTP mean nothing to this server; cancellation is closing the stream.
      return modern ? Io.plain(res, 202) : HttpLegacy.postOther(sessions, http, res, decoded)
    }
    case "response":
      if (ctx.options.mode === "modern-only") {
        return Io.json(res, 400, failure(null, ErrorCode.InvalidRequest, "clients do not POST responses"))
      }
      return HttpLegacy.postOther(sessions, http, res, decoded)
  }
}

/**
 * `POST /control` with `{"mode": "<mode>"}` and/or `{"headerName": "<name>"}`: the same server
 * starts behaving in another mode, or mirrors the header tool's argument under another name, as
 * a server that was upgraded (or downgraded) behind a URL does. Legacy sessions already open stay.
 */
const control = async (ctx: Context, http: IncomingMessage, res: ServerResponse): Promise<void> => {
  let body: unknown
  try {
    body = JSON.parse(await Io.readBody(http))
  } catch {
    return Io.plain(res, 400, "a JSON object is expected")
  }
  if (!isObject(body)) return Io.plain(res, 400, "a JSON object is expected")
  const mode = body["mode"]
  const headerName = body["headerName"]
  if (mode !== undefined && (typeof mode !== "string" || !(Modes as ReadonlyArray<string>).includes(mode) || mode === "legacy-sse")) {
    return Io.plain(res, 400, `mode must be one of ${Modes.filter((m) => m !== "legacy-sse").join(", ")}`)
  }
  if (headerName !== undefined && typeof headerName !== "string") return Io.plain(res, 400, "headerName must be a string")
  ctx.reconfigure((o) => {
    const moved = mode === undefined ? o : withMode(o, mode as Mode)
    return headerName === undefined ? moved : { ...moved, headerName }
  })
  debug(`now in mode ${ctx.options.mode}${ctx.options.headerName === undefined ? "" : `, header ${ctx.options.headerName}`}`)
  Io.json(res, 200, { mode: ctx.options.mode, headerName: ctx.options.headerName ?? null })
}

const route = async (ctx: Context, state: State, http: IncomingMessage, res: ServerResponse): Promise<void> => {
  const url = new URL(http.url ?? "/", "http://127.0.0.1")
  if (url.pathname === "/control" && http.method === "POST") return control(ctx, http, res)
  if (ctx.options.mode === "legacy-sse") return HttpSse.route(ctx, state.streams, http, res, url)
  if (url.pathname !== "/mcp") return Io.plain(res, 404, "Not Found")
  const modernOnly = ctx.options.mode === "modern-only"
  switch (http.method) {
    case "POST":
      return post(ctx, state.sessions, http, res)
    // A modern-only server has no sessions, so no session stream and nothing to delete.
    case "GET":
      return modernOnly ? Io.plain(res, 405, "", { allow: "POST" }) : HttpLegacy.get(state.sessions, http, res)
    case "DELETE":
      return modernOnly ? Io.plain(res, 405, "", { allow: "POST" }) : HttpLegacy.remove(state.sessions, http, res)
    default:
      return Io.plain(res, 405, "", { allow: modernOnly ? "POST" : "GET, POST, DELETE" })
  }
}

interface State {
  readonly sessions: HttpLegacy.Sessions
  readonly streams: HttpSse.Streams
}

export const run = (ctx: Context): void => {
  const state: State = { sessions: new Map(), streams: new Map() }
  const server = createServer((http, res) => {
    route(ctx, state, http, res).catch((e: unknown) => {
      debug(`request failed: ${String(e)}`)
      if (!res.headersSent) Io.plain(res, 500, String(e))
      else res.end()
    })
  })
  server.listen(ctx.options.port, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo
    process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` })}\n`)
  })
}
