/**
 * What `/v1` lets a request do before any route runs, and what it lets a GET do: a browser page on
 * any loopback origin passes the Origin policy, so neither a POST without a preflight nor a GET may
 * change anything.
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import { assert, describe, it } from "@effect/vitest"
import { Pool } from "@mcpx-fx/upstream/pool/Pool"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as ApiHandlers from "../src/ApiHandlers.js"
import * as Ask from "../src/Ask.js"
import { Gateway } from "@mcpx-fx/gateway/Gateway"
import { PendingCalls } from "@mcpx-fx/gateway/PendingCalls"
import { ToolCatalog } from "@mcpx-fx/gateway/ToolCatalog"
import * as Redact from "@mcpx-fx/gateway/Redact"
import { call, dependencies, json, webHandler } from "./support/ApiHarness.js"
import * as TestGateway from "@mcpx-fx/testing/gateway/TestGateway"

const era = TestGateway.era

/** A request with exactly the given content type (none when undefined) and raw body. */
const raw = (
  handler: (request: Request) => Promise<Response>,
  method: string,
  path: string,
  contentType: string | undefined,
  body?: string
) =>
  Effect.flatMap(
    Effect.promise(() =>
      handler(
        new Request(`http://mcpx.test${path}`, {
          method,
          ...(body === undefined ? {} : { body }),
          ...(contentType === undefined ? {} : { headers: { "content-type": contentType } })
        })
      )
    ),
    json
  )

/** Whether the pool has started `server` (or begun to). */
const started = (server: string) =>
  Effect.map(Effect.flatMap(Pool, (pool) => pool.snapshot), (rows) => rows.some((r) => r.server === server && r.instances.length > 0))

describe("/v1 request gating", () => {
  it.scopedLive("v1/gate: a POST or PUT not declared JSON is 415 with a JSON error body, and nothing runs", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const body = JSON.stringify({ tool: "alpha__echo", arguments: { message: "hi" } })
      // What a page sends without a preflight: no type (a Blob or nothing), text/plain, a form.
      for (const type of [undefined, "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
        const refused = yield* raw(web.handler, "POST", "/v1/call", type, body)
        assert.strictEqual(refused.status, 415, String(type))
        assert.deepInclude(refused.body, { error: "unsupported media type" })
        assert.include(String(refused.body.message), "application/json")
      }
      // A body-less POST needs the type too: probing starts the server.
      const probe = yield* raw(web.handler, "POST", "/v1/probe/alpha", undefined)
      assert.strictEqual(probe.status, 415)
      const put = yield* raw(web.handler, "PUT", "/v1/settings/pool.idleTimeout", "text/plain", JSON.stringify({ value: "3m" }))
      assert.strictEqual(put.status, 415)
      assert.isFalse(yield* started("alpha"))
      const setting = yield* call(web.handler, "GET", "/v1/settings/pool.idleTimeout")
      assert.notStrictEqual(setting.body.value, "3m")
      // Declared JSON (parameters allowed), the same requests go through.
      const ok = yield* raw(web.handler, "POST", "/v1/call", "application/json; charset=utf-8", body)
      assert.strictEqual(ok.status, 200)
      assert.deepInclude(ok.body, { tool: "alpha__echo", isError: false })
      const probed = yield* raw(web.handler, "POST", "/v1/probe/alpha", "application/json")
      assert.strictEqual(probed.status, 200)
      // GETs need no type.
      assert.strictEqual((yield* raw(web.handler, "GET", "/v1/health", undefined)).status, 200)
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))

  it.scopedLive("v1/gate: the daemon's mounted httpApp refuses the same", () =>
    Effect.gen(function*() {
      const app = yield* ApiHandlers.httpApp
      const router = HttpRouter.empty.pipe(HttpRouter.mountApp("/v1", app, { includePrefix: true }))
      const handler = HttpApp.toWebHandlerRuntime(yield* Effect.runtime<HttpRouter.HttpRouter.DefaultServices>())(router)
      const refused = yield* raw(handler, "POST", "/v1/call", "text/plain", JSON.stringify({ tool: "alpha__echo" }))
      assert.strictEqual(refused.status, 415)
      assert.isFalse(yield* started("alpha"))
    }).pipe(Effect.provide(Layer.merge(HttpServer.layerContext, dependencies({ alpha: era("dual") })))))

  it.scopedLive("v1/search: a GET never starts a server, refresh=true or not; POST {refresh: true} does", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      // What an <img src> on any page can send: no Origin, no preflight.
      const got = yield* call(web.handler, "GET", "/v1/search?q=echo&refresh=true")
      assert.strictEqual(got.status, 200)
      assert.deepStrictEqual(got.body.unlisted, ["alpha"])
      assert.deepStrictEqual(got.body.tools, [])
      assert.isFalse(yield* started("alpha"))
      const posted = yield* call(web.handler, "POST", "/v1/search", { q: "echo", refresh: true })
      assert.strictEqual(posted.status, 200)
      assert.deepStrictEqual(posted.body.unlisted, [])
      assert.include((posted.body.tools as ReadonlyArray<Record<string, unknown>>).map((t) => t.name), "alpha__echo")
      assert.isTrue(yield* started("alpha"))
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))
})

describe("/v1 GETs from a browser page", () => {
  /** A GET with exactly these headers. */
  const get = (handler: (request: Request) => Promise<Response>, path: string, headers: Record<string, string>) =>
    Effect.flatMap(Effect.promise(() => handler(new Request(`http://mcpx.test${path}`, { headers }))), json)
  const namesOf = (body: Record<string, unknown>) => (body.tools as ReadonlyArray<Record<string, unknown>>).map((t) => t.name)

  // What a page on another loopback port sends: same-site (an <img>, a fetch), or its Origin.
  const pages: ReadonlyArray<Record<string, string>> = [
    { "sec-fetch-site": "same-site", "sec-fetch-dest": "image" },
    { "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors" },
    { origin: "http://127.0.0.1:3000" }
  ]

  it.scopedLive("v1/tools: a browser page's GET answers from what is known and starts no server; the CLI's (no Sec-Fetch-*) and a typed URL's start them", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      for (const headers of pages) {
        const listed = yield* get(web.handler, "/v1/tools", headers)
        assert.strictEqual(listed.status, 200, JSON.stringify(headers))
        assert.deepStrictEqual(listed.body.tools, [], JSON.stringify(headers))
        assert.deepStrictEqual(listed.body.unlisted, ["alpha", "beta"], JSON.stringify(headers))
        const searched = yield* get(web.handler, "/v1/search?q=echo", headers)
        assert.deepStrictEqual(searched.body.unlisted, ["alpha", "beta"], JSON.stringify(headers))
        assert.isFalse(yield* started("alpha"), JSON.stringify(headers))
        assert.isFalse(yield* started("beta"), JSON.stringify(headers))
      }
      // A URL typed into the address bar (Sec-Fetch-Site: none) lists, as the CLI does.
      const typed = yield* get(web.handler, "/v1/tools?ns=alpha", { "sec-fetch-site": "none", "sec-fetch-mode": "navigate" })
      assert.include(namesOf(typed.body), "alpha__echo")
      assert.notProperty(typed.body, "unlisted")
      assert.isTrue(yield* started("alpha"))
      const cli = yield* get(web.handler, "/v1/tools", {})
      assert.includeMembers(namesOf(cli.body), ["alpha__echo", "beta__echo"])
      assert.isTrue(yield* started("beta"))
      // Once known, a page sees the tools too, still without reaching an upstream.
      for (const headers of pages) {
        const listed = yield* get(web.handler, "/v1/tools", headers)
        assert.includeMembers(namesOf(listed.body), ["alpha__echo", "beta__echo"], JSON.stringify(headers))
        assert.deepStrictEqual(listed.body.unlisted, [], JSON.stringify(headers))
      }
    }).pipe(Effect.provide(dependencies({ alpha: era("dual"), beta: era("dual") }))))

  it.scopedLive("v1/search: a browser page's GET lists no server, not even a started one whose listing would start a process", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const gateway = yield* Gateway
      const catalog = yield* ToolCatalog
      // Pooled per session: session s1's process is up, and its tools change, so nothing is known live.
      const changes = yield* gateway.changes
      assert.strictEqual((yield* call(web.handler, "POST", "/v1/call", { tool: "alpha__echo", arguments: { message: "hi" }, session: "s1" })).status, 200)
      assert.strictEqual((yield* call(web.handler, "POST", "/v1/call", { tool: "alpha__notify_changes", session: "s1" })).status, 200)
      for (;;) if ((yield* Queue.take(changes))._tag === "ToolsListChanged") break
      assert.isTrue(Option.isNone(yield* catalog.live("alpha")))
      // Listing it for a caller of no session would start a process of its own (a `call` key).
      const events = yield* Effect.flatMap(Pool, (pool) => pool.subscribe)
      const starts = Effect.map(Queue.takeAll(events), (all) => Chunk.toReadonlyArray(all).filter((e) => e.type === "server.start").length)
      for (const headers of pages) {
        const searched = yield* get(web.handler, "/v1/search?q=echo", headers)
        assert.strictEqual(searched.status, 200, JSON.stringify(headers))
        assert.strictEqual(yield* starts, 0, JSON.stringify(headers))
      }
      // The CLI's search lists a started server, as it always has.
      const cli = yield* get(web.handler, "/v1/search?q=echo", {})
      assert.include(namesOf(cli.body), "alpha__echo")
      assert.strictEqual(yield* starts, 1)
    }).pipe(Effect.provide(dependencies({ alpha: era("dual", { protocol: "force-initialize", pool: { scope: "session" } }) }))))
})

describe("/v1 questions belong to their caller", () => {
  // Two servers: two calls asking at once on one shared process would be held, attributed to neither.
  const servers = { leg: TestGateway.era("legacy-32601"), other: TestGateway.era("legacy-32601") }
  type Body = Record<string, unknown>
  const idsOf = (body: Body) => (body.questions as ReadonlyArray<Body>).map((q) => q.id)

  it.scopedLive("v1/elicit: a caller sees and answers only the questions of the call it names; the owner on the socket sees all", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const mine = yield* call(web.handler, "POST", "/v1/ask", { tool: "leg.ask_name" })
      const theirs = yield* call(web.handler, "POST", "/v1/ask", { tool: "other.ask_name" })
      const [question] = theirs.body.questions as ReadonlyArray<Body>
      assert.strictEqual(theirs.body.status, "input_required")
      // Not named, nothing shown: the list used to hand every caller every call's question ids.
      assert.deepStrictEqual(idsOf((yield* call(web.handler, "GET", "/v1/elicit")).body), [])
      const own = yield* call(web.handler, "GET", `/v1/elicit?call=${String(mine.body.id)}`)
      assert.deepStrictEqual(idsOf(own.body), (mine.body.questions as ReadonlyArray<Body>).map((q) => q.id))
      // A question id that is not one of a call's is never answered over TCP.
      const guessed = yield* call(web.handler, "POST", `/v1/elicit/${String(mine.body.id)}.nope`, { action: "decline" })
      assert.strictEqual(guessed.status, 404)
      // The owner (the unix socket) sees both calls' questions.
      const pending = yield* PendingCalls
      const owner = yield* Effect.locally(Redact.RawForOwner, true)(
        Effect.map(Effect.flatMap(Ask.viewerOf(undefined), (viewer) => Ask.openQuestions(pending, viewer)), (o) => o.questions.map((q) => q.id))
      )
      assert.includeMembers(owner, [question?.id, ...idsOf(mine.body)])
      // Their caller still answers it, by id, and the call goes on with that answer.
      const answered = yield* call(web.handler, "POST", `/v1/elicit/${String(question?.id)}`, { action: "decline" })
      assert.strictEqual(answered.status, 200, JSON.stringify(answered.body))
      const polled = yield* call(web.handler, "GET", `/v1/ask/${String(theirs.body.id)}?waitMs=20000`)
      assert.strictEqual(polled.body.status, "complete", JSON.stringify(polled.body))
    }).pipe(Effect.provide(dependencies(servers))))
})
