/**
 * The daemon's two listeners — loopback TCP for hosts and the owner-only unix socket for the CLI —
 * each serving its own HttpApp (the TCP one behind the Host/Origin/token policy, the socket's
 * not), with a shutdown that lets requests in flight finish.
 *
 * Both listen with a deep backlog (`Backlog`), so a burst of connections while the event loop is
 * busy waits in the kernel's queue instead of being dropped or reset; accepting stays cheap (no
 * work per connection before its first request).
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
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Stream from "effect/Stream"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import * as Fs from "node:fs"

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
export interface Apps<E, R> {
  /** For TCP, which browsers and other machines can reach. */
  readonly tcp: HttpApp.Default<E, R>
  /** For the owner-only unix socket. */
  readonly socket: HttpApp.Default<E, R>
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
export const serve = <E, R, BE, BR>(
  build: (listening: Listening) => Effect.Effect<Apps<E, R>, BE, BR>,
  options: { readonly host: string; readonly port: number; readonly socket: string; readonly grace: Duration.DurationInput }
): Effect.Effect<
  Listening,
  ListenError | BE,
  Scope.Scope | BR | Exclude<R, HttpServerRequest.HttpServerRequest | Scope.Scope>
> =>
  Effect.gen(function*() {
    const inFlight = yield* SubscriptionRef.make(0)
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
        const idle = inFlight.changes.pipe(Stream.filter((n) => n === 0), Stream.take(1), Stream.runDrain)
        yield* Effect.timeout(idle, Duration.decode(options.grace)).pipe(Effect.ignore)
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
        SubscriptionRef.update(inFlight, (n) => n + 1),
        () => app,
        () => SubscriptionRef.update(inFlight, (n) => n - 1)
      )
    tcpHandler = yield* NodeHttpServer.makeHandler<R, E>(counted(apps.tcp))
    socketHandler = yield* NodeHttpServer.makeHandler<R, E>(counted(apps.socket))
    return listening
  })
