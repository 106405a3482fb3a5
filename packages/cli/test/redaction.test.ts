/**
 * Secrets stay out of what the daemon tells others (issue 10, "Security"): an upstream's stderr
 * tail, its error text and the server's command args reach /v1 callers over TCP and hosts over
 * /mcp with configured env values and secret-looking args redacted — before, all of it went out
 * verbatim — while the owner, on the unix socket, still sees the raw stderr.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { HttpDaemon } from "./support/HttpDaemon.js"
import { send } from "./support/RawHttp.js"
import { initializeParams } from "./support/Revisions.js"

const Secret = "sekrit-value-123"
const FlagSecret = "abc123secret-flag"
// An upstream that says its secrets on stderr and dies before it speaks.
const leaky = {
  command: process.execPath,
  args: ["-e", `console.error("starting with key " + process.env.API_KEY + " and Bearer abcdefgh12345"); process.exit(3)`, "--", `--token=${FlagSecret}`],
  env: { API_KEY: Secret }
}
const config = { servers: { leaky }, settings: { "pool.startTimeout": "20s" } }

const call = JSON.stringify({ tool: "leaky.anything", arguments: {} })

const assertClean = (text: string, where: string) => {
  assert.notInclude(text, Secret, where)
  assert.notInclude(text, FlagSecret, where)
  assert.notInclude(text, "abcdefgh12345", where)
}

describe("redaction", () => {
  layer(HttpDaemon.layer(config), { timeout: 60_000 })("redaction", (it) => {
    it.effect("/v1/call over TCP tells why the upstream failed without its secrets; the socket tells the owner all", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const tcp = yield* send({ url: daemon.info.url, method: "POST", path: "/v1/call", headers: { "content-type": "application/json" }, body: call })
        assert.strictEqual(tcp.status, 502, tcp.text)
        assertClean(tcp.text, "/v1/call over TCP")
        assert.include(tcp.text, "[redacted]")
        const owner = yield* send({
          socketPath: daemon.info.socket,
          method: "POST",
          path: "/v1/call",
          headers: { "content-type": "application/json" },
          body: call
        })
        assert.strictEqual(owner.status, 502, owner.text)
        assert.include(owner.text, Secret, "the owner sees the raw stderr")
      }))

    it.effect("/v1/probe over TCP tells why the start failed without its secrets; the socket tells the owner all", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const tcp = yield* send({ url: daemon.info.url, method: "POST", path: "/v1/probe/leaky", headers: { "content-type": "application/json" } })
        assert.strictEqual(tcp.status, 502, tcp.text)
        assertClean(tcp.text, "/v1/probe over TCP")
        const owner = yield* send({ socketPath: daemon.info.socket, method: "POST", path: "/v1/probe/leaky", headers: { "content-type": "application/json" } })
        assert.strictEqual(owner.status, 502, owner.text)
        assert.include(owner.text, Secret, "the owner sees the raw stderr")
      }))

    it.effect("/v1/tools listing failures over TCP carry no secrets", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const r = yield* send({ url: daemon.info.url, method: "GET", path: "/v1/tools" })
        assert.strictEqual(r.status, 200, r.text)
        assert.isNotEmpty((r.json as { readonly failures: ReadonlyArray<unknown> }).failures)
        assertClean(r.text, "/v1/tools")
      }))

    it.effect("/v1/servers and /v1/status show args with the --token value hidden, on TCP and socket alike", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        for (const path of ["/v1/servers", "/v1/status"]) {
          for (const where of [{ url: daemon.info.url }, { socketPath: daemon.info.socket }]) {
            const r = yield* send({ ...where, method: "GET", path })
            assert.strictEqual(r.status, 200, r.text)
            assert.notInclude(r.text, FlagSecret, path)
            assert.include(r.text, "--token=[redacted]", path)
          }
        }
      }))

    it.effect("a host over /mcp gets the failure as a JSON-RPC error without the secrets", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const headers = { "mcp-protocol-version": "2025-11-25" }
        yield* http.post({ jsonrpc: "2.0", id: 0, method: "initialize", params: initializeParams("2025-11-25") }, { headers })
        const listed = yield* http.post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, { headers })
        assertClean(listed.text, "tools/list")
        const called = yield* http.post({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "leaky__anything", arguments: {} } }, { headers })
        assert.include(called.text, "error", called.text)
        assertClean(called.text, "tools/call")
      }))

    it.effect("`config` prints the args with the --token value hidden", () =>
      Effect.gen(function*() {
        const { daemon, sandbox } = yield* HttpDaemon
        const run = yield* sandbox.run(["config", "--config", daemon.info.configFiles[0] ?? "", "--json"])
        assert.strictEqual(run.code, 0, run.stderr)
        assert.notInclude(run.stdout, FlagSecret)
        assert.notInclude(run.stdout, Secret)
        assert.include(run.stdout, "--token=[redacted]")
      }))
  })
})

describe("redaction of events", () => {
  // A daemon of its own: the first start after subscribing must be the upstream's first, not one
  // held back by the cooldown earlier failures left.
  layer(HttpDaemon.layer(config), { timeout: 60_000 })("events", (it) => {
    it.effect("/v1/events over TCP tells of the failed start without the stderr's secrets", () =>
      Effect.gen(function*() {
        const { daemon } = yield* HttpDaemon
        const abort = new AbortController()
        const seen = yield* Effect.promise(async () => {
          const response = await fetch(`${daemon.info.url}/v1/events?server=leaky`, { signal: abort.signal })
          const reader = response.body!.getReader()
          const decoder = new TextDecoder()
          let text = ""
          let called = false
          for (;;) {
            const chunk = await reader.read()
            if (chunk.done) return text
            text += decoder.decode(chunk.value, { stream: true })
            if (!called && text.includes(": subscribed")) {
              called = true
              // The owner's call, over the socket, makes the upstream start (and fail) again.
              void Effect.runPromise(
                send({ socketPath: daemon.info.socket, method: "POST", path: "/v1/call", headers: { "content-type": "application/json" }, body: call })
              )
            }
            if (/event: server\.(start\.failed|crash)[^]*?\n\n/.test(text)) return text
          }
        }).pipe(Effect.ensuring(Effect.sync(() => abort.abort())))
        assert.match(seen, /event: server\./)
        assertClean(seen, "/v1/events")
      }))
  })
})
