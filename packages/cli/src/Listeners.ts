/**
 * The daemon's two listeners — loopback TCP for hosts and the owner-only unix socket for the CLI —
 * each serving its own HttpApp (the TCP one behind the Host/Origin/token policy, the socket's
 * not), with a shutdown that lets requests in flight finish and answers the rest.
 *
 * `/mcp` on either listener runs on a thin node:http adapter (NodeHttpApp): it carries every tool
 * call, and the platform's handler (a span, a scope and middleware per request) cost more than the
 * call. Everything else stays on the platform's handler.
 *
 * Both listen with a deep backlog (`Backlog`), so a burst of connections while the event loop is
 * busy waits in the kernel's queue instead of being dropped or reset; accepting stays cheap (no
 * work per connection before its first request).
 *
 * Node's `server.close()` waits for every open connection, and an SSE stream (a legacy GET, a long
 * call) may never end on its own; so shutdown is staged:
 * 1. stop accepting connections, and tell the apps they are `draining` (they end the streams that
 *    never end by themselves);
 * 2. give the requests in flight the grace period to finish (an exchange is in flight from its
 *    request to the end of its response, streamed bodies included);
 * 3. tell the apps they are `stopping`: whatever still runs is cancelled and answered with an
 *    error; give those answers a moment to be written;
 * 4. close whatever is still open (which interrupts those request fibers too).
 * Finalizers run uninterruptibly, and a timeout cannot give up on an uninterruptible wait; nor can
 * the finalizer's own fiber simply turn interruptible, since SIGTERM arrives as its interruption and
 * would cut the stages short at once. So the stages run in a fiber of their own, awaited.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type { ShutdownSignals } from "@mcpx-fx/server/Shutdown"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
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

/**
 * How much a client may hold of the daemon. A client that trickles its headers or body is
 * answered 408 and cut off once its time is up (Node checks every `CheckEvery`), so slow requests
 * cannot keep sockets for minutes; a response may still stream as long as it needs. TCP takes at
 * most `maxConnections` at once, so a flood of connections cannot use up the process's file
 * descriptors: the CLI socket, the upstreams and the state files keep theirs.
 */
export interface Limits {
  readonly headersTimeout: Duration.DurationInput
  readonly requestTimeout: Duration.DurationInput
  /** 0: the process's open-file limit less `ReservedFds`. */
  readonly maxConnections: number
}

/** What the daemon uses when the settings say nothing (the registry's defaults). */
export const defaultLimits: Limits = { headersTimeout: "10 seconds", requestTimeout: "60 seconds", maxConnections: 0 }

/** File descriptors kept back from TCP clients for everything else the daemon opens. */
export const ReservedFds = 256

/** How often Node looks for requests past their time. */
const CheckEvery = Duration.seconds(1)

/** The soft limit on open files (which Node raises to the hard limit at its start), where the OS says. */
const openFileLimit = (): number | undefined => {
  try {
    const line = Fs.readFileSync("/proc/self/limits", "utf8").split("\n").find((l) => l.startsWith("Max open files"))
    const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0]
    return soft === undefined || soft === "unlimited" ? undefined : Number(soft)
  } catch {
    return undefined
  }
}

/** TCP's connection cap for `setting` (0: derived from the open-file limit, 4096 where none is known). */
export const connectionCap = (setting: number): number => {
  if (setting > 0) return setting
  const limit = openFileLimit()
  return limit === undefined ? 4096 : Math.max(64, limit - ReservedFds)
}

/** The apps the two listeners serve. */
export interface Apps<E, R> {
  /** For TCP, which browsers and other machines can reach. */
  readonly tcp: HttpApp.Default<E, R>
  /** For the owner-only unix socket. */
  readonly socket: HttpApp.Default<E, R>
  /** `/mcp` on each listener, served through the thin adapter: it needs nothing but its request. */
  readonly mcp: { readonly tcp: HttpApp.Default; readonly socket: HttpApp.Default }
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

/** What sits at the socket path when it is not something a daemon left there. */
const kindOf = (stat: Fs.Stats): string =>
  stat.isDirectory()
    ? "a directory"
    : stat.isSymbolicLink()
    ? "a symbolic link"
    : stat.isFIFO()
    ? "a FIFO"
    : stat.isCharacterDevice() || stat.isBlockDevice()
    ? "a device"
    : "not a socket"

/** The socket path holds something mcpx-fx will not remove on its own. */
export class SocketPathError extends Data.TaggedError("SocketPathError")<{ readonly path: string; readonly found: string }> {
  override get message(): string {
    const remove = this.found === "a directory" ? `rm -r ${this.path}` : `rm ${this.path}`
    return `cannot use ${this.path} for the daemon's CLI socket: it is ${this.found}. ` +
      `Remove it (\`${remove}\`) or use another state directory (MCPX_STATE_DIR)`
  }
}

/**
 * Clears the socket path for a new listener. A socket (or a plain file) there was left by a daemon
 * that died — the caller holds the state directory's lock, so nothing live owns it — and is
 * removed; anything else is someone's, and is reported rather than touched.
 */
const clearSocketPath = (path: string): Effect.Effect<void, SocketPathError> =>
  Effect.suspend(() => {
    let stat: Fs.Stats
    try {
      stat = Fs.lstatSync(path)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      return code === "ENOENT" ? Effect.void : Effect.fail(new SocketPathError({ path, found: `unreadable (${String(e)})` }))
    }
    if (!stat.isSocket() && !stat.isFile()) return Effect.fail(new SocketPathError({ path, found: kindOf(stat) }))
    return Effect.try({
      try: () => Fs.rmSync(path, { force: true }),
      catch: (e) => new SocketPathError({ path, found: `impossible to remove (${String(e)})` })
    })
  })

/** How long the answers given at `stopping` have to be written before connections are cut. */
const AnswerWindow = Duration.seconds(1)

/**
 * Listens on `host:port` and on the unix socket `socket`, then serves the apps `build` makes from
 * where they ended up and the shutdown signals they should heed, until the scope closes; at close,
 * requests in flight get `grace` to finish, then are answered (see the module comment).
 */
export const serve = <E, R, BE, BR>(
  build: (listening: Listening, shutdown: ShutdownSignals) => Effect.Effect<Apps<E, R>, BE, BR>,
  options: {
    readonly host: string
    readonly port: number
    readonly socket: string
    readonly grace: Duration.DurationInput
    readonly limits?: Limits
  }
): Effect.Effect<
  Listening,
  ListenError | SocketPathError | BE,
  Scope.Scope | BR | Exclude<R, HttpServerRequest.HttpServerRequest | Scope.Scope>
> =>
  Effect.gen(function*() {
    const draining = yield* Deferred.make<void>()
    const stopping = yield* Deferred.make<void>()
    // Exchanges in flight, counted by Node: from the request to the end of its response, so a
    // streamed body (an SSE reply) counts until its last byte, as it must.
    let inFlight = 0
    const onIdle = new Set<() => void>()
    const idle = Effect.async<void>((resume) => {
      if (inFlight === 0) return resume(Effect.void)
      const done = () => resume(Effect.void)
      onIdle.add(done)
      return Effect.sync(() => onIdle.delete(done))
    })
    const counted = (handler: () => Http.RequestListener): Http.RequestListener => (request, response) => {
      inFlight++
      response.once("close", () => {
        inFlight--
        if (inFlight > 0) return
        const waiting = [...onIdle]
        onIdle.clear()
        for (const done of waiting) done()
      })
      handler()(request, response)
    }
    let tcpHandler: Http.RequestListener = notReady
    let socketHandler: Http.RequestListener = notReady
    const limits = options.limits ?? defaultLimits
    const requestTimeout = Duration.toMillis(limits.requestTimeout)
    const timeouts: Http.ServerOptions = {
      // Node refuses a headers timeout longer than the request's.
      headersTimeout: Math.min(Duration.toMillis(limits.headersTimeout), requestTimeout),
      requestTimeout,
      connectionsCheckingInterval: Duration.toMillis(CheckEvery)
    }
    const tcp = Http.createServer(timeouts, counted(() => tcpHandler))
    tcp.maxConnections = connectionCap(limits.maxConnections)
    const unix = Http.createServer(timeouts, counted(() => socketHandler))
    // Registered first, so it runs last: whatever a failed start left open is closed.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        tcp.closeAllConnections()
        unix.closeAllConnections()
        if (tcp.listening) tcp.close()
        if (unix.listening) unix.close()
      })
    )
    yield* listen(tcp, { host: options.host, port: options.port, backlog: Backlog }, `${options.host}:${options.port}`)
    yield* clearSocketPath(options.socket)
    yield* listen(unix, { path: options.socket, backlog: Backlog }, options.socket)
    yield* Effect.sync(() => Fs.chmodSync(options.socket, 0o600))
    yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(options.socket, { force: true })))
    const address = tcp.address()
    const port = typeof address === "object" && address !== null ? address.port : options.port
    const listening: Listening = { host: options.host, port, socket: options.socket }
    let stoppingCome = false
    const apps = yield* build(listening, {
      draining: Deferred.await(draining),
      stopping: Deferred.await(stopping),
      stoppingNow: () => stoppingCome
    })
    const runtime = yield* Effect.runtime<never>()
    const routed = (mcp: Http.RequestListener, other: Http.RequestListener): Http.RequestListener => (request, response) =>
      isMcpPath(request.url) ? mcp(request, response) : other(request, response)
    tcpHandler = routed(NodeHttpApp.makeHandler(apps.mcp.tcp, runtime), yield* NodeHttpServer.makeHandler<R, E>(apps.tcp))
    socketHandler = routed(NodeHttpApp.makeHandler(apps.mcp.socket, runtime), yield* NodeHttpServer.makeHandler<R, E>(apps.socket))
    // Registered after the apps were built, so it runs before their own finalizers (legacy
    // sessions, the gateway below them): they are still up while calls finish.
    const stages = Effect.gen(function*() {
      const closed = yield* Effect.fork(Effect.all([close(tcp), close(unix)], { concurrency: 2 }))
      yield* Deferred.succeed(draining, undefined)
      yield* Effect.timeoutOption(idle, options.grace)
      stoppingCome = true
      yield* Deferred.succeed(stopping, undefined)
      yield* Effect.timeoutOption(idle, AnswerWindow)
      tcp.closeAllConnections()
      unix.closeAllConnections()
      yield* Fiber.join(closed)
    })
    yield* Effect.addFinalizer(() => Effect.flatMap(Effect.forkDaemon(Effect.interruptible(stages)), Fiber.join))
    return listening
  })
