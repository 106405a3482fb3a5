/**
 * One ordered stream of frames with a single way back: stdio, or the 2024-11-05 HTTP+SSE
 * transport. It holds at most one legacy session, and serves modern requests beside it when the
 * mode is dual, classifying each request by its own `_meta`.
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import type { Era } from "@mcpx-fx/protocol/Revision"
import { type Context, debug } from "./Context.js"
import * as Legacy from "./Legacy.js"
import * as Modern from "./Modern.js"
import { servesModern } from "./Options.js"
import { LegacySession } from "./Session.js"
import * as TraceLog from "./TraceLog.js"
import { type Decoded, failure, type Id, type Message, type Notification, type Request, type Response } from "./Wire.js"

export interface Connection {
  readonly receive: (d: Decoded) => void
  readonly close: () => void
}

export const make = (ctx: Context, write: (m: Message) => void, exit: (code: number) => void): Connection => {
  const { mode } = ctx.options
  const session = new LegacySession("connection")
  const eraOf = new Map<Id, Era>()
  const defaultEra: Era = mode === "modern-only" ? "modern" : "legacy"

  // Requests being served, for --late-refusal: a refusal waits for every answer owed before it.
  const answering = new Set<Promise<void>>()

  const run = (req: Request, era: Era, serve: (signal: AbortSignal) => Promise<Response | undefined>) => {
    eraOf.set(req.id, era)
    const signal = session.inflight.begin(req.id)
    const done = (r: Response | undefined) => {
      session.inflight.end(req.id)
      eraOf.delete(req.id)
      if (signal.aborted) return debug(`cancelled ${req.method} ${JSON.stringify(req.id)}`)
      if (r !== undefined) write(r)
    }
    const served = serve(signal).then(done, (e: unknown) => done(failure(req.id, ErrorCode.InternalError, String(e))))
    answering.add(served)
    void served.finally(() => answering.delete(served))
  }

  const refuse = (refusal: Response) => {
    if (ctx.options.lateRefusal !== true || answering.size === 0) return write(refusal)
    void Promise.allSettled([...answering]).then(() => write(refusal))
  }

  const onRequest = (req: Request) => {
    const modern = mode === "modern-only" || (servesModern(mode) && Modern.claimsModern(req.method, req.params))
    const era: Era = modern ? "modern" : "legacy"
    ctx.log(era, req.method)
    TraceLog.record(req.method, req.params)
    if (modern) {
      if (req.method === "initialize" && Modern.metaOf(req.params) === undefined) {
        return refuse(Modern.refuseInitialize(ctx, req))
      }
      const meta = Modern.validate(ctx, req)
      if (Modern.isFailure(meta)) return write(meta)
      return run(req, era, (signal) => Modern.handle(ctx, req, meta, signal, write))
    }
    if (session.version === undefined) {
      const odd = Legacy.preInit(mode, req)
      if (odd?._tag === "reply") return write(odd.response)
      if (odd?._tag === "silent") return
      if (odd?._tag === "exit") {
        debug(`exiting on pre-initialize ${req.method}`)
        return exit(1)
      }
    }
    run(req, era, (signal) => Legacy.handle(ctx, session, req, write, signal))
  }

  const onNotification = (n: Notification) => {
    const target = n.params?.["requestId"]
    const cancelled = n.method === "notifications/cancelled" && (typeof target === "string" || typeof target === "number")
    ctx.log((cancelled ? eraOf.get(target) : undefined) ?? defaultEra, n.method)
    if (cancelled) session.inflight.cancel(target)
  }

  return {
    receive: (d) => {
      switch (d._tag) {
        case "request":
          return onRequest(d.message)
        case "notification":
          return onNotification(d.message)
        case "response":
          if (!session.deliver(d.message)) debug(`response to nothing: ${JSON.stringify(d.message.id)}`)
          return
        case "invalid":
          return write(failure(d.id, d.code, d.reason))
      }
    },
    close: () => session.close()
  }
}
