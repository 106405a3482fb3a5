/**
 * A modern (2026-07-28) request POST: mirrored-header checks in the reference server's order,
 * then `_meta` validation, then the reply as JSON or SSE with the status the error code decides.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { type Context, debug } from "./Context.js"
import * as Modern from "./Modern.js"
import * as Io from "./HttpIo.js"
import * as Sse from "./Sse.js"
import * as Tools from "./Tools.js"
import { type Failure, failure, frame, type Request, type Response } from "./Wire.js"

const Sentinel = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/

/** Mcp-Name may carry a value a header cannot, as `=?base64?…?=`; strict Base64 only. */
const decodeName = (raw: string): string | undefined => {
  const m = Sentinel.exec(raw)
  if (m === null) return raw
  const b64 = m[1] ?? ""
  if (b64.length % 4 !== 0) return undefined
  return Buffer.from(b64, "base64").toString("utf8")
}

const mismatch = (req: Request, what: string): Failure => failure(req.id, ErrorCode.HeaderMismatch, what)

export const checkHeaders = (http: IncomingMessage, req: Request): Failure | undefined => {
  const version = Io.header(http, "mcp-protocol-version")
  const metaVersion = Modern.metaOf(req.params)?.[Modern.VersionKey]
  if (version === undefined) return mismatch(req, "MCP-Protocol-Version header is required")
  // A modern header on a body without the version in _meta is a malformed request, not a mismatch.
  if (metaVersion === undefined) return undefined
  if (metaVersion !== version) return mismatch(req, "MCP-Protocol-Version disagrees with _meta")
  const method = Io.header(http, "mcp-method")
  if (method !== undefined && method !== req.method) return mismatch(req, "Mcp-Method disagrees with the body")
  const name = Io.header(http, "mcp-name")
  if (name !== undefined) {
    const expected = req.params?.["name"] ?? req.params?.["uri"]
    if (decodeName(name) !== expected) return mismatch(req, "Mcp-Name disagrees with the body")
  }
  return undefined
}

/**
 * `--header-tools`: a call of the header tool must mirror its region in `Mcp-Param-<name>` (the
 * specification's rule for an annotated argument with a value), else -32020.
 */
export const checkParamHeaders = (ctx: Context, http: IncomingMessage, req: Request): Failure | undefined => {
  const name = ctx.options.headerName
  if (name === undefined || req.method !== "tools/call" || req.params?.["name"] !== Tools.HeaderTool) return undefined
  const args = req.params["arguments"]
  const region = typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>)["region"] : undefined
  const raw = Io.header(http, `mcp-param-${name.toLowerCase()}`)
  if (region === undefined || region === null) {
    return raw === undefined ? undefined : mismatch(req, `Mcp-Param-${name} is present but arguments.region is not`)
  }
  if (raw === undefined) return mismatch(req, `Mcp-Param-${name} header is required (arguments.region has a value)`)
  if (decodeName(raw) !== String(region)) return mismatch(req, `Mcp-Param-${name} disagrees with arguments.region`)
  return undefined
}

const prefersStream = (ctx: Context, req: Request): boolean => ctx.options.reply === "sse" || (ctx.options.reply === "auto" && req.method === "tools/call")

const send = (ctx: Context, res: ServerResponse, req: Request, r: Response): void => {
  const status = Modern.statusOf(r)
  if (status !== 200 || !prefersStream(ctx, req)) return Io.json(res, status, r)
  Sse.open(res)
  Sse.event(res, frame(r))
  res.end()
}

/** Whether `p` settles within the current turn of the event loop. */
const settlesNow = <A>(p: Promise<A>): Promise<boolean> =>
  new Promise((resolve) => {
    let done = false
    p.then(() => (done = true), () => (done = true))
    setImmediate(() => resolve(done))
  })

export const post = async (ctx: Context, http: IncomingMessage, res: ServerResponse, req: Request): Promise<void> => {
  if (ctx.options.mode === "modern-only" && Modern.metaOf(req.params) === undefined) {
    if (req.method === "initialize") return send(ctx, res, req, Modern.refuseInitialize(ctx, req))
    // A legacy session's request (a server turned modern-only under its client): its header names
    // a revision this server does not serve, which the specification answers with -32022.
    const version = Io.header(http, "mcp-protocol-version")
    if (version !== undefined && !ctx.options.modernVersions.includes(version)) {
      return send(ctx, res, req, Modern.unsupported(ctx, req.id, version))
    }
  }
  const bad = checkHeaders(http, req) ?? checkParamHeaders(ctx, http, req)
  if (bad !== undefined) return send(ctx, res, req, bad)
  const meta = Modern.validate(ctx, req)
  if (Modern.isFailure(meta)) return send(ctx, res, req, meta)
  // Closing the response stream is how a modern HTTP client cancels.
  const controller = new AbortController()
  res.on("close", () => {
    if (!res.writableFinished) controller.abort()
  })
  const pending = Modern.handle(ctx, req, meta, controller.signal)
  // Errors are known at once and keep their HTTP status; a reply that takes time streams, so the
  // client sees the response open and can cancel by closing it.
  const streamEarly = prefersStream(ctx, req) && !(await settlesNow(pending))
  if (streamEarly) Sse.open(res)
  const reply = await pending
  if (controller.signal.aborted) return debug(`cancelled ${req.method} ${JSON.stringify(req.id)}`)
  if (reply === undefined) return void res.end()
  if (!streamEarly) return send(ctx, res, req, reply)
  Sse.event(res, frame(reply))
  res.end()
}
