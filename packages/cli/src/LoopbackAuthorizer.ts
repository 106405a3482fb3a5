/**
 * How `mcpx-fx auth login` completes an authorization with a person: the redirect is received on
 * a loopback port (127.0.0.1, the configured `redirectPort`, else the one registered before, else
 * one the system picks), the authorization URL is printed on stderr and opened in a browser when
 * there is one to open, and the first redirect to `/callback` finishes it.
 *
 * A browser is only started for a person at a terminal with a desktop: never without a TTY (so
 * never in tests or CI), never with `--no-browser` or MCPX_NO_BROWSER set.
 */
import { AuthorizationFailed, type Authorizer } from "@mcpx-fx/upstream/auth/AuthModel"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

/** How long a login waits for the person to approve. */
export const LoginTimeout = Duration.minutes(5)

const page = (title: string, text: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head>` +
  `<body style="font-family: sans-serif; margin: 3em"><h1>${title}</h1><p>${text}</p></body></html>`

/** Whether a browser can be shown to someone: a terminal, a desktop, and nobody said no. */
export const browserAvailable = (env: Readonly<Record<string, string | undefined>>, noBrowser: boolean): boolean => {
  if (noBrowser || (env.MCPX_NO_BROWSER ?? "") !== "" || (env.CI ?? "") !== "") return false
  if (!process.stderr.isTTY) return false
  if (process.platform === "darwin" || process.platform === "win32") return true
  return (env.DISPLAY ?? "") !== "" || (env.WAYLAND_DISPLAY ?? "") !== ""
}

const openBrowser = (url: string) =>
  Effect.sync(() => {
    const [command, args] = process.platform === "darwin"
      ? ["open", [url]] as const
      : process.platform === "win32"
      ? ["cmd", ["/c", "start", "", url]] as const
      : ["xdg-open", [url]] as const
    try {
      const child = spawn(command, [...args], { detached: true, stdio: "ignore" })
      child.on("error", () => undefined)
      child.unref()
    } catch {
      // The URL is printed either way; a missing opener only costs the person a copy and paste.
    }
  })

const listen = (server: Http.Server, port: number) =>
  Effect.async<number, NodeJS.ErrnoException>((resume) => {
    const onError = (e: NodeJS.ErrnoException) => resume(Effect.fail(e))
    server.once("error", onError)
    server.listen(port, "127.0.0.1", () => {
      server.off("error", onError)
      resume(Effect.succeed((server.address() as AddressInfo).port))
    })
  })

/** The loopback Authorizer; `say` prints for the person (stderr). */
export const loopbackAuthorizer = (options: {
  readonly say: (line: string) => Effect.Effect<void>
  readonly browser: boolean
}): Authorizer => ({
  receive: (name, preferredPort) =>
    Effect.gen(function*() {
      const arrived = yield* Deferred.make<URL>()
      let redirectUri = ""
      const server = Http.createServer((req, res) => {
        const url = new URL(req.url ?? "/", redirectUri)
        if (req.method !== "GET" || url.pathname !== "/callback") {
          res.writeHead(404, { "content-type": "text/plain" }).end("not found\n")
          return
        }
        const refused = url.searchParams.get("error")
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(
          refused === null
            ? page("mcpx-fx is authorized", `You can close this tab; mcpx-fx finishes the login for ${name}.`)
            : page("Authorization refused", `The authorization server said: ${refused.replace(/[<>&"]/g, "")}`)
        )
        Deferred.unsafeDone(arrived, Effect.succeed(url))
      })
      const port = yield* Effect.acquireRelease(
        listen(server, preferredPort ?? 0).pipe(
          // The port registered before is taken: another one (and a fresh registration) will do.
          Effect.catchIf(
            (e) => e.code === "EADDRINUSE" && preferredPort !== undefined,
            () => Effect.zipRight(options.say(`port ${preferredPort} is in use; listening on another one`), listen(server, 0))
          ),
          Effect.mapError((e) => new AuthorizationFailed({ server: name, reason: `cannot listen for the redirect on 127.0.0.1: ${e.message}` }))
        ),
        () =>
          Effect.async<void>((done) => {
            server.closeAllConnections()
            server.close(() => done(Effect.void))
          })
      )
      redirectUri = `http://127.0.0.1:${port}/callback`
      return {
        redirectUri,
        complete: (authorizationUrl: URL) =>
          Effect.gen(function*() {
            yield* options.say(`To authorize mcpx-fx for ${name}, open this URL in a browser:\n\n  ${authorizationUrl.href}\n`)
            if (options.browser) yield* openBrowser(authorizationUrl.href)
            yield* options.say(`Waiting for the authorization server to redirect to ${redirectUri} …`)
            return yield* Deferred.await(arrived).pipe(
              Effect.timeoutFail({
                duration: LoginTimeout,
                onTimeout: () => new AuthorizationFailed({ server: name, reason: `no redirect arrived within ${Duration.format(LoginTimeout)}` })
              })
            )
          })
      }
    })
})
