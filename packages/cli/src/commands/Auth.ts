/**
 * `mcpx-fx auth login|status|logout`: OAuth for HTTP upstreams. `login` runs the authorization
 * code flow with a person (the URL on stderr, a browser when there is one, the redirect on a
 * loopback port) and stores the tokens in the state directory, where the daemon finds them;
 * `status` shows each server's token state; `logout` forgets a server's tokens and registration.
 * All three work on the state directory's token store directly, with or without a daemon.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Config from "@mcpx-fx/config/Config"
import type { HttpDefinition } from "@mcpx-fx/upstream/ServerDefinition"
import { type AuthStatus, UpstreamAuth } from "@mcpx-fx/upstream/auth/UpstreamAuth"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"
import * as Layers from "../Layers.js"
import * as Output from "../Output.js"
import { closeMatches } from "@mcpx-fx/config/Suggest"
import { UsageError } from "../UsageError.js"
import { globalsFrom } from "./Root.js"

const group = Command.make("auth", { globals: GlobalOptions.options })

const withAuth = <A, E, R>(options: GlobalOptions.Globals, use: Effect.Effect<A, E, R>) =>
  use.pipe(Effect.provide(Layers.upstreamAuth().pipe(Layer.provideMerge(Layers.configured(options)))))

const httpServers = (config: Config.LoadedConfig): ReadonlyArray<HttpDefinition> =>
  config.servers.flatMap((s) => (s.definition.transport === "http" ? [s.definition] : []))

/** The HTTP server a command names, by name or namespace; anything else is a usage error with the close names. */
const httpServer = (name: string) =>
  Effect.gen(function*() {
    const config = yield* Config.Config
    const found = config.servers.find((s) => s.name === name || s.namespace === name)
    if (found === undefined) {
      const known = config.servers.map((s) => s.name)
      const close = closeMatches(name, known, (n) => [n])
      const hint = close.length > 0 ? `; did you mean ${close.join(", ")}?` : known.length > 0 ? ` (servers: ${known.join(", ")})` : ""
      return yield* new UsageError({ message: `no server named ${JSON.stringify(name)} is configured${hint}` })
    }
    if (found.definition.transport !== "http") {
      return yield* new UsageError({ message: `${found.name} is a stdio server; OAuth is for HTTP servers (url)` })
    }
    return found.definition
  })

const when = (ms: number | undefined): string => (ms === undefined ? "-" : new Date(ms).toISOString())

const describeStatus = (s: AuthStatus): string => {
  switch (s.state) {
    case "valid":
      return `authorized${s.issuer === undefined ? "" : ` at ${s.issuer}`}, valid until ${when(s.expiresAt)}`
    case "expired":
      return `expired at ${when(s.expiresAt)}; refreshed at the next call`
    case "needs-login":
      return `needs \`mcpx-fx auth login ${s.server}\`${s.reason === undefined ? "" : ` (${s.reason})`}`
    case "none":
      return "has not asked for authorization"
  }
}

const server = Args.text({ name: "server" }).pipe(Args.withDescription("The server's name (or namespace) in the config."))

const login = Command.make(
  "login",
  {
    globals: GlobalOptions.options,
    server,
    noBrowser: Options.boolean("no-browser").pipe(Options.withDescription("Only print the authorization URL; never start a browser."))
  },
  ({ globals, noBrowser, server }) =>
    Effect.gen(function*() {
      const options = yield* globalsFrom(globals, (yield* group).globals)
      const environment = yield* Layers.ProcessEnvironment
      const status = yield* withAuth(
        options,
        Effect.gen(function*() {
          const def = yield* httpServer(server)
          const auth = yield* UpstreamAuth
          // Only a login serves a page (node:http) and opens a browser: loaded when one runs.
          const { browserAvailable, loopbackAuthorizer } = yield* Effect.promise(() => import("../LoopbackAuthorizer.js"))
          const authorizer = loopbackAuthorizer({ say: Console.error, browser: browserAvailable(environment.env, noBrowser) })
          return yield* auth.login(def, authorizer)
        })
      )
      if (options.json) return yield* Output.json(status)
      yield* Output.text(`${status.server}: ${describeStatus(status)}${status.scopes?.length ? `; scopes ${status.scopes.join(" ")}` : ""}`)
    })
).pipe(
  Command.withDescription(
    describe(
      "Authorize mcpx-fx at an OAuth-protected HTTP server: prints the authorization URL (and opens a browser when " +
        "there is one), waits for the redirect on 127.0.0.1 (the server's auth.redirectPort, else any free port), and " +
        "stores the tokens in the state directory, where the daemon and every other command find them.",
      "mcpx-fx auth login docs"
    )
  )
)

const status = Command.make("status", { globals: GlobalOptions.options }, ({ globals }) =>
  Effect.gen(function*() {
    const options = yield* globalsFrom(globals, (yield* group).globals)
    const rows = yield* withAuth(
      options,
      Effect.gen(function*() {
        const auth = yield* UpstreamAuth
        const defs = httpServers(yield* Config.Config).filter((d) => auth.credentials(d) !== undefined)
        return yield* Effect.forEach(defs, auth.status)
      })
    )
    if (options.json) return yield* Output.json({ servers: rows })
    if (rows.length === 0) return yield* Output.text("no HTTP server is configured for OAuth")
    yield* Output.text(Output.table(
      ["SERVER", "STATE", "VALID UNTIL", "SCOPES", "REFRESHABLE"],
      rows.map((r) => [
        r.server,
        r.state,
        when(r.expiresAt),
        r.scopes === undefined || r.scopes.length === 0 ? "-" : r.scopes.join(" "),
        r.refreshable ? "yes" : "no"
      ])
    ))
    for (const r of rows.filter((r) => r.state === "needs-login")) yield* Console.error(`${r.server}: ${describeStatus(r)}`)
  })).pipe(
    Command.withDescription(
      describe(
        "Show each OAuth-protected HTTP server's token state: valid (until when), expired (refreshed at the next call " +
          "when refreshable), needs-login, or none (the server has not asked), with the scopes granted.",
        "mcpx-fx auth status --json"
      )
    )
  )

const logout = Command.make("logout", { globals: GlobalOptions.options, server }, ({ globals, server }) =>
  Effect.gen(function*() {
    const options = yield* globalsFrom(globals, (yield* group).globals)
    const { def, had } = yield* withAuth(
      options,
      Effect.gen(function*() {
        const def = yield* httpServer(server)
        return { def, had: yield* (yield* UpstreamAuth).logout(def) }
      })
    )
    if (options.json) return yield* Output.json({ server: def.name, removed: had })
    yield* Output.text(had ? `${def.name}: forgot its tokens and client registration` : `${def.name}: nothing was stored`)
  })).pipe(
    Command.withDescription(
      describe(
        "Forget a server's stored tokens and client registration; its next call needs `mcpx-fx auth login` again. " +
          "A running daemon stops using them within 30 seconds, or at once when the server refuses them.",
        "mcpx-fx auth logout docs"
      )
    )
  )

/** `mcpx-fx auth`. */
export const command = group.pipe(
  Command.withDescription(
    describe(
      "OAuth 2.1 for HTTP upstream servers: log in, see token state, log out. A call to a server that needs a login " +
        "that has not happened fails with exit code 77 and names the login command.",
      "mcpx-fx auth login docs"
    )
  ),
  Command.withSubcommands([login, status, logout])
)
