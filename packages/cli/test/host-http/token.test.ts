/**
 * `daemon.token` (issue 10, "Security"): with it set, every request to /mcp and /v1 over TCP
 * needs `Authorization: Bearer <token>` (401 with WWW-Authenticate: Bearer otherwise, and a
 * preflight still answers), while the CLI and `serve --relay`, which use the owner-only unix
 * socket, keep working without it. Before the setting existed, /mcp and /v1 had no authentication.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { HttpDaemon } from "../support/HttpDaemon.js"
import { send } from "../support/RawHttp.js"
import { initializeParams } from "../support/Revisions.js"
import { era, start } from "../support/StdioServe.js"

const Token = "s3cret-token-for-tests-0123456789"
const config = { servers: { alpha: era("dual") }, settings: { "transport.allowedOrigins": ["https://app.example.com"] } }
const initialize = JSON.stringify({ jsonrpc: "2.0", id: "i", method: "initialize", params: initializeParams("2025-11-25") })
const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" }

describe.concurrent("daemon.token", () => {
  layer(HttpDaemon.layer(config, ["--daemon-token", Token]), { timeout: 60_000 })("token", (it) => {
    it.effect("/mcp and /v1 over TCP are 401 with WWW-Authenticate: Bearer without the token, or with a wrong one", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const url = daemon.info.url
        for (const authorization of [undefined, "Bearer wrong-token-wrong-token-00", `Basic ${Token}`, Token]) {
          const auth = authorization === undefined ? {} : { authorization }
          const mcp = yield* send({ url, method: "POST", path: "/mcp", headers: { ...mcpHeaders, ...auth }, body: initialize })
          assert.strictEqual(mcp.status, 401, `${authorization}: ${mcp.text}`)
          assert.match(String(mcp.headers["www-authenticate"]), /^Bearer /)
          const body = mcp.json as { readonly error: { readonly code: number }; readonly id?: unknown }
          assert.strictEqual(body.error.code, -32600)
          assert.notProperty(body, "id")
          const v1 = yield* send({ url, method: "GET", path: "/v1/health", headers: auth })
          assert.strictEqual(v1.status, 401, v1.text)
          assert.match(String(v1.headers["www-authenticate"]), /^Bearer /)
        }
      }))

    it.effect("with the token, /mcp and /v1 over TCP are served", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const url = daemon.info.url
        const auth = { authorization: `Bearer ${Token}` }
        const mcp = yield* send({ url, method: "POST", path: "/mcp", headers: { ...mcpHeaders, ...auth }, body: initialize })
        assert.strictEqual(mcp.status, 200, mcp.text)
        const v1 = yield* send({ url, method: "GET", path: "/v1/health", headers: { authorization: `bearer ${Token}` } })
        assert.strictEqual(v1.status, 200, v1.text)
      }))

    it.effect("a preflight needs no token (a browser sends none with it)", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const r = yield* send({
          url: daemon.info.url,
          method: "OPTIONS",
          path: "/mcp",
          headers: { origin: "https://app.example.com", "access-control-request-method": "POST" }
        })
        assert.strictEqual(r.status, 204, r.text)
        assert.include(String(r.headers["access-control-allow-headers"]), "authorization")
      }))

    it.effect("the token is not shown by /v1/settings or `settings get`", () =>
      Effect.gen(function*() {
        const { daemon, sandbox } = yield* HttpDaemon
        const row = yield* send({ socketPath: daemon.info.socket, method: "GET", path: "/v1/settings/daemon.token" })
        assert.strictEqual(row.status, 200, row.text)
        assert.notInclude(row.text, Token)
        assert.include(row.text, "[redacted]")
        const cli = yield* sandbox.run(["settings", "get", "daemon.token"], { env: { MCPX_STATE_DIR: daemon.stateDir } })
        assert.notInclude(cli.stdout + cli.stderr, Token)
      }))

    it.effect("the CLI and serve --relay, over the unix socket, need no token", () =>
      Effect.scoped(Effect.gen(function*() {
        const { daemon, sandbox } = yield* HttpDaemon
        const socket = yield* send({ socketPath: daemon.info.socket, method: "GET", path: "/v1/health" })
        assert.strictEqual(socket.status, 200, socket.text)
        const status = yield* sandbox.run(["call", "alpha.echo", JSON.stringify({ message: "over the socket" })], { env: { MCPX_STATE_DIR: daemon.stateDir } })
        assert.strictEqual(status.code, 0, status.stderr)
        assert.include(status.stdout, "over the socket")
        const relay = yield* start({ servers: {} }, { args: ["--relay"], stateDir: daemon.stateDir })
        yield* relay.send({ id: 1, method: "initialize", params: initializeParams("2025-11-25") })
        yield* relay.reply(1)
        yield* relay.send({ method: "notifications/initialized" })
        yield* relay.send({ id: 2, method: "tools/call", params: { name: "alpha__echo", arguments: { message: "relayed" } } })
        const reply = yield* relay.reply(2)
        assert.include(JSON.stringify(reply), "relayed")
      })))
  })
})
