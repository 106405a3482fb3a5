/**
 * The live page `/ui` and its owner secret, through the bundled daemon on TCP: the page's files
 * come with their security headers and hold no secret; the Host and Origin policy applies to them
 * as to `/v1`; the owner views (every question, the task list, recent calls, the word that questions
 * or tasks changed) stay refused over TCP
 * without the secret, or with a wrong one, and work with it; the secret file is 0600, is what
 * `mcpx-fx ui` prints, and goes with the daemon.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { existsSync, readFileSync, statSync } from "node:fs"
import * as path from "node:path"
import * as DaemonProcess from "./support/DaemonProcess.js"
import { type Sandbox, sandbox } from "./support/Sandbox.js"
import { era } from "./support/StdioServe.js"

const config = (sb: Sandbox) => sb.writeJson("mcpx.json", { mcpServers: { up: era("dual") } })

interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: () => Record<string, unknown>
}

const request = (url: string, init: RequestInit = {}) =>
  Effect.promise(async (): Promise<Reply> => {
    const response = await fetch(url, init)
    const text = await response.text()
    return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) as Record<string, unknown> }
  })

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` })

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  request(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })

const secretOf = (daemon: DaemonProcess.Daemon) => readFileSync(path.join(daemon.stateDir, "owner.secret"), "utf8").trim()

describe.concurrent("the live page /ui", () => {
  it.scoped("ui/files: /ui, /ui/app.js and /ui/app.css carry the security headers, no inline script and no secret", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const daemon = yield* DaemonProcess.start(sb, { config: yield* config(sb) })
      const secret = secretOf(daemon)
      const files = [["/ui", "text/html"], ["/ui/app.js", "text/javascript"], ["/ui/app.css", "text/css"]] as const
      for (const [file, type] of files) {
        const reply = yield* request(`${daemon.info.url}${file}`)
        assert.strictEqual(reply.status, 200, file)
        assert.include(reply.headers.get("content-type") ?? "", type, file)
        const csp = reply.headers.get("content-security-policy") ?? ""
        assert.include(csp, "script-src 'self'", file)
        assert.include(csp, "frame-ancestors 'none'", file)
        assert.notInclude(csp, "unsafe-inline", file)
        assert.strictEqual(reply.headers.get("x-frame-options"), "DENY", file)
        assert.strictEqual(reply.headers.get("referrer-policy"), "no-referrer", file)
        assert.strictEqual(reply.headers.get("cache-control"), "no-store", file)
        assert.strictEqual(reply.headers.get("x-content-type-options"), "nosniff", file)
        assert.notInclude(reply.text, secret, file)
        // The bundler turns what is not ASCII in a String.raw into "?": the files say \u00b7 instead.
        assert.match(reply.text, /^[\x00-\x7f]*$/, file)
      }
      const page = (yield* request(`${daemon.info.url}/ui`)).text
      // Every script is a file of the daemon's own: none inline.
      assert.deepStrictEqual([...page.matchAll(/<script([^>]*)>/g)].map((m) => m[1]?.trim()), ["src=\"/ui/app.js\" defer"])
      assert.strictEqual((yield* post(`${daemon.info.url}/ui`, {})).status, 405)
      assert.strictEqual((yield* request(`${daemon.info.url}/ui/other.js`)).status, 404)
    }))

  it.scoped("ui/edge: a foreign Host or Origin, or another site's page, is refused at /ui as at /v1", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const daemon = yield* DaemonProcess.start(sb, { config: yield* config(sb) })
      const port = new URL(daemon.info.url).port
      for (const file of ["/ui", "/ui/app.js", "/v1/health"]) {
        // fetch will not send another Host; the daemon is asked for a name that is not its own by
        // a request to a loopback name it does not answer to.
        const rebound = yield* Effect.promise(() =>
          import("node:http").then((http) =>
            new Promise<number>((resolve, reject) => {
              const req = http.request({ host: "127.0.0.1", port, path: file, headers: { host: `evil.example:${port}` } }, (res) => {
                res.resume()
                resolve(res.statusCode ?? 0)
              })
              req.on("error", reject)
              req.end()
            })
          )
        )
        assert.strictEqual(rebound, 403, `Host at ${file}`)
        assert.strictEqual((yield* request(`${daemon.info.url}${file}`, { headers: { origin: "https://evil.example" } })).status, 403, `Origin at ${file}`)
        assert.strictEqual((yield* request(`${daemon.info.url}${file}`, { headers: { "sec-fetch-site": "cross-site" } })).status, 403, `cross-site at ${file}`)
      }
    }))

  it.scoped("ui/owner: over TCP the owner views need the owner secret; without it, or with a wrong one, they stay refused", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const daemon = yield* DaemonProcess.start(sb, { config: yield* config(sb) })
      const url = daemon.info.url
      const secret = secretOf(daemon)
      const wrong = bearer(`${secret.slice(0, -1)}${secret.endsWith("A") ? "B" : "A"}`)
      // The page is open: calls are kept while something reads them (none before).
      const opened = yield* request(`${url}/v1/calls/recent`, { headers: bearer(secret) })
      assert.deepStrictEqual(opened.json().calls, [], opened.text)
      // The page is told when the questions change, rather than asking for them again and again.
      const shown = yield* request(`${url}/v1/ui/changes`, { headers: bearer(secret) })
      assert.strictEqual(shown.status, 200, shown.text)
      const version = String(shown.json().version)
      const told = yield* Effect.fork(request(`${url}/v1/ui/changes?after=${version}&waitMs=30000`, { headers: bearer(secret) }))
      // A call that asks, waiting for its answer; and one that ran.
      const asked = (yield* post(`${url}/v1/ask`, { tool: "up.ask_name", waitMs: 10_000 })).json()
      assert.strictEqual(asked.status, "input_required", JSON.stringify(asked))
      const changed = yield* Fiber.join(told)
      assert.notStrictEqual(changed.json().version, version, changed.text)
      assert.strictEqual((yield* post(`${url}/v1/call`, { tool: "up.echo", arguments: { message: "hi" } })).status, 200)
      for (const headers of [{}, wrong]) {
        const questions = yield* request(`${url}/v1/elicit`, { headers })
        assert.deepStrictEqual(questions.json(), { questions: [] })
        assert.strictEqual((yield* request(`${url}/v1/tasks`, { headers })).status, 403)
        assert.strictEqual((yield* request(`${url}/v1/calls/recent`, { headers })).status, 403)
        assert.strictEqual((yield* request(`${url}/v1/ui/changes`, { headers })).status, 403)
      }
      const owner = bearer(secret)
      const questions = (yield* request(`${url}/v1/elicit`, { headers: owner })).json().questions as ReadonlyArray<{ readonly call?: string }>
      assert.deepStrictEqual(questions.map((q) => q.call), [asked.id])
      assert.strictEqual((yield* request(`${url}/v1/tasks`, { headers: owner })).status, 200)
      const recent = yield* request(`${url}/v1/calls/recent`, { headers: owner })
      assert.strictEqual(recent.status, 200, recent.text)
      const calls = recent.json().calls as ReadonlyArray<Record<string, unknown>>
      assert.isDefined(calls[0], recent.text)
      assert.deepInclude(calls[0], { tool: "up__echo", via: "v1", outcome: "ok" })
      // The long poll answers as soon as a newer call ends.
      const waiting = request(`${url}/v1/calls/recent?after=${String(recent.json().last)}&waitMs=30000`, { headers: owner })
      const [next] = yield* Effect.all([waiting, post(`${url}/v1/call`, { tool: "up.echo", arguments: { message: "again" } })], { concurrency: 2 })
      assert.deepStrictEqual((next.json().calls as ReadonlyArray<Record<string, unknown>>).map((c) => c.tool), ["up__echo"])
      // Answered through the page's route, the call that asked gets its name.
      const id = (questions[0] as { readonly id: string }).id
      const answered = yield* post(`${url}/v1/elicit/${encodeURIComponent(id)}`, { action: "accept", content: { name: "Ada" } }, owner)
      assert.strictEqual(answered.status, 200, answered.text)
      const done = (yield* request(`${url}/v1/ask/${String(asked.id)}?waitMs=10000`)).json()
      assert.strictEqual(done.status, "complete")
      assert.deepStrictEqual((done.result as { readonly content: unknown }).content, [{ type: "text", text: "hello, Ada" }])
    }))

  it.scoped("ui/secret: 0600, new at each start, printed by `mcpx-fx ui`, removed when the daemon stops", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const cfg = yield* config(sb)
      const state = sb.path("state")
      const file = path.join(state, "owner.secret")
      const daemon = yield* DaemonProcess.start(sb, { config: cfg, stateDir: state })
      assert.strictEqual(statSync(file).mode & 0o777, 0o600)
      const secret = secretOf(daemon)
      const ui = yield* sb.run(["ui"], { env: { MCPX_STATE_DIR: state } })
      assert.strictEqual(ui.code, 0, ui.stderr)
      assert.strictEqual(ui.stdout.trim(), `${daemon.info.url}/ui#owner=${secret}`)
      yield* daemon.stop()
      assert.isFalse(existsSync(file))
      const none = yield* sb.run(["ui"], { env: { MCPX_STATE_DIR: state } })
      assert.strictEqual(none.code, 1)
      assert.include(none.stderr, "no daemon is running")
      const again = yield* DaemonProcess.start(sb, { config: cfg, stateDir: state })
      assert.notStrictEqual(secretOf(again), secret)
    }))

  it.scoped("ui/token: with daemon.token the page's files load without it, /v1 needs it or the owner secret", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const token = "a-daemon-token-for-remote-hosts-0123456789"
      const daemon = yield* DaemonProcess.start(sb, { config: yield* config(sb), args: ["--daemon-token", token] })
      const url = daemon.info.url
      const secret = secretOf(daemon)
      assert.strictEqual((yield* request(`${url}/ui`)).status, 200)
      assert.strictEqual((yield* request(`${url}/ui/app.js`)).status, 200)
      assert.strictEqual((yield* request(`${url}/v1/status`)).status, 401)
      assert.strictEqual((yield* request(`${url}/v1/status`, { headers: bearer("not-the-secret-0123456789abcdef0123456789") })).status, 401)
      // The token is not the owner's: it calls tools, it does not see every caller's.
      assert.strictEqual((yield* request(`${url}/v1/status`, { headers: bearer(token) })).status, 200)
      assert.strictEqual((yield* request(`${url}/v1/tasks`, { headers: bearer(token) })).status, 403)
      assert.strictEqual((yield* request(`${url}/v1/status`, { headers: bearer(secret) })).status, 200)
      assert.strictEqual((yield* request(`${url}/v1/tasks`, { headers: bearer(secret) })).status, 200)
      // /mcp knows nothing of the owner secret.
      const mcp = yield* post(`${url}/mcp`, { jsonrpc: "2.0", id: 1, method: "ping" }, { ...bearer(secret), accept: "application/json, text/event-stream" })
      assert.strictEqual(mcp.status, 401)
    }))
})
