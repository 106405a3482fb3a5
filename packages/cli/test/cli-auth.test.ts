/**
 * `mcpx-fx auth login|status|logout` and exit code 77, end to end through the bundle against a
 * local authorization server and an OAuth-protected MCP server (the official SDK behind a bearer
 * check): a call before any login, a login that a person would finish in a browser (here the
 * test follows the authorization server's redirect to the CLI's loopback listener), and the daemon
 * using the tokens the CLI stored in the shared state directory.
 */
import { assert, describe, it } from "@effect/vitest"
import { type AuthServer, startAuthServer } from "@mcpx-fx/testing/oauth/AuthServer"
import { type ProtectedServer, startProtectedServer } from "@mcpx-fx/testing/oauth/ProtectedServer"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { statSync } from "node:fs"
import * as DaemonProcess from "./support/DaemonProcess.js"
import { bundle, sandbox } from "./support/Sandbox.js"

const servers = Effect.acquireRelease(
  Effect.promise(async () => {
    const as = await startAuthServer()
    const rs = await startProtectedServer(as)
    return { as, rs }
  }),
  ({ as, rs }) =>
    Effect.promise(async () => {
      await rs.close()
      await as.close()
    })
)

/**
 * Runs `auth login` and plays the person: waits for the URL on stderr, opens it (the test server
 * approves at once and redirects to the CLI's listener) and follows the redirect.
 */
const login = (root: string, env: Record<string, string>, server: string) =>
  Effect.async<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resume) => {
    const child = spawn(process.execPath, [bundle, "auth", "login", server, "--no-browser"], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    let opened = false
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString()
      // Only a whole line: stderr arrives in chunks, and half a URL would be refused.
      const url = /^\s+(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)\n/m.exec(stderr)?.[1]
      if (url === undefined || opened) return
      opened = true
      void fetch(url, { redirect: "manual" })
        .then((r) => fetch(r.headers.get("location") ?? "http://127.0.0.1:9/"))
        .catch(() => undefined)
    })
    child.on("exit", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    return Effect.sync(() => child.kill())
  })

const grantsOf = (as: AuthServer, kind: string) => as.events.filter((e) => e.kind === kind).length

describe("mcpx-fx auth", () => {
  it.scopedLive("gateway/cli/auth-login-then-the-daemon-uses-the-stored-tokens", () =>
    Effect.gen(function*() {
      const { as, rs }: { as: AuthServer; rs: ProtectedServer } = yield* servers
      const sb = yield* sandbox
      yield* sb.writeJson(".mcpx.json", { mcpServers: { docs: { url: rs.url, auth: { type: "oauth" } } } })
      const stateDir = sb.path("state")
      const env = { MCPX_STATE_DIR: stateDir }

      const before = yield* sb.run(["call", "docs.whoami"], { env })
      assert.strictEqual(before.code, 77, before.stderr)
      assert.include(before.stderr, "mcpx-fx auth login docs")
      const unknown = yield* sb.run(["auth", "status", "--json"], { env })
      assert.strictEqual(JSON.parse(unknown.stdout).servers[0].state, "needs-login")

      // A daemon that runs before the login says the same, and shows it in its status.
      const daemon = yield* DaemonProcess.start(sb, { config: sb.path(".mcpx.json"), stateDir })
      const refused = yield* sb.run(["call", "docs.whoami"], { env })
      assert.strictEqual(refused.code, 77, refused.stderr)
      assert.include(refused.stderr, "mcpx-fx auth login docs")
      const needing = yield* sb.run(["status"], { env })
      assert.include(needing.stdout, "docs: needs `mcpx-fx auth login docs`")

      const done = yield* login(sb.root, { PATH: process.env.PATH ?? "", HOME: sb.home, ...env }, "docs")
      assert.strictEqual(done.code, 0, done.stderr)
      assert.include(done.stdout, `docs: authorized at ${as.issuer}`)
      assert.strictEqual(grantsOf(as, "authorize"), 1)
      assert.strictEqual(statSync(`${stateDir}/upstream-auth.json`).mode & 0o777, 0o600)

      const status = yield* sb.run(["auth", "status", "--json"], { env })
      const row = JSON.parse(status.stdout).servers[0]
      assert.strictEqual(row.state, "valid")
      assert.isTrue(row.refreshable)
      assert.notInclude(status.stdout, "at-", "no token is ever shown")

      // The same daemon, not restarted, uses the tokens the CLI stored.
      const viaDaemon = yield* sb.run(["call", "docs.whoami"], { env })
      assert.strictEqual(viaDaemon.code, 0, viaDaemon.stderr)
      assert.include(viaDaemon.stdout, "hello, authorized caller")
      const live = yield* sb.run(["status", "--json"], { env })
      const docs = JSON.parse(live.stdout).status.servers.find((s: { name: string }) => s.name === "docs")
      assert.strictEqual(docs.auth.state, "valid")
      assert.notInclude(daemon.stderr(), "at-")
      assert.strictEqual(grantsOf(as, "authorize"), 1, "the daemon never authorizes by itself")

      // The daemon refreshes by itself when the server stops taking the token.
      as.invalidateAccessTokens()
      const refreshed = yield* sb.run(["call", "docs.whoami"], { env })
      assert.strictEqual(refreshed.code, 0, refreshed.stderr)
      assert.strictEqual(as.events.filter((e) => e.kind === "token" && e.grantType === "refresh_token" && e.ok).length, 1)

      const out = yield* sb.run(["auth", "logout", "docs"], { env })
      assert.strictEqual(out.code, 0, out.stderr)
      assert.include(out.stdout, "docs: forgot its tokens")
      const after = yield* sb.run(["auth", "status", "--json"], { env })
      assert.strictEqual(JSON.parse(after.stdout).servers[0].state, "needs-login")
    }))

  it.scopedLive("gateway/cli/auth-names-only-configured-http-servers", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      yield* sb.writeJson(".mcpx.json", { mcpServers: { local: { command: "true" } } })
      const env = { MCPX_STATE_DIR: sb.path("state") }
      const stdio = yield* sb.run(["auth", "login", "local"], { env })
      assert.strictEqual(stdio.code, 2)
      assert.include(stdio.stderr, "local is a stdio server")
      const missing = yield* sb.run(["auth", "logout", "locall"], { env })
      assert.strictEqual(missing.code, 2)
      assert.include(missing.stderr, "did you mean local")
    }))
})
