/**
 * The daemon's two listeners — loopback TCP for hosts and the owner-only unix socket for the CLI —
 * serving one HttpApp, with a shutdown that lets requests in flight finish.
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

/** Where the listeners ended up. */
export interface Listening {
  readonly host: string
  readonly port: number
  readonly socket: string
}

const listen = (server: Http.Server, options: { host: string; port: number } | { path: string }, where: string) =>
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
 * Listens on `host:port` and on the unix socket `socket`, then serves the app `build` makes from
 * where they ended up, until the scope closes; at close, requests in flight get `grace` before
 * their connections are cut.
 */
export const serve = <E, R, BE, BR>(
  build: (listening: Listening) => Effect.Effect<HttpApp.Default<E, R>, BE, BR>,
  options: { readonly host: string; readonly port: number; readonly socket: string; readonly grace: Duration.DurationInput }
): Effect.Effect<
  Listening,
  ListenError | BE,
  Scope.Scope | BR | Exclude<R, HttpServerRequest.HttpServerRequest | Scope.Scope>
> =>
  Effect.gen(function*() {
    const inFlight = yield* SubscriptionRef.make(0)
    let handler: Http.RequestListener = notReady
    const tcp = Http.createServer((request, response) => handler(request, response))
    const unix = Http.createServer((request, response) => handler(request, response))
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
    yield* listen(tcp, { host: options.host, port: options.port }, `${options.host}:${options.port}`)
    yield* Effect.sync(() => {
      // A socket file left by a daemon that died would make listen fail with EADDRINUSE; the
      // caller holds the state directory's lock, so nothing live owns it.
      Fs.rmSync(options.socket, { force: true })
    })
    yield* listen(unix, { path: options.socket }, options.socket)
    yield* Effect.sync(() => Fs.chmodSync(options.socket, 0o600))
    yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(options.socket, { force: true })))
    const address = tcp.address()
    const port = typeof address === "object" && address !== null ? address.port : options.port
    const listening: Listening = { host: options.host, port, socket: options.socket }
    const app = yield* build(listening)
    const counted: HttpApp.Default<E, R> = Effect.acquireUseRelease(
      SubscriptionRef.update(inFlight, (n) => n + 1),
      () => app,
      () => SubscriptionRef.update(inFlight, (n) => n - 1)
    )
    handler = yield* NodeHttpServer.makeHandler<R, E>(counted)
    return listening
  })
