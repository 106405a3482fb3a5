/**
 * One policy on every route of the daemon's TCP listener (issue 10, "Security"): a Host that is
 * not the daemon's own address is 403 (DNS rebinding reached /v1 before), the Origin policy holds
 * on /v1 as on /mcp and on every method, a preflight from an origin in transport.allowedOrigins is
 * granted CORS (a 405 before) and its replies carry Access-Control-Allow-Origin, nothing for any
 * other origin; and the unix socket, which no browser reaches, is not held to the Host check.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { HttpDaemon } from "../support/HttpDaemon.js"
import { send } from "../support/RawHttp.js"
import { initializeParams } from "../support/Revisions.js"
import { era } from "../support/StdioServe.js"

const Allowed = "https://app.example.com"
const config = {
  servers: { alpha: era("dual") },
  settings: { "transport.allowedOrigins": [Allowed], "transport.allowedHosts": ["mcp.example.com"] }
}

const initialize = JSON.stringify({ jsonrpc: "2.0", id: "i", method: "initialize", params: initializeParams("2025-11-25") })
const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" }
const call = JSON.stringify({ tool: "alpha.echo", arguments: { message: "hi" } })

const portOf = (url: string) => new URL(url).port

describe.concurrent("the daemon's edge policy", () => {
  layer(HttpDaemon.layer(config), { timeout: 30_000 })("edge", (it) => {
    it.effect("a rebinding request (foreign Host and Origin) is 403 on /v1/call, /v1/settings and /mcp, and changes nothing", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const url = daemon.info.url
        const evil = `evil.example:${portOf(url)}`
        const headers = { host: evil, origin: `http://${evil}`, "content-type": "application/json" }
        const called = yield* send({ url, method: "POST", path: "/v1/call", headers, body: call })
        assert.strictEqual(called.status, 403, called.text)
        assert.deepInclude(called.json, { error: "forbidden" })
        assert.include(called.text, "transport.allowedHosts")
        const set = yield* send({ url, method: "PUT", path: "/v1/settings/pool.callTimeout", headers, body: JSON.stringify({ value: "1ms" }) })
        assert.strictEqual(set.status, 403, set.text)
        const mcp = yield* send({ url, method: "POST", path: "/mcp", headers: { ...mcpHeaders, host: evil }, body: initialize })
        assert.strictEqual(mcp.status, 403, mcp.text)
        const body = mcp.json as { readonly error: { readonly code: number }; readonly id?: unknown }
        assert.strictEqual(body.error.code, -32600)
        assert.notProperty(body, "id")
        const setting = yield* send({ url, method: "GET", path: "/v1/settings/pool.callTimeout" })
        assert.strictEqual((setting.json as { readonly text: string }).text, "1m", setting.text)
      }))

    it.effect("a foreign Host alone is 403 on every route and method", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const url = daemon.info.url
        for (const host of [`evil.example:${portOf(url)}`, "localhost:1", `127.0.0.1.evil.example:${portOf(url)}`, `[::1]:1`]) {
          for (
            const [method, path] of [["GET", "/v1/health"], ["GET", "/v1/status"], ["DELETE", "/v1/settings/pool.max"], ["GET", "/mcp"], ["OPTIONS", "/mcp"], [
              "GET",
              "/other"
            ]] as const
          ) {
            const r = yield* send({ url, method, path, headers: { host } })
            assert.strictEqual(r.status, 403, `${method} ${path} Host ${host}: ${r.text}`)
          }
        }
      }))

    it.effect("the loopback names at the daemon's port and transport.allowedHosts are served", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const url = daemon.info.url
        const port = portOf(url)
        for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`, "mcp.example.com", "mcp.example.com:443"]) {
          const r = yield* send({ url, method: "GET", path: "/v1/health", headers: { host } })
          assert.strictEqual(r.status, 200, `Host ${host}: ${r.text}`)
        }
      }))

    it.effect("the Origin policy holds on /v1 on every method, as on /mcp", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const url = daemon.info.url
        const origin = "https://evil.example"
        for (
          const [method, path, body] of [["GET", "/v1/health", undefined], ["POST", "/v1/call", call], [
            "PUT",
            "/v1/settings/pool.callTimeout",
            JSON.stringify({ value: "1ms" })
          ], ["OPTIONS", "/v1/call", undefined]] as const
        ) {
          const r = yield* send({ url, method, path, headers: { origin, "content-type": "application/json" }, ...(body !== undefined ? { body } : {}) })
          assert.strictEqual(r.status, 403, `${method} ${path}: ${r.text}`)
          assert.isUndefined(r.headers["access-control-allow-origin"])
        }
        const ok = yield* send({ url, method: "GET", path: "/v1/health", headers: { origin: "http://localhost:5173" } })
        assert.strictEqual(ok.status, 200)
      }))

    it.effect("another site's page's request without an Origin (an <img>'s GET) is 403 on every route; one from an allowed origin is served", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const url = daemon.info.url
        for (const path of ["/v1/tools", "/v1/search?q=echo", "/v1/health", "/mcp"]) {
          const r = yield* send({ url, method: "GET", path, headers: { "sec-fetch-site": "cross-site", "sec-fetch-dest": "image" } })
          assert.strictEqual(r.status, 403, `${path}: ${r.text}`)
        }
        const allowed = yield* send({ url, method: "GET", path: "/v1/health", headers: { "sec-fetch-site": "cross-site", origin: Allowed } })
        assert.strictEqual(allowed.status, 200, allowed.text)
        for (const site of ["same-origin", "same-site", "none"]) {
          const r = yield* send({ url, method: "GET", path: "/v1/health", headers: { "sec-fetch-site": site } })
          assert.strictEqual(r.status, 200, `${site}: ${r.text}`)
        }
      }))

    it.effect("a loopback page's POST or PUT without a JSON content type (no preflight) is 415 on /v1, and changes nothing", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const url = daemon.info.url
        // Any loopback origin passes the Origin policy; only a JSON content type forces a preflight.
        const origin = "http://127.0.0.1:3000"
        for (const type of [undefined, "text/plain"]) {
          const headers = { origin, ...(type === undefined ? {} : { "content-type": type }) }
          const called = yield* send({ url, method: "POST", path: "/v1/call", headers, body: call })
          assert.strictEqual(called.status, 415, called.text)
          assert.deepInclude(called.json, { error: "unsupported media type" })
          const probed = yield* send({ url, method: "POST", path: "/v1/probe/alpha", headers })
          assert.strictEqual(probed.status, 415, probed.text)
          const set = yield* send({ url, method: "PUT", path: "/v1/settings/pool.idleTimeout", headers, body: JSON.stringify({ value: "7m" }) })
          assert.strictEqual(set.status, 415, set.text)
        }
        const setting = yield* send({ url, method: "GET", path: "/v1/settings/pool.idleTimeout" })
        assert.notStrictEqual((setting.json as { readonly text: string }).text, "7m", setting.text)
      }))

    it.effect("a preflight from an allowed origin is granted the MCP methods and headers, on /mcp and /v1", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const url = daemon.info.url
        for (const path of ["/mcp", "/v1/call"]) {
          const r = yield* send({
            url,
            method: "OPTIONS",
            path,
            headers: {
              origin: Allowed,
              "access-control-request-method": "POST",
              "access-control-request-headers": "content-type, mcp-session-id, mcp-protocol-version, mcp-param-region, authorization"
            }
          })
          assert.strictEqual(r.status, 204, `${path}: ${r.text}`)
          assert.strictEqual(r.headers["access-control-allow-origin"], Allowed)
          assert.include(String(r.headers["access-control-allow-methods"]), "POST")
          assert.include(String(r.headers["access-control-allow-methods"]), "DELETE")
          const granted = String(r.headers["access-control-allow-headers"]).split(", ")
          for (const h of ["content-type", "mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name", "mcp-param-region", "authorization"]) {
            assert.include(granted, h, path)
          }
          assert.include(String(r.headers["access-control-expose-headers"]), "Mcp-Session-Id")
        }
      }))

    it.effect("a preflight from any other allowed-to-send origin is granted nothing", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const r = yield* send({
          url: daemon.info.url,
          method: "OPTIONS",
          path: "/mcp",
          headers: { origin: "http://localhost:5173", "access-control-request-method": "POST" }
        })
        assert.strictEqual(r.status, 204)
        assert.isUndefined(r.headers["access-control-allow-origin"])
        assert.isUndefined(r.headers["access-control-allow-headers"])
      }))

    it.effect("replies to an allowed origin carry Access-Control-Allow-Origin and expose Mcp-Session-Id; others carry none", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const url = daemon.info.url
        const granted = yield* send({ url, method: "POST", path: "/mcp", headers: { ...mcpHeaders, origin: Allowed }, body: initialize })
        assert.strictEqual(granted.status, 200, granted.text)
        assert.strictEqual(granted.headers["access-control-allow-origin"], Allowed)
        assert.include(String(granted.headers["access-control-expose-headers"]), "Mcp-Session-Id")
        assert.isString(granted.headers["mcp-session-id"])
        const api = yield* send({ url, method: "GET", path: "/v1/health", headers: { origin: Allowed } })
        assert.strictEqual(api.headers["access-control-allow-origin"], Allowed)
        for (const headers of [{}, { origin: "http://localhost:5173" }, { origin: daemon.info.url }]) {
          const r = yield* send({ url, method: "POST", path: "/mcp", headers: { ...mcpHeaders, ...headers }, body: initialize })
          assert.strictEqual(r.status, 200, r.text)
          assert.isUndefined(r.headers["access-control-allow-origin"], JSON.stringify(headers))
        }
      }))

    it.effect("the unix socket takes any Host: no browser can reach it", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const r = yield* send({ socketPath: daemon.info.socket, method: "GET", path: "/v1/health", headers: { host: "evil.example" } })
        assert.strictEqual(r.status, 200, r.text)
      }))
  })
})
