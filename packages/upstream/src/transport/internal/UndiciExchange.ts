/**
 * One exchange of the wire (Wire.ts) on undici's dispatcher: the handler undici tells of the
 * answer as it arrives, the response the sender reads, and the failures it reports in transport
 * terms.
 */
import * as Effect from "effect/Effect"
import type { Dispatcher } from "undici"
import { FrameTooLarge, TransportClosed } from "../Transport.js"
import type { BodyReader, Failure, WireExchange, WireResponse } from "../WireModel.js"

/** The cause chain of a failure as one line ("connect ECONNREFUSED 127.0.0.1:1"). */
const describeCause = (cause: unknown): string => {
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

export const unreachable = (url: string, cause: unknown) => new TransportClosed({ reason: `cannot reach ${url}: ${describeCause(cause)}` })
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

/**
 * One exchange: undici's handler of its request, and the response it answers with. Undici calls
 * the `on…` methods as the answer arrives; its reader hears the start, and either takes the body
 * in place or leaves it to be read through `text` and `next`. A body arriving before anyone reads
 * it is then kept, up to MaxUnread, and the connection paused until it is read (a body read whole
 * is bounded by its cap instead).
 */
export class Exchange implements Dispatcher.DispatchHandler, WireResponse, WireExchange {
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
