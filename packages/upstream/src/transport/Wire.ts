/**
 * The HTTP exchanges of the Streamable HTTP transport, on undici's dispatcher with kept-alive
 * connections.
 *
 * The transport sends one POST per message, so what an exchange costs is paid on every call. A
 * general HttpClient (request and response objects, middleware, a Stream per body, a span per
 * request) cost several times the whole rest of a call through mcpx-fx, and node:http's client
 * (a ClientRequest and an IncomingMessage, each a stream with its listeners) twice what undici's
 * dispatcher costs for the same POST; this does only what the transport needs: a request out, the
 * status and headers in, and the body read whole under a cap or chunk by chunk for server-sent
 * events, each exchange one handler object. A request's POST goes further (`dispatch`): its
 * reader takes the body in place as undici hands it over, and no fiber runs until the reply is read.
 *
 * An exchange is tied to a scope: closing it before the body was read aborts the request (and its
 * connection), which is how a closed POST tells a modern server that its request was abandoned.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Dispatcher } from "undici"
import { Members } from "@mcpx-fx/cancel/InFlight"
import type { WaitingCall } from "./internal/InPlace.js"
import { FrameTooLarge, TransportClosed } from "./Transport.js"

/** One request: headers by lower-case name. */
export interface WireRequest {
  readonly method: "GET" | "POST" | "DELETE"
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string
  /**
   * The call running in place (internal/InPlace.ts) this exchange is the wait of: a cut aborts the
   * exchange, so whatever it waits on (its answer, its body) ends at once.
   */
  readonly inPlace?: WaitingCall
}

/** What came back: status and headers (lower-case names) at once, the body when asked for. */
export interface WireResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string | undefined>>
  /** The whole body as text; FrameTooLarge past `maxBytes`, without buffering what is over. */
  readonly text: (maxBytes: number) => Effect.Effect<string, FrameTooLarge | TransportClosed>
  /** The body's next chunk as it arrives (an event stream), `undefined` at its end; read with backpressure. */
  readonly next: Effect.Effect<Uint8Array | undefined, TransportClosed>
}

type Failure = FrameTooLarge | TransportClosed

/**
 * Where an exchange's outcome goes as undici hands it over, with no fiber resumed on the way: the
 * answer's start, then its body chunk by chunk when the reader takes it, then its end.
 */
export interface BodyReader {
  /** The answer began: true takes its body here (`chunk`, then `end`); false leaves it to the response's `text` or `next`. */
  readonly begin: (response: WireResponse & WireExchange) => boolean
  /** A chunk of a body `begin` took; a failure returned ends the exchange with it. */
  readonly chunk: (bytes: Buffer) => Failure | undefined
  /** The exchange failed before its answer began, or a body `begin` took ended: whole (undefined) or with why. */
  readonly end: (failure: Failure | undefined) => void
}

/** An exchange sent with a reader of its own. */
export interface WireExchange {
  /** The exchange is no longer wanted: a body not read to its end is abandoned (its request aborted). */
  readonly release: () => void
}

/** Sends requests; each response lives as long as the scope it was sent in. */
export interface Wire {
  readonly send: (request: WireRequest) => Effect.Effect<WireResponse, TransportClosed, Scope.Scope>
  /**
   * Sends `request` with `reader` hearing its outcome in place: for a sender that waits on what
   * the reader makes of the answer, once, rather than on the answer's start and then on each chunk.
   * The sender releases the exchange when it is done with it.
   */
  readonly dispatch: (request: WireRequest, reader: BodyReader) => WireExchange
  /** Aborts every exchange in flight (their connection is closing); the wire stays usable. */
  readonly abortInFlight: Effect.Effect<void>
}

/** What a client that only sends exchanges, each tied to a scope, needs of a wire. */
export type Sender = Pick<Wire, "send">

/** Header records as one with lower-case names, later ones winning, as HTTP reads them. */
export const mergeHeaders = (...records: ReadonlyArray<Readonly<Record<string, string>> | undefined>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const record of records) {
    if (record === undefined) continue
    for (const name in record) out[name.toLowerCase()] = record[name]!
  }
  return out
}

/** The cause chain of a failure as one line ("connect ECONNREFUSED 127.0.0.1:1"). */
export const describeCause = (cause: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = cause
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    if (current instanceof Error) {
      if (current.message.length > 0 && !parts.includes(current.message)) parts.push(current.message)
      current = current.cause
    } else {
      parts.push(String(current))
      break
    }
  }
  return parts.length > 0 ? parts.join(": ") : "unknown error"
}

const unreachable = (url: string, cause: unknown) => new TransportClosed({ reason: `cannot reach ${url}: ${describeCause(cause)}` })
const broken = (url: string, cause: unknown) => new TransportClosed({ reason: `connection to ${url} broke: ${describeCause(cause)}` })

/**
 * A connection that failed this request before its answer began, after an earlier answer on it:
 * a kept-alive connection the server closed while idle, found closed only by the next request.
 */
const isStaleConnection = (e: unknown): boolean => {
  const socket = (e as { readonly socket?: { readonly bytesRead?: unknown } } | undefined)?.socket
  return typeof socket?.bytesRead === "number" && socket.bytesRead > 0
}

/** How much of a body may arrive ahead of its reader before the connection stops being read. */
const MaxUnread = 64 * 1024

/** Where one request goes, parsed once per URL. */
interface Target {
  readonly origin: string
  readonly path: string
}

/**
 * One exchange: undici's handler of its request, and the response it answers with. Undici calls
 * the `on…` methods as the answer arrives; its reader hears the start, and either takes the body
 * in place or leaves it to be read through `text` and `next`. A body arriving before anyone reads
 * it is then kept, up to MaxUnread, and the connection paused until it is read (a body read whole
 * is bounded by its cap instead).
 */
class Exchange implements Dispatcher.DispatchHandler, WireResponse, WireExchange {
  status = 0
  headers: Record<string, string | undefined> = {}
  private controller: Dispatcher.DispatchController | undefined = undefined
  /** Told of the answer's start (or of the failure before it); then kept only if it took the body. */
  private reader: BodyReader | undefined
  /** Whether the reader took the body. */
  private taken = false
  private readonly chunks: Array<Buffer> = []
  private unread = 0
  private received = 0
  /** The cap of a body being read whole; -1 while it is read chunk by chunk (or not yet). */
  private cap = -1
  /**
   * undefined while the exchange runs; null once its body ended whole; the failure once it broke,
   * was cut or was given up on (later outcomes are then ignored, and a late start is aborted).
   */
  private end: Failure | null | undefined = undefined
  private waiter: (() => void) | undefined = undefined
  private retried = false
  /** Set when a cut in place ended the exchange (it is then never sent again). */
  cut = false
  /** Takes this exchange out of the wire's in-flight list, and out of its call's wait. */
  private readonly leave: Array<() => void> = []

  constructor(
    private readonly url: string,
    private readonly options: Dispatcher.DispatchOptions,
    private readonly dispatcher: Dispatcher,
    reader: BodyReader
  ) {
    this.reader = reader
  }

  /** Whether the answer has yet to begin, with a reader waiting to hear it. */
  private get starting(): boolean {
    return this.reader !== undefined && !this.taken
  }

  dispatch(): void {
    if (this.end !== undefined) return
    try {
      this.dispatcher.dispatch(this.options, this)
    } catch (e) {
      this.failStart(unreachable(this.url, e))
    }
  }

  onLeave(leave: () => void): void {
    this.leave.push(leave)
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller
    if (this.end !== undefined) controller.abort(new Error("abandoned"))
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, headers: Record<string, string | Array<string> | undefined>): void {
    // An informational answer (1xx) is not the answer.
    if (status < 200 || !this.starting) return
    this.status = status
    const flat: Record<string, string | undefined> = {}
    for (const name in headers) {
      const value = headers[name]
      flat[name] = Array.isArray(value) ? value.join(", ") : value
    }
    this.headers = flat
    const reader = this.reader!
    this.taken = reader.begin(this)
    if (!this.taken) this.reader = undefined
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.end !== undefined) return
    if (this.taken) {
      const failure = this.reader!.chunk(chunk)
      return failure === undefined ? undefined : this.abort(failure)
    }
    this.received += chunk.length
    if (this.cap >= 0 && this.received > this.cap) return this.abort(new FrameTooLarge({ limit: this.cap }))
    this.chunks.push(chunk)
    this.unread += chunk.length
    if (this.cap < 0 && this.unread >= MaxUnread) controller.pause()
    if (this.cap < 0) this.wake()
  }

  onResponseEnd(): void {
    if (this.end !== undefined) return
    this.end = null
    this.settle()
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    if (this.end !== undefined) return
    if (this.starting) {
      // Sent again, once, on another connection (never after a cut).
      if (!this.retried && !this.cut && isStaleConnection(error)) {
        this.retried = true
        this.controller = undefined
        // Not from inside undici's handling of the failure it is reporting.
        return queueMicrotask(() => this.dispatch())
      }
      return this.failStart(unreachable(this.url, error))
    }
    this.end = broken(this.url, error)
    this.settle()
  }

  /** Ends the exchange with `failure` (the body not read to its end is abandoned with it). */
  abort(failure: Failure = broken(this.url, new Error("the exchange was abandoned"))): void {
    if (this.end !== undefined) return
    if (this.starting && failure._tag === "TransportClosed") return this.failStart(failure)
    this.end = failure
    this.controller?.abort(new Error(failure._tag === "FrameTooLarge" ? "the body is over its cap" : failure.reason))
    this.settle()
  }

  /** Its sender stopped waiting for the answer to begin (interrupted): nothing is told. */
  abandon(): void {
    if (!this.taken) this.reader = undefined
    this.abort()
  }

  /** The exchange is no longer wanted: let it go, aborting a body not read to its end. */
  readonly release = (): void => {
    if (this.end === undefined) this.abort()
    this.leaveAll()
  }

  readonly text = (maxBytes: number): Effect.Effect<string, Failure> =>
    Effect.async<string, Failure>((resume) => {
      const declared = Number(this.headers["content-length"] ?? Number.NaN)
      if ((Number.isFinite(declared) && declared > maxBytes) || this.received > maxBytes) {
        this.abort(new FrameTooLarge({ limit: maxBytes }))
        return resume(Effect.fail(new FrameTooLarge({ limit: maxBytes })))
      }
      this.cap = maxBytes
      this.controller?.resume()
      if (this.end !== undefined) return resume(this.whole())
      this.waiter = () => resume(this.whole())
      return Effect.sync(() => {
        this.waiter = undefined
        this.abort()
      })
    })

  get next(): Effect.Effect<Uint8Array | undefined, TransportClosed> {
    return Effect.async((resume) => {
      if (this.chunks.length > 0 || this.end !== undefined) return resume(this.take())
      this.waiter = () => resume(this.take())
      return Effect.sync(() => {
        this.waiter = undefined
      })
    })
  }

  private whole(): Effect.Effect<string, Failure> {
    if (this.end !== null && this.end !== undefined) return Effect.fail(this.end)
    const chunks = this.chunks
    return Effect.succeed(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"))
  }

  private take(): Effect.Effect<Uint8Array | undefined, TransportClosed> {
    const chunk = this.chunks.shift()
    if (chunk !== undefined) {
      this.unread -= chunk.length
      if (this.controller?.paused === true && this.unread < MaxUnread) this.controller.resume()
      return Effect.succeed(chunk)
    }
    const end = this.end
    if (end === null || end === undefined) return Effect.succeed(undefined)
    // A pull reads no body whole, so its failure is never FrameTooLarge.
    return Effect.fail(end._tag === "TransportClosed" ? end : broken(this.url, new Error("the body is over its cap")))
  }

  private wake(): void {
    const waiter = this.waiter
    this.waiter = undefined
    waiter?.()
  }

  private settle(): void {
    this.leaveAll()
    this.wake()
    if (this.taken) {
      const reader = this.reader!
      this.reader = undefined
      this.taken = false
      reader.end(this.end ?? undefined)
    }
  }

  private failStart(failure: TransportClosed): void {
    this.end = failure
    this.controller?.abort(new Error(failure.reason))
    this.leaveAll()
    const reader = this.reader
    this.reader = undefined
    reader?.end(failure)
  }

  private leaveAll(): void {
    for (const leave of this.leave.splice(0)) leave()
  }
}

/** The chunks of a response's body as a Stream, for the readers that want one (a long event stream). */
export const stream = (response: WireResponse): Stream.Stream<Uint8Array, TransportClosed> =>
  Stream.repeatEffectOption(
    Effect.flatMap(Effect.mapError(response.next, Option.some), (chunk) => (chunk === undefined ? Effect.fail(Option.none()) : Effect.succeed(chunk)))
  )

/**
 * A wire with its own kept-alive connections, closed with the scope. `socketPath` sends every
 * request over that unix socket instead of the URL's host (the CLI's socket to the daemon).
 * Undici (~1 MB of code) is loaded by the first wire made, not by a process that never makes one.
 */
export const make = (options: { readonly socketPath?: string } = {}): Effect.Effect<Wire, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.map(
        Effect.promise(() => import("undici")),
        ({ Agent }) =>
          new Agent({
            // A call's deadline is the caller's (the Pool's), and a notification stream may rightly
            // be quiet for hours: undici's own 5-minute waits for headers and for body would cut both.
            headersTimeout: 0,
            bodyTimeout: 0,
            ...(options.socketPath === undefined ? {} : { connect: { socketPath: options.socketPath } })
          })
      ),
      (agent) => Effect.promise(() => agent.destroy().catch(() => undefined))
    ),
    (agent): Wire => {
      const inFlight = new Members<Exchange>()
      // A wire sends to a few URLs (a server's endpoint, its SSE endpoint), each on every call:
      // each is parsed once. Bounded for a wire given many.
      const targets = new Map<string, Target>()
      const target = (url: string): Target => {
        let found = targets.get(url)
        if (found === undefined) {
          if (targets.size >= 64) targets.clear()
          const parsed = new URL(url)
          found = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` }
          targets.set(url, found)
        }
        return found
      }
      const open = (req: WireRequest, reader: BodyReader): Exchange => {
        let where: Target | Error
        try {
          where = target(req.url)
        } catch (e) {
          where = e instanceof Error ? e : new Error(String(e))
        }
        const exchange = new Exchange(
          req.url,
          where instanceof Error
            ? { origin: "", path: "", method: req.method }
            : { origin: where.origin, path: where.path, method: req.method, headers: req.headers, body: req.body ?? null },
          agent,
          reader
        )
        if (where instanceof Error) {
          exchange.abort(unreachable(req.url, where))
          return exchange
        }
        exchange.onLeave(inFlight.add(exchange))
        const inPlace = req.inPlace
        if (inPlace !== undefined) {
          exchange.onLeave(inPlace.waitingOn(() => {
            exchange.cut = true
            exchange.abort()
          }))
        }
        exchange.dispatch()
        return exchange
      }
      return {
        abortInFlight: Effect.sync(() => {
          for (const exchange of inFlight.values()) exchange.abort()
        }),
        dispatch: open,
        send: (req) =>
          Effect.flatMap(
            Effect.async<WireResponse & WireExchange, TransportClosed>((resume) => {
              const exchange = open(req, {
                begin: (response) => {
                  resume(Effect.succeed(response))
                  return false
                },
                chunk: () => undefined,
                // Before its start an exchange fails only as TransportClosed.
                end: (failure) => resume(Effect.fail(failure?._tag === "TransportClosed" ? failure : unreachable(req.url, failure)))
              })
              return Effect.sync(() => exchange.abandon())
            }),
            (response) =>
              // A body not read to its end when the scope closes is abandoned: the request is aborted
              // (the connection goes with it) rather than left for the server to finish. Added to the
              // scope as it is: `Effect.addFinalizer` would diff the fiber's FiberRefs twice per
              // exchange to restore them around a finalizer that reads none.
              Effect.as(
                Effect.scopeWith((scope) => Scope.addFinalizer(scope, Effect.sync(() => response.release()))),
                response
              )
          )
      }
    }
  )
