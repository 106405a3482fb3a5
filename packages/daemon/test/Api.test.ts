/**
 * The /v1 API over a real gateway on era-server fixtures, served through
 * `HttpApiBuilder.toWebHandler` (no sockets). The test's scope owns the gateway, pool and child
 * processes; the web handler shares those instances and is disposed first.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { assert, describe, it } from "@effect/vitest"
import { EraCache } from "@mcpx-fx/upstream/era/EraCache"
import { Pool } from "@mcpx-fx/upstream/pool/Pool"
import { Prober } from "@mcpx-fx/upstream/era/Prober"
import { AcceptedPreferenceNames } from "@mcpx-fx/upstream/era/Preference"
import { UpstreamRpcError } from "@mcpx-fx/upstream/session/SessionErrors"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { Api } from "../src/Api.js"
import * as ApiHandlers from "../src/ApiHandlers.js"
import * as ApiShaping from "../src/ApiShaping.js"
import { Gateway } from "@mcpx-fx/gateway/Gateway"
import * as Events from "../src/Events.js"
import { PendingCalls } from "@mcpx-fx/gateway/PendingCalls"
import * as SettingsRegistry from "@mcpx-fx/config/SettingsRegistry"
import * as TestGateway from "@mcpx-fx/testing/gateway/TestGateway"

const era = TestGateway.era

import { broken, call, daemon, dependencies, send, webHandler } from "./support/ApiHarness.js"

// ---------------------------------------------------------------------------------------------

/** Reads an SSE body as text, frame by frame, until what has arrived satisfies `done`. */
const sseReader = (response: Response) => {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ""
  return {
    until: (done: (text: string) => boolean) =>
      Effect.promise(async () => {
        while (!done(text)) {
          const chunk = await reader.read()
          if (chunk.done) break
          text += decoder.decode(chunk.value, { stream: true })
        }
        return text
      }),
    cancel: Effect.promise(() => reader.cancel())
  }
}

/** The `event:` frames of an SSE text, with their parsed data. */
const framesOf = (text: string) =>
  text.split("\n\n").flatMap((frame) => {
    const event = /^event: (.+)$/m.exec(frame)?.[1]
    const data = /^data: (.+)$/m.exec(frame)?.[1]
    return event === undefined || data === undefined ? [] : [{ event, data: JSON.parse(data) as Record<string, unknown> }]
  })

const rowsByPath = (body: Record<string, unknown>) => new Map((body.settings as ReadonlyArray<Record<string, unknown>>).map((r) => [String(r.path), r]))

describe("/v1 system", () => {
  it.scopedLive("v1/health answers ok with the daemon's version, pid and uptime", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const { body, status } = yield* call(web.handler, "GET", "/v1/health")
      assert.strictEqual(status, 200)
      assert.deepInclude(body, { ok: true, version: daemon.version, pid: daemon.pid })
      assert.isAtLeast(Number(body.uptimeMs), 0)
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))

  it.scopedLive("v1/status reports the daemon, each server's pool and where the settings came from", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const before = yield* call(web.handler, "GET", "/v1/status")
      assert.strictEqual(before.status, 200)
      const servers = before.body.servers as ReadonlyArray<Record<string, unknown>>
      assert.deepStrictEqual(servers.map((s) => s.name), ["alpha"])
      assert.isNull(servers[0]!.pool)
      yield* call(web.handler, "POST", "/v1/call", { tool: "alpha.hello" })
      const { body } = yield* call(web.handler, "GET", "/v1/status")
      const d = body.daemon as Record<string, unknown>
      assert.deepInclude(d, { version: daemon.version, pid: daemon.pid, address: "127.0.0.1", port: 7717 })
      assert.strictEqual((d.configFiles as ReadonlyArray<string>).length, 1)
      const pool = (body.servers as ReadonlyArray<Record<string, unknown>>)[0]!.pool as Record<string, unknown>
      const instances = pool.instances as ReadonlyArray<Record<string, unknown>>
      assert.strictEqual(instances.length, 1)
      // Two requests on one instance: the tools/list that checks the name before the first call, and the call.
      assert.deepInclude(instances[0], { state: "ready", era: "modern", calls: 2 })
      const settings = body.settings as { sources: Record<string, number>; overridden: ReadonlyArray<Record<string, unknown>> }
      assert.strictEqual(settings.sources.file, 1)
      assert.strictEqual(settings.sources.env, 1)
      assert.deepInclude(settings.overridden.map((o) => [o.path, o.source]), ["pool.callTimeout", "env:MCPX_POOL_CALL_TIMEOUT"])
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }, { env: { MCPX_POOL_CALL_TIMEOUT: "45s" } }))))

  it.scopedLive("v1/servers lists each server with env and header keys, never their values", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const { body, status } = yield* call(web.handler, "GET", "/v1/servers")
      assert.strictEqual(status, 200)
      const [alpha] = body.servers as ReadonlyArray<Record<string, unknown>>
      assert.deepInclude(alpha, { name: "alpha", namespace: "alpha", transport: "stdio", preference: "force-initialize", scope: "global" })
      assert.deepStrictEqual(alpha!.envKeys, ["API_TOKEN"])
      assert.notInclude(JSON.stringify(body), "s3cret")
    }).pipe(Effect.provide(dependencies({ alpha: era("dual", { env: { API_TOKEN: "s3cret" }, protocol: "force-legacy" }) }))))

  it.scopedLive("v1/protocol reports the reference's shape with each upstream's era", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      yield* call(web.handler, "POST", "/v1/call", { tool: "old__hello" })
      const { body, status } = yield* call(web.handler, "GET", "/v1/protocol")
      assert.strictEqual(status, 200)
      const asServer = body.asServer as Record<string, unknown>
      assert.include(asServer.supported as ReadonlyArray<string>, "2026-07-28")
      assert.strictEqual(asServer.oldest, "2024-11-05")
      const asClient = body.asClient as Record<string, unknown>
      assert.strictEqual(asClient.preference, "prefer-initialize")
      const rows = asClient.servers as ReadonlyArray<Record<string, unknown>>
      assert.deepInclude(rows.find((r) => r.server === "old"), { preference: "force-initialize", era: "legacy", eraSource: "forced" })
      assert.deepInclude(rows.find((r) => r.server === "idle"), { preference: "prefer-initialize", era: null, eraSource: null })
    }).pipe(
      Effect.provide(dependencies({ old: era("dual", { protocol: "force-legacy" }), idle: era("dual") }, { env: { MCPX_UPSTREAM_PROTOCOL: "legacy" } }))
    ))

  it.scopedLive("v1/openapi.json describes every path", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const { body, status } = yield* call(web.handler, "GET", "/v1/openapi.json")
      assert.strictEqual(status, 200)
      assert.deepStrictEqual(body.info, {
        title: "mcpx-fx",
        description: "The mcpx-fx daemon's HTTP API, beside the MCP endpoint /mcp.",
        version: daemon.version
      })
      const paths = body.paths as Record<string, Record<string, unknown>>
      for (
        const p of ["/v1/health", "/v1/status", "/v1/servers", "/v1/protocol", "/v1/tools", "/v1/call", "/v1/settings", "/v1/settings/{path}", "/v1/events"]
      ) {
        assert.property(paths, p)
      }
      assert.hasAllKeys(paths["/v1/settings/{path}"]!, ["get", "put", "delete"])
      const call404 = (paths["/v1/call"]!.post as { responses: Record<string, unknown> }).responses
      assert.includeMembers(Object.keys(call404), ["200", "400", "404", "502"])
      const events = (paths["/v1/events"]!.get as { responses: Record<string, { content: Record<string, unknown> }> }).responses
      assert.property(events["200"]!.content, "text/event-stream")
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))
})

describe("/v1 tools and calls", () => {
  it.scopedLive("v1/tools lists namespaced tools with the failures beside them, one server with ?ns", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const all = yield* call(web.handler, "GET", "/v1/tools")
      assert.strictEqual(all.status, 200)
      const names = (all.body.tools as ReadonlyArray<Record<string, unknown>>).map((t) => t.name)
      assert.includeMembers(names, ["alpha__hello", "beta__echo"])
      assert.deepStrictEqual((all.body.failures as ReadonlyArray<Record<string, unknown>>).map((f) => f.server), ["broken"])
      const one = yield* call(web.handler, "GET", "/v1/tools?ns=beta")
      const only = (one.body.tools as ReadonlyArray<Record<string, unknown>>).map((t) => String(t.name))
      assert.isTrue(only.length > 0 && only.every((n) => n.startsWith("beta__")))
      assert.deepStrictEqual(one.body.failures, [])
      const missing = yield* call(web.handler, "GET", "/v1/tools?ns=alpah")
      assert.strictEqual(missing.status, 404)
      assert.deepInclude(missing.body, { _tag: "UnknownName", kind: "server", name: "alpah" })
      assert.include(missing.body.suggestions as ReadonlyArray<string>, "alpha")
    }).pipe(Effect.provide(dependencies({ alpha: era("dual"), beta: era("legacy-32601"), broken }))))

  it.scopedLive("v1/call returns the upstream's result, and a tool's isError is still 200", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const ok = yield* call(web.handler, "POST", "/v1/call", { tool: "alpha.echo", arguments: { message: "line one\nline two" } })
      assert.strictEqual(ok.status, 200)
      assert.deepInclude(ok.body, { tool: "alpha__echo", isError: false })
      assert.include(JSON.stringify((ok.body.result as Record<string, unknown>).content), "line one\\nline two")
      const failed = yield* call(web.handler, "POST", "/v1/call", { tool: "alpha__boom" })
      assert.strictEqual(failed.status, 200)
      assert.isTrue(failed.body.isError)
      assert.strictEqual((failed.body.result as Record<string, unknown>).isError, true)
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))

  it.scopedLive("v1/call of an unknown tool is 404 with the closest names", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const { body, status } = yield* call(web.handler, "POST", "/v1/call", { tool: "alpha__helo" })
      assert.strictEqual(status, 404)
      assert.deepInclude(body, { _tag: "UnknownName", kind: "tool", name: "alpha__helo" })
      assert.include(body.suggestions as ReadonlyArray<string>, "alpha__hello")
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))

  it.scopedLive("v1/call with arguments that are not an object, or no tool at all, is 400", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const list = yield* call(web.handler, "POST", "/v1/call", { tool: "alpha__echo", arguments: ["x"] })
      assert.strictEqual(list.status, 400)
      assert.deepInclude(list.body, { _tag: "BadArguments", tool: "alpha__echo" })
      assert.include(String(list.body.detail), "an array")
      const shapeless = yield* call(web.handler, "POST", "/v1/call", { arguments: {} })
      assert.strictEqual(shapeless.status, 400)
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))

  it.scopedLive("v1/call of arguments that do not fit the tool's inputSchema is 400 naming the field; the upstream is not called", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const wrong = yield* call(web.handler, "POST", "/v1/call", { tool: "alpha.echo", arguments: { message: 1 } })
      assert.strictEqual(wrong.status, 400, JSON.stringify(wrong.body))
      assert.deepInclude(wrong.body, { _tag: "BadArguments", tool: "alpha__echo", field: "message", detail: "message must be string" })
      const missing = yield* call(web.handler, "POST", "/v1/call", { tool: "alpha.echo", arguments: {} })
      assert.strictEqual(missing.status, 400)
      assert.deepInclude(missing.body, { _tag: "BadArguments", field: "message", detail: "message is required" })
      const real = yield* Gateway
      const untouched = { ...real, callTool: () => Effect.dieMessage("the upstream was called") }
      const refused = yield* Effect.flip(ApiShaping.callTool(untouched, { tool: "alpha.echo", arguments: { message: ["x"] } }))
      assert.deepInclude(refused, { _tag: "BadArguments", field: "message" })
      const ok = yield* call(web.handler, "POST", "/v1/call", { tool: "alpha.echo", arguments: { message: "fits" } })
      assert.strictEqual(ok.status, 200)
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))

  it.scopedLive("v1/call resolves the tool's name once: the argument check's resolution is the call's", () => {
    const count = { resolutions: 0 }
    return Effect.gen(function*() {
      const web = yield* webHandler
      // The first call lists alpha, the next finds echo in place: one resolution each.
      for (const message of ["one", "two"]) {
        const before = count.resolutions
        const ok = yield* call(web.handler, "POST", "/v1/call", { tool: "alpha.echo", arguments: { message } })
        assert.strictEqual(ok.status, 200, JSON.stringify(ok.body))
        assert.include(JSON.stringify(ok.body), message)
        assert.strictEqual(count.resolutions - before, 1, `resolutions of the call "${message}"`)
      }
      // As a task: the check's resolution is the first round's.
      const before = count.resolutions
      const task = yield* call(web.handler, "POST", "/v1/call", { tool: "alpha.echo", arguments: { message: "task" }, task: {} })
      assert.strictEqual(task.status, 202, JSON.stringify(task.body))
      const taskId = String((task.body.task as Record<string, unknown>).taskId)
      const done = yield* call(web.handler, "GET", `/v1/tasks/${taskId}/result?waitMs=20000`)
      assert.strictEqual(done.status, 200, JSON.stringify(done.body))
      assert.include(JSON.stringify(done.body.result), "task")
      assert.strictEqual(count.resolutions - before, 1)
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }, { catalog: TestGateway.countingCatalog(count) })))
  })

  it.scopedLive("v1: every 4xx has a JSON body: a body that is not JSON, an empty one, an unknown route or method", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const raw = (method: string, path: string, body?: string) =>
        Effect.promise(async () => {
          const response = await web.handler(
            new Request(`http://mcpx.test${path}`, { method, ...(body === undefined ? {} : { body, headers: { "content-type": "application/json" } }) })
          )
          return { status: response.status, type: response.headers.get("content-type"), text: await response.text() }
        })
      for (
        const [method, path, body, status, tag] of [
          ["POST", "/v1/call", "{not json", 400, "HttpApiDecodeError"],
          ["POST", "/v1/call", "", 400, "HttpApiDecodeError"],
          // Not declared JSON at all: refused before it is read (HttpJsonBody).
          ["POST", "/v1/call", undefined, 415, "UnsupportedMediaType"],
          ["PUT", "/v1/settings/pool.max", "nope", 400, "HttpApiDecodeError"],
          ["GET", "/v1/nothing", undefined, 404, "NotFound"],
          ["DELETE", "/v1/call", undefined, 404, "NotFound"]
        ] as const
      ) {
        const r = yield* raw(method, path, body)
        assert.strictEqual(r.status, status, `${method} ${path}`)
        assert.include(r.type ?? "", "application/json", `${method} ${path}`)
        const parsed = JSON.parse(r.text) as Record<string, unknown>
        assert.strictEqual(parsed._tag, tag, `${method} ${path}: ${r.text}`)
        assert.isString(parsed.message)
      }
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))

  it.scopedLive("v1/call to a server that cannot start is 502 naming it", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const { body, status } = yield* call(web.handler, "POST", "/v1/call", { tool: "broken__anything" })
      assert.strictEqual(status, 502)
      assert.deepInclude(body, { _tag: "UpstreamFailed", kind: "PoolError", server: "broken" })
      assert.include(String(body.detail), "no token configured")
    }).pipe(Effect.provide(dependencies({ broken }))))

  it.scopedLive("v1/call of arguments the upstream refuses (-32602) is BadArguments, other upstream errors UpstreamFailed", () =>
    Effect.gen(function*() {
      const real = yield* Gateway
      const refusing = (code: number) => ({
        ...real,
        callTool: () => Effect.fail(new UpstreamRpcError({ server: "alpha", method: "tools/call", code, rpcMessage: "message: expected a string" }))
      })
      // Arguments that fit the schema, refused by the upstream all the same.
      const bad = yield* Effect.flip(ApiShaping.callTool(refusing(-32602), { tool: "alpha.echo", arguments: { message: "x" } }))
      assert.deepInclude(bad, { _tag: "BadArguments", tool: "alpha__echo", detail: "message: expected a string" })
      const other = yield* Effect.flip(ApiShaping.callTool(refusing(-32603), { tool: "alpha.echo", arguments: { message: "x" } }))
      assert.deepInclude(other, { _tag: "UpstreamFailed", kind: "UpstreamRpcError", server: "alpha", code: -32603 })
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))
})

describe("/v1 settings", () => {
  it.scopedLive("v1/settings lists every setting with its source, and gets one by path", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const { body, status } = yield* call(web.handler, "GET", "/v1/settings")
      assert.strictEqual(status, 200)
      const rows = rowsByPath(body)
      assert.deepStrictEqual([...rows.keys()], [...SettingsRegistry.paths])
      assert.deepInclude(rows.get("pool.idleTimeout"), { value: "90s", hot: true })
      assert.match(String(rows.get("pool.idleTimeout")!.source), /^file:/)
      const one = yield* call(web.handler, "GET", "/v1/settings/daemon.port")
      assert.deepInclude(one.body, { path: "daemon.port", value: 7717, source: "default", hot: false })
      const missing = yield* call(web.handler, "GET", "/v1/settings/pool.maxx")
      assert.strictEqual(missing.status, 404)
      assert.deepInclude(missing.body, { _tag: "UnknownSetting", path: "pool.maxx" })
      assert.include(missing.body.suggestions as ReadonlyArray<string>, "pool.max")
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }, { settings: { "pool.idleTimeout": "90s" } }))))

  it.scopedLive("v1/settings/put of a hot setting is applied and read back; delete drops it", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const put = yield* call(web.handler, "PUT", "/v1/settings/pool.callTimeout", { value: "90s" })
      assert.strictEqual(put.status, 200)
      assert.deepInclude(put.body, { path: "pool.callTimeout", value: "90s", applied: true, restartRequired: false, source: "runtime" })
      const read = yield* call(web.handler, "GET", "/v1/settings/pool.callTimeout")
      assert.deepInclude(read.body, { value: "90s", source: "runtime" })
      const servers = yield* call(web.handler, "GET", "/v1/servers")
      assert.strictEqual((servers.body.servers as ReadonlyArray<Record<string, unknown>>)[0]!.callTimeoutMs, 90_000)
      const dropped = yield* call(web.handler, "DELETE", "/v1/settings/pool.callTimeout")
      assert.deepStrictEqual(dropped.body, { path: "pool.callTimeout", removed: true, value: "1m", text: "1m", source: "default" })
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))

  it.scopedLive("v1/settings/put of a cold setting says restart required", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const put = yield* call(web.handler, "PUT", "/v1/settings/daemon.port", { value: 8080 })
      assert.strictEqual(put.status, 200)
      assert.deepInclude(put.body, { path: "daemon.port", value: 8080, applied: false, restartRequired: true, source: "default" })
      assert.include(String(put.body.note), "restart")
      const read = yield* call(web.handler, "GET", "/v1/settings/daemon.port")
      assert.deepInclude(read.body, { value: 7717, source: "default" })
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))

  it.scopedLive("v1/settings/put of an invalid value is 400 and of an unknown path 404", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const bad = yield* call(web.handler, "PUT", "/v1/settings/pool.callTimeout", { value: "soon" })
      assert.strictEqual(bad.status, 400)
      assert.deepInclude(bad.body, { _tag: "InvalidSettingValue", path: "pool.callTimeout" })
      assert.include(String(bad.body.detail), "a duration")
      const unknown = yield* call(web.handler, "PUT", "/v1/settings/pool.calltimeout", { value: "1s" })
      assert.strictEqual(unknown.status, 404)
      assert.include(unknown.body.suggestions as ReadonlyArray<string>, "pool.callTimeout")
      const gone = yield* call(web.handler, "DELETE", "/v1/settings/nope")
      assert.strictEqual(gone.status, 404)
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))

  it.scopedLive("v1/settings/put of upstream.protocol normalises an alias, or refuses with the list of values", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const alias = yield* call(web.handler, "PUT", "/v1/settings/upstream.protocol", { value: "Force-Legacy" })
      assert.strictEqual(alias.status, 200)
      assert.deepInclude(alias.body, { value: "force-initialize", applied: true })
      const refused = yield* call(web.handler, "PUT", "/v1/settings/upstream.protocol", { value: "newest" })
      assert.strictEqual(refused.status, 400)
      for (const name of AcceptedPreferenceNames) assert.include(String(refused.body.detail), name)
      const read = yield* call(web.handler, "GET", "/v1/settings/upstream.protocol")
      assert.strictEqual(read.body.value, "force-initialize")
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))

  it.scopedLive("v1/settings/put of upstream.protocol reaches the next call", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const first = yield* call(web.handler, "POST", "/v1/call", { tool: "alpha__hello" })
      assert.include(JSON.stringify(first.body.result), "over modern")
      // force-*, because a prefer-* start would rightly take the era cache's word for the modern era
      yield* call(web.handler, "PUT", "/v1/settings/upstream.protocol", { value: "force-legacy" })
      const second = yield* call(web.handler, "POST", "/v1/call", { tool: "alpha__hello" })
      assert.include(JSON.stringify(second.body.result), "over legacy")
      const protocol = yield* call(web.handler, "GET", "/v1/protocol")
      const row = ((protocol.body.asClient as Record<string, unknown>).servers as ReadonlyArray<Record<string, unknown>>)[0]
      assert.deepInclude(row, { preference: "force-initialize", era: "legacy", eraSource: "forced" })
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))
})

describe("/v1 events", () => {
  it.scopedLive("v1/events delivers a server.start when a call starts a server", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const response = yield* send(web.handler, "GET", "/v1/events?types=server.start,server.stop")
      assert.strictEqual(response.status, 200)
      assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/)
      const sse = sseReader(response)
      yield* sse.until((t) => t.includes(Events.readyFrame))
      yield* call(web.handler, "POST", "/v1/call", { tool: "alpha__hello" })
      const text = yield* sse.until((t) => t.includes("event: server.start"))
      const start = framesOf(text).find((f) => f.event === "server.start")!
      assert.deepInclude(start.data, { type: "server.start", server: "alpha", era: "modern", lane: "modern" })
      assert.isNumber(start.data.at)
      yield* sse.cancel
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))

  it.scopedLive("v1/events delivers server.stop when a per-call instance is closed after its call", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const sse = sseReader(yield* send(web.handler, "GET", "/v1/events"))
      yield* sse.until((t) => t.includes(Events.readyFrame))
      yield* call(web.handler, "POST", "/v1/call", { tool: "alpha__hello" })
      const text = yield* sse.until((t) => t.includes("event: server.stop"))
      const frames = framesOf(text)
      assert.deepStrictEqual(frames.map((f) => f.event), ["server.start", "server.stop"])
      assert.deepInclude(frames[1]!.data, { type: "server.stop", server: "alpha", instance: frames[0]!.data.instance, calls: 1 })
      yield* sse.cancel
    }).pipe(Effect.provide(dependencies({ alpha: era("dual", { pool: { scope: "call" } }) }))))

  it.scopedLive("v1/events delivers server.era.stale when the era cache was wrong", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const gateway = yield* Gateway
      const cache = yield* EraCache
      yield* cache.set(gateway.servers[0]!.configured.definition, { era: "modern", version: "2026-07-28" })
      const response = yield* send(web.handler, "GET", "/v1/events?server=old")
      const sse = sseReader(response)
      yield* sse.until((t) => t.includes(Events.readyFrame))
      const called = yield* call(web.handler, "POST", "/v1/call", { tool: "old__hello" })
      assert.include(JSON.stringify(called.body.result), "over legacy")
      const text = yield* sse.until((t) => t.includes("event: server.era.stale"))
      const stale = framesOf(text).find((f) => f.event === "server.era.stale")!
      assert.deepInclude(stale.data, { type: "server.era.stale", server: "old", cached: "modern", era: "legacy" })
      yield* sse.cancel
    }).pipe(Effect.provide(dependencies({ old: era("legacy-32601") }))))

  it.effect("v1/events frames each event with its type as the SSE event name, and filters by type and server", () =>
    Effect.sync(() => {
      const event = { type: "server.stop", server: "a", lane: "modern", instance: "a#1", key: "global", reason: "idle", calls: 2, uptimeMs: 5, at: 9 } as const
      assert.strictEqual(Events.frame(event), `event: server.stop\ndata: ${JSON.stringify(event)}\n\n`)
      assert.deepStrictEqual(Events.filterOf({ types: "server.start, server.stop", server: "" }), { types: ["server.start", "server.stop"] })
      assert.deepStrictEqual(Events.filterOf({}), {})
    }))
})

describe("/v1 typed client", () => {
  it.scopedLive("v1/client: HttpApiClient speaks the API, typed errors included", () =>
    Effect.gen(function*() {
      const client = yield* HttpApiClient.make(Api, { baseUrl: "http://mcpx.test" })
      const health = yield* client.system.health()
      assert.strictEqual(health.version, daemon.version)
      const set = yield* client.settings.set({ path: { path: "pool.idleTimeout" }, payload: { value: 120_000 } })
      assert.deepInclude(set, { value: "2m", applied: true })
      const refused = yield* Effect.flip(client.settings.set({ path: { path: "pool.idle" }, payload: { value: "1s" } }))
      assert.strictEqual(refused._tag, "UnknownSetting")
      const tools = yield* client.tools.list({ urlParams: {} })
      assert.isTrue(tools.tools.some((t) => t.name === "alpha__hello"))
    }).pipe(
      Effect.provide(FetchHttpClient.layer),
      Effect.provideServiceEffect(
        FetchHttpClient.Fetch,
        Effect.map(webHandler, (web) => ((input: string | URL | Request, init?: RequestInit) => web.handler(new Request(input, init))) as typeof fetch)
      ),
      Effect.provide(dependencies({ alpha: era("dual") }))
    ))
})

describe("/v1 mounting", () => {
  it.scopedLive("v1/httpApp mounts beside /mcp in one router, /v1 paths kept", () =>
    Effect.gen(function*() {
      const app = yield* ApiHandlers.httpApp
      const router = HttpRouter.empty.pipe(
        HttpRouter.mountApp("/v1", app, { includePrefix: true }),
        HttpRouter.post("/mcp", HttpServerResponse.text("the MCP endpoint"))
      )
      const runtime = yield* Effect.runtime<HttpRouter.HttpRouter.DefaultServices>()
      const handler = HttpApp.toWebHandlerRuntime(runtime)(router)
      const health = yield* call(handler, "GET", "/v1/health")
      assert.deepInclude(health, { status: 200, body: { ok: true, version: daemon.version, pid: daemon.pid, uptimeMs: health.body.uptimeMs } })
      const openapi = yield* call(handler, "GET", "/v1/openapi.json")
      assert.property(openapi.body.paths as Record<string, unknown>, "/v1/settings/{path}")
      const mcp = yield* send(handler, "POST", "/mcp", {})
      assert.strictEqual(yield* Effect.promise(() => mcp.text()), "the MCP endpoint")
    }).pipe(Effect.provide(Layer.merge(HttpServer.layerContext, dependencies({ alpha: era("dual") })))))
})

describe("/v1 events keep-alive", () => {
  const unusedProber = Layer.succeed(Prober, Prober.of({ start: () => Effect.dieMessage("no upstream starts in this test") }))

  it.scoped("v1/events sends a keep-alive comment every transport.sseKeepAlive", () =>
    Effect.gen(function*() {
      const fiber = yield* Events.sse({}, "15 seconds").pipe(Stream.take(3), Stream.runCollect, Effect.fork)
      // Each adjust must find the stream's sleep already registered, or it would pass it by.
      const sleeping = Effect.repeat(TestClock.sleeps(), { until: (sleeps) => Chunk.size(sleeps) > 0 })
      yield* sleeping
      yield* TestClock.adjust("15 seconds")
      yield* sleeping
      yield* TestClock.adjust("15 seconds")
      const frames = yield* Fiber.join(fiber)
      assert.deepStrictEqual(Chunk.toReadonlyArray(frames), [Events.readyFrame, Events.keepAliveFrame, Events.keepAliveFrame])
    }).pipe(Effect.provide(Layer.merge(
      Pool.layer.pipe(Layer.provide(unusedProber)),
      PendingCalls.layerWith({ ttl: Duration.minutes(1), maxRounds: 1, maxPending: 1, gather: Duration.millis(1) })
    ))))
})
