/**
 * A thin node:http adapter for an HttpApp: one fiber per request, the app's response written
 * straight to the node response. The platform's handler (`NodeHttpServer.makeHandler`) wraps every
 * request in a tracing span, a request scope, pre-response handlers and error middleware; on the
 * daemon's `/mcp`, which carries every tool call, that wrapping cost more CPU than the call itself
 * (docs/performance.md), so `/mcp` is served here and `/v1` stays on the platform's handler.
 *
 * What the app sees is an ordinary `HttpServerRequest` whose body is read from the node stream
 * directly. A client that goes away before its response has ended interrupts the request's fiber
 * (as the platform does, with `clientAbortFiberId`), so the call under it is cancelled, unless the
 * app detached the request from its client (`ClientDetach`: a legacy session's request, which a
 * dropped connection must not cancel, run in place). A detached request that something else
 * interrupts is answered with the response its cause carries, if its client is still there.
 */
import * as NodeMultipart from "@effect/platform-node/NodeMultipart"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Cookies from "@effect/platform/Cookies"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import type * as Headers from "@effect/platform/Headers"
import type * as HttpMethod from "@effect/platform/HttpMethod"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as UrlParams from "@effect/platform/UrlParams"
import * as BodyAtHand from "@mcpx-fx/server/BodyAtHand"
import * as ClientDetach from "@mcpx-fx/server/ClientDetach"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import type * as Http from "node:http"

/** The request as the app sees it: the node request, with its body read on demand. */
class NodeRequest extends Inspectable.Class implements HttpServerRequest.HttpServerRequest, ClientDetach.Detachable, BodyAtHand.WithBodyAtHand {
  // On the prototype (below the class), not defined on every request: a symbol-keyed field is
  // a property definition per construction.
  declare readonly [HttpServerRequest.TypeId]: HttpServerRequest.TypeId
  declare readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId
  /** The body, once the app has read it from the node stream. */
  private body: Effect.Effect<Uint8Array, HttpServerError.RequestError> | undefined
  /** The body, when it was read before the app ran (nearly every POST): handed over without a step. */
  private readonly read: Uint8Array | undefined
  /** Set once the app said its client's going away must not interrupt it (on the original, not a copy). */
  detached = false

  // Plain fields, and no object of the exchange's own: one per request linking the request, its
  // response and its fiber made every modern call 1.07-1.15x the CPU in `bench:compare`.
  constructor(
    readonly source: Http.IncomingMessage,
    private readonly res: Http.ServerResponse,
    /** The body, when it was read before the app ran. */
    read: Uint8Array | undefined = undefined,
    readonly url: string = source.url ?? "/",
    private readonly headersOverride?: Headers.Headers,
    private readonly remoteAddressOverride?: string,
    /** The request this one is a modified copy of. */
    private readonly original?: NodeRequest
  ) {
    super()
    this.read = read
  }

  /** The body, when it was read before the app ran: the endpoint decodes it without a copy. */
  get [BodyAtHand.BodyAtHand](): Uint8Array | undefined {
    return this.read ?? this.original?.read
  }

  /** Called from the request's own fiber (ClientDetach), which is then watched for a carried reply. */
  [ClientDetach.Detach](): void {
    const request = this.original ?? this
    if (request.detached) return
    request.detached = true
    const fiber = Fiber.getCurrentFiber()
    if (Option.isSome(fiber)) fiber.value.addObserver(answerCarried(request.res))
  }

  private error(cause: unknown, description?: string): HttpServerError.RequestError {
    return new HttpServerError.RequestError({
      request: this,
      reason: "Decode",
      cause,
      ...(description === undefined ? {} : { description })
    })
  }

  get originalUrl(): string {
    return this.source.url ?? "/"
  }

  get method(): HttpMethod.HttpMethod {
    return (this.source.method ?? "GET").toUpperCase() as HttpMethod.HttpMethod
  }

  get headers(): Headers.Headers {
    // Node lower-cases the names; the values are what the platform's own request hands over too.
    return this.headersOverride ?? (this.source.headers as Headers.Headers)
  }

  get remoteAddress(): Option.Option<string> {
    return Option.fromNullable(this.remoteAddressOverride ?? this.source.socket.remoteAddress)
  }

  get cookies(): Record<string, string> {
    return Cookies.parseHeader(this.headers.cookie ?? "")
  }

  /** The whole body, read once from the node stream (no Stream in between). */
  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpServerError.RequestError> {
    const read = this[BodyAtHand.BodyAtHand]
    if (read !== undefined) return Effect.succeed(arrayBufferOf(read))
    return Effect.map(this.bytes, arrayBufferOf)
  }

  private get bytes(): Effect.Effect<Uint8Array, HttpServerError.RequestError> {
    if (this.read !== undefined) return Effect.succeed(this.read)
    if (this.body !== undefined) return this.body
    // A copy's body is its original's, read once.
    if (this.original !== undefined) return this.original.bytes
    const source = this.source
    return Effect.async<Uint8Array, HttpServerError.RequestError>((resume) => {
      const chunks: Array<Buffer> = []
      const onData = (c: Buffer) => void chunks.push(c)
      const onEnd = () => {
        cleanup()
        const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
        // Read once: a second look at the body is the same bytes.
        this.body = Effect.succeed(bytes)
        resume(this.body)
      }
      const onError = (e: Error) => {
        cleanup()
        resume(Effect.fail(this.error(e)))
      }
      // A client that closes before the end of its body has left nothing to read.
      const onClose = () => {
        if (!source.complete) onError(new Error("the client closed the connection before the end of the body"))
      }
      const cleanup = () => {
        source.off("data", onData)
        source.off("end", onEnd)
        source.off("error", onError)
        source.off("close", onClose)
      }
      // `on`, not `once`: the first of them removes all four, and `once` wraps each listener in an
      // object of its own, three per request.
      source.on("data", onData)
      source.on("end", onEnd)
      source.on("error", onError)
      source.on("close", onClose)
      // No canceller: an interrupted read leaves its listeners only until the body ends, fails or
      // its connection closes, one of which always comes, and a canceller wraps every read in an
      // interruption handler of a few operations more.
    })
  }

  get text(): Effect.Effect<string, HttpServerError.RequestError> {
    return Effect.map(this.bytes, (b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("utf8"))
  }

  get json(): Effect.Effect<unknown, HttpServerError.RequestError> {
    return Effect.flatMap(this.text, (t) => Effect.try({ try: () => (t === "" ? null : JSON.parse(t)), catch: (e) => this.error(e) }))
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpServerError.RequestError> {
    return Effect.flatMap(this.text, (t) => Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(t)), catch: (e) => this.error(e) }))
  }

  get stream(): Stream.Stream<Uint8Array, HttpServerError.RequestError> {
    return NodeStream.fromReadable<HttpServerError.RequestError, Uint8Array>(() => this.source, (e) => this.error(e))
  }

  get multipart() {
    return NodeMultipart.persisted(this.source, this.source.headers)
  }

  get multipartStream() {
    return NodeMultipart.stream(this.source, this.source.headers)
  }

  get upgrade() {
    return Effect.fail(this.error(undefined, "not an upgradeable ServerRequest"))
  }

  modify(options: { readonly url?: string; readonly headers?: Headers.Headers; readonly remoteAddress?: string }): HttpServerRequest.HttpServerRequest {
    return new NodeRequest(
      this.source,
      this.res,
      undefined,
      options.url ?? this.url,
      options.headers ?? this.headersOverride,
      options.remoteAddress ?? this.remoteAddressOverride,
      this.original ?? this
    )
  }

  override toJSON(): unknown {
    return { _id: "@effect/platform/HttpServerRequest", method: this.method, url: this.originalUrl }
  }
}

/** The bytes as an ArrayBuffer of their own (a chunk of node's is a view of a larger one). */
const arrayBufferOf = (b: Uint8Array): ArrayBuffer => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer

Object.defineProperty(NodeRequest.prototype, HttpServerRequest.TypeId, { value: HttpServerRequest.TypeId })
Object.defineProperty(NodeRequest.prototype, HttpIncomingMessage.TypeId, { value: HttpIncomingMessage.TypeId })

const headersOf = (response: HttpServerResponse.HttpServerResponse): Http.OutgoingHttpHeaders => {
  if (Cookies.isEmpty(response.cookies)) return response.headers
  const existing = response.headers["set-cookie"]
  return {
    ...response.headers,
    "set-cookie": [...Cookies.toSetCookieHeaders(response.cookies), ...(existing === undefined ? [] : [existing])]
  }
}

/**
 * Writes the response; a stream body is written as it comes, waiting for the socket when it is
 * full. A whole body is written by the call itself, not by the effect it returns: every caller
 * runs that effect at once (a fiber's continuation, a fork), and an `Effect.suspend` around it
 * was one more operation per request.
 */
const write = (res: Http.ServerResponse, response: HttpServerResponse.HttpServerResponse): Effect.Effect<void> => {
  // A detached request's client may be gone: its reply is dropped.
  if (res.writableEnded || res.destroyed) return Effect.void
  const body = response.body
  switch (body._tag) {
    case "Empty":
      res.writeHead(response.status, headersOf(response)).end()
      return Effect.void
    case "Uint8Array":
      res.writeHead(response.status, headersOf(response)).end(body.body)
      return Effect.void
    case "Raw":
      if (typeof body.body === "string" || body.body instanceof Uint8Array) {
        res.writeHead(response.status, headersOf(response)).end(body.body)
        return Effect.void
      }
      return Effect.die(new Error("NodeHttpApp: a raw body must be a string or bytes"))
    case "FormData":
      return Effect.die(new Error("NodeHttpApp: form data bodies are not served here"))
    case "Stream": {
      res.writeHead(response.status, headersOf(response))
      // Headers go out now: a client waiting for them must not wait for the first event.
      res.flushHeaders()
      const drained = Effect.unsafeMakeLatch(true)
      res.on("drain", () => drained.unsafeOpen())
      return body.stream.pipe(
        Stream.orDie,
        Stream.runForEachChunk((chunk) => {
          let full = false
          for (const bytes of Chunk.toReadonlyArray(chunk)) full = !res.write(bytes) || full
          if (!full) return Effect.void
          drained.unsafeClose()
          return drained.await
        }),
        Effect.ensuring(Effect.sync(() => {
          if (!res.writableEnded) res.end()
        }))
      )
    }
  }
}

/** A detached request interrupted by the app (a cancellation) ends with its reply in its cause. */
const answerCarried = (res: Http.ServerResponse) => (exit: Exit.Exit<unknown, unknown>): void => {
  if (Exit.isSuccess(exit) || res.writableEnded || res.destroyed) return
  const carried = ClientDetach.carriedResponse(exit.cause)
  // Writing needs no service: the default runtime will do.
  // Suspended: a write that throws (a header node refuses) must fail that fiber, not this observer.
  if (carried !== undefined) Effect.runFork(Effect.suspend(() => write(res, carried)))
}

/** A failure of the app, answered as the platform would (a 500 unless the error says otherwise). */
const failed = (res: Http.ServerResponse) => (cause: Parameters<typeof HttpServerError.causeResponse>[0]) =>
  Effect.flatMap(HttpServerError.causeResponse(cause), ([response]) => write(res, response))

/**
 * The fiber refs a request's fiber starts from: the runtime's, less those at their initial value
 * (a fiber reads the initial value of a ref it does not hold) and the context (each request's
 * fiber is given its own). Starting a fiber forks every ref it is given, one by one.
 */
const requestFiberRefs = (refs: FiberRefs.FiberRefs): FiberRefs.FiberRefs => {
  const none = FiberRefs.empty()
  let kept = FiberRefs.delete(refs, FiberRef.currentContext)
  for (const ref of FiberRefs.fiberRefs(refs)) {
    if (FiberRefs.getOrDefault(refs, ref) === FiberRefs.getOrDefault(none, ref)) kept = FiberRefs.delete(kept, ref)
  }
  return kept
}

/**
 * A node request listener serving `app` with the given runtime. `onStart`/`onEnd` bracket each
 * request (the daemon counts requests in flight for its shutdown grace).
 */
export const makeHandler = (
  app: HttpApp.Default,
  runtime: Runtime.Runtime<never>,
  hooks: { readonly onStart?: () => void; readonly onEnd?: () => void } = {}
): Http.RequestListener => {
  const fiberRefs = requestFiberRefs(runtime.fiberRefs)
  const serve = (req: Http.IncomingMessage, res: Http.ServerResponse, body: Uint8Array | undefined) => {
    const served = Effect.matchCauseEffect(app, { onFailure: failed(res), onSuccess: (response) => write(res, response) })
    // The request is the whole of the fiber's context from its start: the app needs nothing else
    // from it (its services were taken when it was built). Providing the request around the app
    // was a FiberRef swap guarded by acquire/use/release, and adding it to the runtime's context
    // copied the daemon's every service into a new Map, 2 KB of garbage per request.
    const request = new NodeRequest(req, res, body)
    const context = Context.make(HttpServerRequest.HttpServerRequest, request)
    const fiber = Runtime.runFork(
      Runtime.make({
        context,
        runtimeFlags: runtime.runtimeFlags,
        fiberRefs
      }),
      served
    )
    const onEnd = hooks.onEnd
    if (onEnd !== undefined) fiber.addObserver(() => onEnd())
    // `on`: a response closes once, and `once` would wrap the listener in an object per request.
    res.on("close", () => {
      if (!res.writableEnded && !request.detached) fiber.unsafeInterruptAsFork(HttpServerError.clientAbortFiberId)
    })
  }
  return (req, res) => {
    hooks.onStart?.()
    const declared = req.method === "POST" ? Number(req.headers["content-length"]) : Number.NaN
    if (!(declared <= PreReadBytes)) return serve(req, res, undefined)
    // A small body of a declared length (every tool call's) is read before the app runs, with
    // plain listeners: the app then finds it at once instead of its fiber suspending for it and
    // being woken again. A client that leaves before its body ends has nothing to be answered.
    const chunks: Array<Buffer> = []
    const onData = (c: Buffer) => void chunks.push(c)
    const onEnd = () => {
      cleanup()
      serve(req, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))
    }
    const onGone = () => {
      if (req.complete) return
      cleanup()
      hooks.onEnd?.()
    }
    const cleanup = () => {
      req.off("data", onData)
      req.off("end", onEnd)
      req.off("error", onGone)
      req.off("close", onGone)
    }
    // `on`, not `once`: the first of them removes all four (see `bytes`).
    req.on("data", onData)
    req.on("end", onEnd)
    req.on("error", onGone)
    req.on("close", onGone)
  }
}

/**
 * The largest declared body read before the app runs: far above a tool call's, and bounded so
 * a larger one (which the app may refuse unread by its length) is left to the app.
 */
const PreReadBytes = 64 * 1024
