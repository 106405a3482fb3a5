/**
 * The daemon's two listeners — loopback TCP for hosts and the owner-only unix socket for the CLI —
 * each serving its own HttpApp (the TCP one behind the Host/Origin/token policy, the socket's
 * not), with a shutdown that lets requests in flight finish.
 *
 * Both listen with a deep backlog (`Backlog`), so a burst of connections while the event loop is
 * busy waits in the kernel's queue instead of being dropped or reset; accepting stays cheap (no
 * work per connection before its first request).
 *
 * `/mcp` on either listener runs on a thin node:http adapter (NodeHttpApp): it carries every tool
 * call, and the platform's handler (a span, a scope and middleware per request) cost more than the
 * call. Everything else stays on the platform's handler.
 *
 * Node's `server.close()` waits for every open connection, and an SSE stream (a legacy GET, a long
 * call) may never end on its own; so shutdown is staged: stop accepting, give requests in flight
 * the grace period, then close whatever is still open (which interrupts those request fibers, so
 * their upstream calls are cancelled too).
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import * as Fs from "node:fs"
import * as NodeHttpApp from "./NodeHttpApp.js"

/** A listener could not be opened (port taken, socket path unusable). */
export class ListenError extends Data.TaggedError("ListenError")<{ readonly where: string; readonly cause: unknown }> {
  override get message(): string {
    const code = (this.cause as NodeJS.ErrnoException | undefined)?.code
    const hint = code === "EADDRINUSE" ? " (address in use; pick another with --daemon-port, or 0 for any free port)" : ""
    return `cannot listen on ${this.where}: ${String(this.cause)}${hint}`
  }
}

/**
 * The listen backlog asked for: far past Node's 511, so a storm of a thousand or more connections
 * is queued. The kernel caps it at `net.core.somaxconn` (4096 on current Linux).
 */
export const Backlog = 4096

/** The apps the two listeners serve. */
export interface Apps<E, R, MR> {
  /** For TCP, which browsers and other machines can reach. */
  readonly tcp: HttpApp.Default<E, R>
  /** For the owner-only unix socket. */
  readonly socket: HttpApp.Default<E, R>
  /** `/mcp` on each listener, served through the thin adapter. */
  readonly mcp: { readonly tcp: HttpApp.Default<never, MR>; readonly socket: HttpApp.Default<never, MR> }
}

/** Requests in flight, counted without an Effect per request, and a wait for there to be none. */
const makeInFlight = () => {
  let count = 0
  const waiting = new Set<() => void>()
  return {
    enter: () => {
      count++
    },
    leave: () => {
      if (--count > 0) return
      for (const wake of waiting) wake()
      waiting.clear()
    },
    idle: Effect.async<void>((resume) => {
      if (count === 0) return resume(Effect.void)
      const wake = () => resume(Effect.void)
      waiting.add(wake)
      return Effect.sync(() => void waiting.delete(wake))
    })
  }
}

const isMcpPath = (url: string | undefined): boolean => {
  if (url === undefined) return false
  const end = url.indexOf("?")
  const path = end < 0 ? url : url.slice(0, end)
  return path === "/mcp" || path === "/mcp/"
}

/** Where the listeners ended up. */
export interface Listening {
  readonly host: string
  readonly port: number
  readonly socket: string
}

const listen = (server: Http.Server, options: { host: string; port: number; backlog: number } | { path: string; backlog: number }, where: string) =>
  Effect.async<void, ListenError>((resume) => {
    const onError = (cause: Error) => resume(Effect.fail(new ListenError({ where, cause })))
    server.once("error", onError)
    server.listen(options, () => {
      server.off("error", onError)
      resume(Effect.void)
    })
  })

const close = (server: Http.Server) =>
  Effect.async<void>((resume) => {
    if (!server.listening) return resume(Effect.void)
    server.close(() => resume(Effect.void))
  })

// Between listening and the app being ready (it needs the port the listener got), requests are
// told to come back rather than left hanging.
const notReady: Http.RequestListener = (_request, response) => {
  response.writeHead(503, { "content-type": "application/json", "retry-after": "1" })
  response.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32603, message: "mcpx-fx is starting" } }))
}

/**
 * Listens on `host:port` and on the unix socket `socket`, then serves the apps `build` makes from
 * where they ended up, until the scope closes; at close, requests in flight get `grace` before
 * their connections are cut.
 */
export const serve = <E, R, MR, BE, BR>(
  build: (listening: Listening) => Effect.Effect<Apps<E, R, MR>, BE, BR>,
  options: { readonly host: string; readonly port: number; readonly socket: string; readonly grace: Duration.DurationInput }
): Effect.Effect<
  Listening,
  ListenError | BE,
  Scope.Scope | BR | Exclude<R, HttpServerRequest.HttpServerRequest | Scope.Scope> | Exclude<MR, HttpServerRequest.HttpServerRequest>
> =>
  Effect.gen(function*() {
    const inFlight = makeInFlight()
    let tcpHandler: Http.RequestListener = notReady
    let socketHandler: Http.RequestListener = notReady
    const tcp = Http.createServer((request, response) => tcpHandler(request, response))
    const unix = Http.createServer((request, response) => socketHandler(request, response))
    // Registered before listening so it runs after every later finalizer of the scope is done
    // with the servers (finalizers run in reverse order).
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        const closing = Effect.all([close(tcp), close(unix)], { concurrency: 2 })
        const closer = yield* Effect.fork(closing)
        yield* Effect.timeout(inFlight.idle, Duration.decode(options.grace)).pipe(Effect.ignore)
        tcp.closeAllConnections()
        unix.closeAllConnections()
        yield* closer.await
      })
    )
    yield* listen(tcp, { host: options.host, port: options.port, backlog: Backlog }, `${options.host}:${options.port}`)
    yield* Effect.sync(() => {
      // A socket file left by a daemon that died would make listen fail with EADDRINUSE; the
      // caller holds the state directory's lock, so nothing live owns it.
      Fs.rmSync(options.socket, { force: true })
    })
    yield* listen(unix, { path: options.socket, backlog: Backlog }, options.socket)
    yield* Effect.sync(() => Fs.chmodSync(options.socket, 0o600))
    yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(options.socket, { force: true })))
    const address = tcp.address()
    const port = typeof address === "object" && address !== null ? address.port : options.port
    const listening: Listening = { host: options.host, port, socket: options.socket }
    const apps = yield* build(listening)
    const counted = (app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
      Effect.acquireUseRelease(
        Effect.sync(inFlight.enter),
        () => app,
        () => Effect.sync(inFlight.leave)
      )
    const runtime = yield* Effect.runtime<Exclude<MR, HttpServerRequest.HttpServerRequest>>()
    const hooks = { onStart: inFlight.enter, onEnd: inFlight.leave }
    const routed = (mcp: Http.RequestListener, other: Http.RequestListener): Http.RequestListener => (request, response) =>
      isMcpPath(request.url) ? mcp(request, response) : other(request, response)
    tcpHandler = routed(
      NodeHttpApp.makeHandler(apps.mcp.tcp, runtime, hooks),
      yield* NodeHttpServer.makeHandler<R, E>(counted(apps.tcp))
    )
    socketHandler = routed(
      NodeHttpApp.makeHandler(apps.mcp.socket, runtime, hooks),
      yield* NodeHttpServer.makeHandler<R, E>(counted(apps.socket))
    )
    return listening
  })
