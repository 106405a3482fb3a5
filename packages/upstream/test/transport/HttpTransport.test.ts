import { existsSync, mkdtempSync, readFileSync, rmSync, watch } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { ChildProcess } from "node:child_process"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import { startHttpFixture } from "@mcpx-fx/testing/Fixtures"
import * as Chunk from "effect/Chunk"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Wire from "../../src/transport/Wire.js"
import { type HttpOptions, openHttp } from "../../src/transport/HttpTransport.js"
import { HttpDefinition } from "../../src/ServerDefinition.js"
import type { Connection, RequestHints } from "../../src/transport/Transport.js"

// ---------------------------------------------------------------------------------------------
// Helpers. Real I/O only: the era-server fixture over HTTP, a recording HttpClient on fetch, and
// event-driven waits on the fixture's stderr and method log (never the real clock).

const LegacyVersion = "2025-11-25"
const ModernVersion = "2026-07-28"
const clientInfo = { name: "http-transport-test", version: "0.0.0" }

const legacy: RequestHints = { era: "legacy", headers: { "MCP-Protocol-Version": LegacyVersion } }
const modern = (method: string, name?: string, version: string = ModernVersion): RequestHints => ({
  era: "modern",
  headers: { "MCP-Protocol-Version": version, "Mcp-Method": method, ...(name === undefined ? {} : { "Mcp-Name": name }) }
})
const meta = (version: string = ModernVersion, capabilities: Record<string, unknown> = {}) => ({
  "io.modelcontextprotocol/protocolVersion": version,
  "io.modelcontextprotocol/clientCapabilities": capabilities,
  "io.modelcontextprotocol/clientInfo": clientInfo
})

const start = (mode: string, ...args: ReadonlyArray<string>) => startHttpFixture("era-server", ["--mode", mode, ...args])

const definition = (url: string, headers: Record<string, string> = {}) => new HttpDefinition({ transport: "http", name: "era", url, headers })

/** Runs a test on the real clock with fetch as the HttpClient. */
const live = <A, E>(self: Effect.Effect<A, E, Scope.Scope | HttpClient.HttpClient>) => self.pipe(Effect.provide(FetchHttpClient.layer))

interface Sent {
  readonly method: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** Opens a connection whose HTTP exchanges are recorded as they leave. */
const openRecorded = (def: HttpDefinition, options?: HttpOptions) =>
  Effect.gen(function*() {
    const sent: Array<Sent> = []
    const wire = yield* Wire.make()
    const record = (request: Wire.WireRequest) => sent.push({ method: request.method, url: request.url, headers: request.headers, body: request.body ?? "" })
    const recording: Wire.Wire = {
      abortInFlight: wire.abortInFlight,
      send: (request) => Effect.zipRight(Effect.sync(() => record(request)), wire.send(request)),
      dispatch: (request, reader) => {
        record(request)
        return wire.dispatch(request, reader)
      }
    }
    const conn = yield* openHttp(def, { ...options, wire: recording })
    return { conn, sent }
  })

const collect = <E>(s: Stream.Stream<JsonRpc.Parsed, E>) => Effect.map(Stream.runCollect(s), Chunk.toReadonlyArray)

const only = <A>(xs: ReadonlyArray<A>): A => {
  assert.strictEqual(xs.length, 1, `expected one message, got ${JSON.stringify(xs)}`)
  return xs[0] as A
}

const resultOf = (p: JsonRpc.Parsed): Record<string, unknown> => {
  assert.isTrue(JsonRpc.isSuccess(p.message), `expected a result, got ${JSON.stringify(p.raw)}`)
  return (p.message as JsonRpc.SuccessResponse).result
}

const errorOf = (p: JsonRpc.Parsed): JsonRpc.ErrorObject => {
  assert.isTrue(JsonRpc.isErrorResponse(p.message), `expected an error, got ${JSON.stringify(p.raw)}`)
  return (p.message as JsonRpc.ErrorResponse).error
}

const textOf = (result: Record<string, unknown>): string => {
  const content = result["content"]
  assert.isTrue(Array.isArray(content))
  const first: unknown = (content as ReadonlyArray<unknown>)[0]
  assert.isTrue(typeof first === "object" && first !== null)
  return String((first as Record<string, unknown>)["text"])
}

const initialize = (conn: Connection, capabilities: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const init = only(
      yield* collect(conn.request(
        JsonRpc.request("init", "initialize", { protocolVersion: LegacyVersion, capabilities, clientInfo }),
        { era: "legacy" }
      ))
    )
    yield* conn.notify(JsonRpc.notification("notifications/initialized"), legacy)
    return resultOf(init)
  })

const callTool = (id: string, name: string, args: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  JsonRpc.request(id, "tools/call", { name, arguments: args, ...extra })

const header = (s: Sent, name: string): string | undefined => s.headers[name.toLowerCase()]

/** An event-driven wait gave up: what it waited for never happened. */
class WaitTimedOut extends Data.TaggedError("WaitTimedOut")<{ readonly what: string }> {}

const tempLog = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "http-transport-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => ({ dir, file: join(dir, "methods.log") })))

const logLines = (file: string): ReadonlyArray<string> => existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0) : []

/** Waits until the fixture's method log satisfies `done`, woken by file-system events. */
const logSatisfies = (log: { readonly dir: string; readonly file: string }, done: (lines: ReadonlyArray<string>) => boolean) =>
  Effect.async<void>((resume) => {
    const check = () => {
      if (done(logLines(log.file))) resume(Effect.void)
    }
    const watcher = watch(log.dir, check)
    check()
    return Effect.sync(() => watcher.close())
  }).pipe(Effect.timeoutFail({
    duration: "10 seconds",
    onTimeout: () => new WaitTimedOut({ what: `the method log to match; it says ${logLines(log.file).join(" | ")}` })
  }))

/** Collects the fixture's stderr from now on; `includes` waits until a line with `text` appears. */
const watchStderr = (child: ChildProcess) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const state = { text: "", waiters: new Set<() => void>() }
      const onData = (d: Buffer) => {
        state.text += d.toString()
        for (const w of state.waiters) w()
      }
      child.stderr?.on("data", onData)
      return { state, onData }
    }),
    ({ onData }) => Effect.sync(() => child.stderr?.off("data", onData))
  ).pipe(Effect.map(({ state }) => ({
    includes: (text: string) =>
      Effect.async<void>((resume) => {
        const check = () => {
          if (state.text.includes(text)) resume(Effect.void)
        }
        state.waiters.add(check)
        check()
        return Effect.sync(() => state.waiters.delete(check))
      }).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new WaitTimedOut({ what: `stderr to say ${text}; it says ${state.text}` }) }))
  })))

/** A raw exchange beside the transport, for observing the fixture's session state. */
const raw = (method: "GET" | "POST" | "DELETE", url: string, headers: Record<string, string>, body?: unknown) =>
  Effect.scoped(Effect.gen(function*() {
    const client = HttpClient.withScope(yield* HttpClient.HttpClient)
    let request = HttpClientRequest.make(method)(url).pipe(
      HttpClientRequest.setHeaders({ accept: "application/json, text/event-stream", ...headers })
    )
    if (body !== undefined) request = HttpClientRequest.bodyText(request, JSON.stringify(body), "application/json")
    const response = yield* client.execute(request)
    return response.status
  }))

/**
 * A scripted HTTP server for what era-server never sends (notifications before a response, events
 * on the GET stream). `handle` answers each request; the server is closed with the scope.
 */
const stub = (handle: (req: IncomingMessage, res: ServerResponse, body: string) => void) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly close: () => void }>((resume) => {
      const server = createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")))
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({
          url: `http://127.0.0.1:${port}/mcp`,
          close: () => {
            server.closeAllConnections()
            server.close()
          }
        }))
      })
    }),
    (s) => Effect.sync(() => s.close())
  )

const sseEvent = (message: unknown, id?: string) => `${id === undefined ? "" : `id: ${id}\n`}event: message\ndata: ${JSON.stringify(message)}\n\n`

// ---------------------------------------------------------------------------------------------

describe("openHttp (Streamable HTTP)", () => {
  describe("replies", () => {
    it.scopedLive("a modern request answered as JSON yields its response and ends; headers as configured", () =>
      live(Effect.gen(function*() {
        const { url } = yield* start("dual")
        const { conn, sent } = yield* openRecorded(definition(url, { "X-Api-Key": "secret", Accept: "text/html" }))
        assert.strictEqual(conn.wire, "streamable-http")
        const reply = only(
          yield* collect(conn.request(
            JsonRpc.request(1, "tools/list", { _meta: meta() }),
            modern("tools/list")
          ))
        )
        assert.strictEqual(JsonRpc.idOf(reply.message), 1)
        const result = resultOf(reply)
        assert.strictEqual(result["resultType"], "complete")
        assert.isTrue(Array.isArray(result["tools"]))
        // Unknown members survive in `raw` for forwarding.
        assert.isDefined((reply.raw["result"] as Record<string, unknown>)["ttlMs"])
        const post = only(sent)
        assert.strictEqual(post.method, "POST")
        assert.strictEqual(post.url, url)
        assert.strictEqual(header(post, "content-type"), "application/json")
        assert.strictEqual(header(post, "accept"), "application/json, text/event-stream")
        assert.strictEqual(header(post, "x-api-key"), "secret")
        assert.strictEqual(header(post, "mcp-method"), "tools/list")
        assert.strictEqual(header(post, "mcp-protocol-version"), ModernVersion)
        assert.isUndefined(header(post, "mcp-session-id"))
        assert.deepStrictEqual(JSON.parse(post.body), { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: meta() } })
      })))

    it.scopedLive("an SSE reply is streamed and ends with the response", () =>
      live(Effect.gen(function*() {
        const { url } = yield* start("dual")
        const conn = yield* openHttp(definition(url))
        const reply = only(
          yield* collect(conn.request(
            callTool("h", "hello", {}, { _meta: meta() }),
            modern("tools/call", "hello")
          ))
        )
        assert.strictEqual(textOf(resultOf(reply)), `hello from dual over modern ${ModernVersion}`)
      })))

    it.scopedLive("a -32022 in a 400 body is delivered as the request's response", () =>
      live(Effect.gen(function*() {
        const { url } = yield* start("dual")
        const conn = yield* openHttp(definition(url))
        const reply = only(
          yield* collect(conn.request(
            JsonRpc.request("v", "tools/list", { _meta: meta("2099-01-01") }),
            modern("tools/list", undefined, "2099-01-01")
          ))
        )
        assert.strictEqual(JsonRpc.idOf(reply.message), "v")
        const error = errorOf(reply)
        assert.strictEqual(error.code, -32022)
        assert.include((error.data as { supported: ReadonlyArray<string> }).supported, ModernVersion)
      })))

    it.scopedLive("a 5xx stays an HTTPStatusError even when its body answers the request's id", () =>
      live(Effect.gen(function*() {
        const { url } = yield* stub((_req, res, body) => {
          const { id } = JSON.parse(body) as { id: number }
          res.writeHead(500, { "content-type": "application/json" })
          res.end(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32603, message: "database is down" } }))
        })
        const conn = yield* openHttp(definition(url))
        const e = yield* Effect.flip(collect(conn.request(
          JsonRpc.request(5, "server/discover", { _meta: meta() }),
          modern("server/discover")
        )))
        assert.strictEqual(e._tag, "HTTPStatusError")
        if (e._tag === "HTTPStatusError") {
          assert.strictEqual(e.status, 500)
          assert.strictEqual(e.rpcError?.code, -32603)
        }
      })))

    it.scopedLive("a bare 4xx is an HTTPStatusError with the status and body; an id-less JSON-RPC error is kept", () =>
      live(Effect.gen(function*() {
        const silent = yield* start("legacy-silent")
        const bare = yield* Effect.flip(collect(
          (yield* openHttp(definition(silent.url))).request(JsonRpc.request(1, "tools/list"), { era: "legacy" })
        ))
        assert.strictEqual(bare._tag, "HTTPStatusError")
        if (bare._tag !== "HTTPStatusError") return
        assert.strictEqual(bare.status, 400)
        assert.strictEqual(bare.body, "")
        assert.isUndefined(bare.rpcError)

        const exiting = yield* start("legacy-exit")
        const notFound = yield* Effect.flip(collect(
          (yield* openHttp(definition(exiting.url))).request(JsonRpc.request(2, "server/discover"), { era: "legacy" })
        ))
        assert.deepInclude(notFound, { _tag: "HTTPStatusError", status: 404, body: "Not Found" })

        // modern-only refuses a POSTed response with an id-less -32600 (the notify/respond path).
        const modernOnly = yield* start("modern-only")
        const refused = yield* Effect.flip(
          (yield* openHttp(definition(modernOnly.url))).respond(JsonRpc.success("q", {}), { era: "modern" })
        )
        assert.strictEqual(refused._tag, "HTTPStatusError")
        if (refused._tag !== "HTTPStatusError") return
        assert.strictEqual(refused.status, 400)
        assert.strictEqual(refused.rpcError?.code, -32600)
      })))

    it.scopedLive("initialize refused with a bare 405 or 404 is LegacyHTTPRefusedError", () =>
      live(Effect.gen(function*() {
        const init = JsonRpc.request(0, "initialize", { protocolVersion: LegacyVersion, capabilities: {}, clientInfo })
        const sse = yield* start("legacy-sse")
        const e405 = yield* Effect.flip(collect((yield* openHttp(definition(sse.url))).request(init, { era: "legacy" })))
        assert.deepInclude(e405, { _tag: "LegacyHTTPRefusedError", status: 405 })
        const dual = yield* start("dual")
        const e404 = yield* Effect.flip(collect(
          (yield* openHttp(definition(`${dual.url}/elsewhere`))).request(init, { era: "legacy" })
        ))
        assert.deepInclude(e404, { _tag: "LegacyHTTPRefusedError", status: 404 })
      })))

    it.scopedLive("a body or event over maxFrameBytes fails with FrameTooLarge", () =>
      live(Effect.gen(function*() {
        const list = JsonRpc.request(1, "tools/list", { _meta: meta() })
        const sse = yield* start("modern-only", "--reply", "sse")
        const overEvent = yield* Effect.flip(collect(
          (yield* openHttp(definition(sse.url), { maxFrameBytes: 256 })).request(list, modern("tools/list"))
        ))
        assert.deepInclude(overEvent, { _tag: "FrameTooLarge", limit: 256 })
        const json = yield* start("modern-only", "--reply", "json")
        const overBody = yield* Effect.flip(collect(
          (yield* openHttp(definition(json.url), { maxFrameBytes: 256 })).request(list, modern("tools/list"))
        ))
        assert.deepInclude(overBody, { _tag: "FrameTooLarge", limit: 256 })
        // The same reply under the default cap is fine.
        const fine = only(yield* collect((yield* openHttp(definition(sse.url))).request(list, modern("tools/list"))))
        assert.isTrue(Array.isArray(resultOf(fine)["tools"]))
      })))

    it.scopedLive("a refused connection is TransportClosed naming the URL", () =>
      live(Effect.gen(function*() {
        // A port that was just free: bind it, note it, let it go.
        const gone = yield* stub(() => {})
        gone.close()
        const conn = yield* openHttp(definition(gone.url))
        const e = yield* Effect.flip(collect(conn.request(JsonRpc.request(1, "ping"), { era: "legacy" })))
        assert.strictEqual(e._tag, "TransportClosed")
        assert.match(e.message, new RegExp(`^cannot reach ${gone.url.replace(/[.]/g, "\\.")}: .*ECONNREFUSED`))
        const n = yield* Effect.flip(conn.notify(JsonRpc.notification("notifications/initialized"), legacy))
        assert.strictEqual(n._tag, "TransportClosed")
      })))
  })

  describe("legacy sessions", () => {
    it.scopedLive("captures Mcp-Session-Id and sends it on legacy and unmarked messages, never on modern ones", () =>
      live(Effect.gen(function*() {
        const { url } = yield* start("dual")
        const { conn, sent } = yield* openRecorded(definition(url))
        const init = yield* initialize(conn)
        assert.strictEqual(init["protocolVersion"], LegacyVersion)
        const list = only(yield* collect(conn.request(JsonRpc.request(2, "tools/list"), legacy)))
        assert.isTrue(Array.isArray(resultOf(list)["tools"]), "the fixture served the session's request")
        only(yield* collect(conn.request(JsonRpc.request(3, "tools/list", { _meta: meta() }), modern("tools/list"))))
        only(yield* collect(conn.request(JsonRpc.request(4, "ping"))))
        const sid = header(sent[1] as Sent, "mcp-session-id")
        assert.isString(sid)
        assert.deepStrictEqual(
          sent.map((s) => `${JSON.parse(s.body).method} ${header(s, "mcp-session-id") === sid ? "session" : "none"}`),
          ["initialize none", "notifications/initialized session", "tools/list session", "tools/list none", "ping session"]
        )
        assert.strictEqual(header(sent[2] as Sent, "mcp-protocol-version"), LegacyVersion)
      })))

    it.scopedLive("a 404 on a session request is SessionExpired, and the id is forgotten until the next initialize", () =>
      live(Effect.gen(function*() {
        const { url } = yield* start("dual")
        const { conn, sent } = yield* openRecorded(definition(url))
        yield* initialize(conn)
        const sid = header(sent[1] as Sent, "mcp-session-id") ?? ""
        assert.strictEqual(yield* raw("DELETE", url, { "mcp-session-id": sid }), 204)
        const expired = yield* Effect.flip(collect(conn.request(JsonRpc.request(2, "tools/list"), legacy)))
        assert.deepInclude(expired, { _tag: "SessionExpired", sessionId: sid })
        // Without a session the dual fixture reads the request as a pre-initialize one (-32602).
        const orphan = only(yield* collect(conn.request(JsonRpc.request(3, "tools/list"), legacy)))
        assert.strictEqual(errorOf(orphan).code, -32602)
        assert.isUndefined(header(sent[sent.length - 1] as Sent, "mcp-session-id"))
        yield* initialize(conn)
        const again = only(yield* collect(conn.request(JsonRpc.request(4, "tools/list"), legacy)))
        assert.isTrue(Array.isArray(resultOf(again)["tools"]))
        const fresh = header(sent[sent.length - 1] as Sent, "mcp-session-id")
        assert.isString(fresh)
        assert.notStrictEqual(fresh, sid)
        // A notification on an ended session is refused the same way.
        assert.strictEqual(yield* raw("DELETE", url, { "mcp-session-id": fresh ?? "" }), 204)
        const note = yield* Effect.flip(conn.notify(JsonRpc.notification("notifications/roots/list_changed"), legacy))
        assert.deepInclude(note, { _tag: "SessionExpired", sessionId: fresh ?? "" })
      })))

    it.scopedLive("closing the scope DELETEs the session and fails what is in flight; the connection then reports closed", () =>
      live(Effect.gen(function*() {
        const log = yield* tempLog
        const fixture = yield* start("dual", "--log", log.file)
        const url = fixture.url
        const stderr = yield* watchStderr(fixture.process)
        const { conn, sent, sid, inFlight } = yield* Effect.scoped(Effect.gen(function*() {
          const opened = yield* openRecorded(definition(url))
          yield* initialize(opened.conn)
          const inFlight = yield* Effect.fork(Effect.flip(collect(opened.conn.request(callTool("slow-3", "slow", { ms: 60_000 }), legacy))))
          yield* logSatisfies(log, (lines) => lines.includes("legacy tools/call"))
          return { ...opened, inFlight, sid: header(opened.sent[1] as Sent, "mcp-session-id") ?? "" }
        }))
        // A request in flight fails with the connection instead of hanging, and is not cancelled
        // one by one: the DELETE ends it (the fixture cancels a deleted session's calls).
        assert.strictEqual((yield* Fiber.join(inFlight))._tag, "TransportClosed")
        yield* stderr.includes(`cancelled tools/call "slow-3"`)
        assert.notInclude(logLines(log.file), "legacy notifications/cancelled")
        const last = sent[sent.length - 1] as Sent
        assert.strictEqual(last.method, "DELETE")
        assert.strictEqual(header(last, "mcp-session-id"), sid)
        assert.strictEqual(header(last, "mcp-protocol-version"), LegacyVersion)
        // The fixture forgot the session: its id is now a 404.
        assert.strictEqual(yield* raw("POST", url, { "mcp-session-id": sid }, JsonRpc.request(9, "ping")), 404)
        const closed = yield* conn.closed
        assert.strictEqual(closed._tag, "TransportClosed")
        const after = yield* Effect.flip(collect(conn.request(JsonRpc.request(5, "ping"), legacy)))
        assert.strictEqual(after._tag, "TransportClosed")
        assert.deepStrictEqual(sent.map((s) => s.method), ["POST", "POST", "POST", "DELETE"], "nothing is sent once closed")
      })))

    it.scopedLive("a modern-only connection has no session and sends no DELETE", () =>
      live(Effect.gen(function*() {
        const { url } = yield* start("modern-only")
        const { sent } = yield* Effect.scoped(Effect.gen(function*() {
          const opened = yield* openRecorded(definition(url))
          only(yield* collect(opened.conn.request(JsonRpc.request(1, "server/discover", { _meta: meta() }), modern("server/discover"))))
          return opened
        }))
        assert.deepStrictEqual(sent.map((s) => s.method), ["POST"])
      })))

    it.scopedLive("openNotificationStream holds the session's GET stream; 405 means there is none", () =>
      live(Effect.gen(function*() {
        const { url } = yield* start("dual")
        const drained = yield* Effect.scoped(Effect.gen(function*() {
          const { conn, sent } = yield* openRecorded(definition(url))
          yield* initialize(conn)
          const sid = header(sent[1] as Sent, "mcp-session-id") ?? ""
          const drained = yield* Effect.fork(collect(conn.unsolicited))
          yield* conn.openNotificationStream
          const get = sent[sent.length - 1] as Sent
          assert.strictEqual(get.method, "GET")
          assert.strictEqual(header(get, "accept"), "text/event-stream")
          assert.strictEqual(header(get, "mcp-session-id"), sid)
          assert.strictEqual(header(get, "mcp-protocol-version"), LegacyVersion)
          // The fixture allows one stream per session, so a second GET proves ours is open.
          assert.strictEqual(yield* raw("GET", url, { "mcp-session-id": sid, accept: "text/event-stream" }), 409)
          yield* conn.openNotificationStream
          assert.strictEqual(sent.filter((s) => s.method === "GET").length, 1, "an open stream is not opened twice")
          return drained
        }))
        assert.deepStrictEqual(yield* Fiber.join(drained), [], "nothing arrived, and closing ended unsolicited")

        const modernOnly = yield* start("modern-only")
        const other = yield* openRecorded(definition(modernOnly.url))
        yield* other.conn.openNotificationStream
        assert.deepStrictEqual(other.sent.map((s) => s.method), ["GET"])
      })))
  })

  describe("cancellation and server→client requests", () => {
    it.scopedLive("interrupting a legacy request aborts its POST and sends notifications/cancelled on the session", () =>
      live(Effect.gen(function*() {
        const log = yield* tempLog
        const fixture = yield* start("dual", "--log", log.file)
        const stderr = yield* watchStderr(fixture.process)
        const { conn, sent } = yield* openRecorded(definition(fixture.url))
        yield* initialize(conn)
        const sid = header(sent[1] as Sent, "mcp-session-id")
        const call = yield* Effect.fork(collect(conn.request(callTool("slow-1", "slow", { ms: 60_000 }), legacy)))
        yield* logSatisfies(log, (lines) => lines.includes("legacy tools/call"))
        yield* Fiber.interrupt(call)
        yield* stderr.includes(`cancelled tools/call "slow-1"`)
        assert.include(logLines(log.file), "legacy notifications/cancelled")
        const cancel = sent.find((s) => s.body.includes("notifications/cancelled"))
        assert.isDefined(cancel)
        if (cancel === undefined) return
        assert.strictEqual(header(cancel, "mcp-session-id"), sid)
        assert.strictEqual(header(cancel, "mcp-protocol-version"), LegacyVersion)
        assert.deepStrictEqual(JSON.parse(cancel.body).params.requestId, "slow-1")
        // The session lives on.
        const after = only(yield* collect(conn.request(JsonRpc.request(3, "ping"), legacy)))
        assert.deepStrictEqual(resultOf(after), {})
      })))

    it.scopedLive("interrupting a modern request closes its POST, which is the cancellation", () =>
      live(Effect.gen(function*() {
        const log = yield* tempLog
        const fixture = yield* start("dual", "--log", log.file)
        const stderr = yield* watchStderr(fixture.process)
        const { conn, sent } = yield* openRecorded(definition(fixture.url))
        const call = yield* Effect.fork(collect(conn.request(
          callTool("slow-2", "slow", { ms: 60_000 }, { _meta: meta() }),
          modern("tools/call", "slow")
        )))
        yield* logSatisfies(log, (lines) => lines.includes("modern tools/call"))
        yield* Fiber.interrupt(call)
        yield* stderr.includes(`cancelled tools/call "slow-2"`)
        assert.deepStrictEqual(logLines(log.file), ["modern tools/call"], "no notifications/cancelled on a modern request")
        assert.strictEqual(sent.length, 1)
      })))

    it.scopedLive("a server→client request on a legacy POST's stream is on the request's stream; respond answers it", () =>
      live(Effect.gen(function*() {
        const { url } = yield* start("dual")
        const conn = yield* openHttp(definition(url))
        yield* initialize(conn, { elicitation: {} })
        const seen = yield* collect(
          conn.request(callTool("ask", "ask_name"), legacy).pipe(
            Stream.tap((p) =>
              JsonRpc.isRequest(p.message) && p.message.method === "elicitation/create"
                ? conn.respond(JsonRpc.success(p.message.id, { action: "accept", content: { name: "Ada" } }), legacy)
                : Effect.void
            )
          )
        )
        assert.strictEqual(seen.length, 2)
        const [question, answer] = seen as [JsonRpc.Parsed, JsonRpc.Parsed]
        assert.isTrue(JsonRpc.isRequest(question.message))
        assert.strictEqual((question.message as JsonRpc.Request).method, "elicitation/create")
        assert.strictEqual(JsonRpc.idOf(answer.message), "ask")
        assert.strictEqual(textOf(resultOf(answer)), "hello, Ada")
      })))
  })

  // era-server sends no notifications before a response and nothing on the GET stream, so these
  // two behaviours are checked against a scripted server.
  describe("against a scripted server", () => {
    it.scopedLive("notifications before the response are streamed in order; comments, priming events and other ids are not", () =>
      live(Effect.gen(function*() {
        const progress = JsonRpc.notification("notifications/progress", { progressToken: "t", progress: 1, message: "héllo wörld" })
        const log = JsonRpc.notification("notifications/message", { level: "info", data: "working" })
        const stray = JsonRpc.success("someone-else", {})
        const server = yield* stub((_req, res, body) => {
          const id = JSON.parse(body).id
          res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" })
          res.write(": keep-alive\n\nid: prime\ndata:\n\n")
          // Split the event inside a multi-byte character, as a TCP segment may.
          const bytes = Buffer.from(sseEvent(progress, "1"))
          const cut = bytes.indexOf(Buffer.from("é")) + 1
          res.write(bytes.subarray(0, cut))
          res.write(bytes.subarray(cut))
          res.write(sseEvent(log) + sseEvent(stray))
          res.write(sseEvent(JsonRpc.success(id, { done: true })))
          res.write(sseEvent(JsonRpc.notification("notifications/message", { level: "info", data: "too late" })))
          res.end()
        })
        const conn = yield* openHttp(definition(server.url))
        const unsolicited = yield* Effect.fork(collect(conn.unsolicited.pipe(Stream.take(1))))
        const seen = yield* collect(conn.request(JsonRpc.request(7, "tools/call", { name: "x" }), legacy))
        assert.deepStrictEqual(seen.map((p) => p.raw), [progress, log, JsonRpc.success(7, { done: true })])
        assert.deepStrictEqual((yield* Fiber.join(unsolicited)).map((p) => p.raw), [stray])
      })))

    it.scopedLive("a stream that ends without the response fails with TransportClosed", () =>
      live(Effect.gen(function*() {
        const server = yield* stub((_req, res) => {
          res.writeHead(200, { "content-type": "text/event-stream" })
          res.end(sseEvent(JsonRpc.notification("notifications/message", { level: "info", data: "bye" })))
        })
        const conn = yield* openHttp(definition(server.url))
        const seen: Array<JsonRpc.Parsed> = []
        const e = yield* Effect.flip(Stream.runForEach(
          conn.request(JsonRpc.request(1, "tools/call", { name: "x" }), { era: "modern" }),
          (p) => Effect.sync(() => seen.push(p))
        ))
        assert.strictEqual(seen.length, 1)
        assert.strictEqual(e._tag, "TransportClosed")
        assert.include(e.message, "ended without its response")
      })))

    it.scopedLive("a legacy response stream closed early is resumed with Last-Event-ID after the server's retry; a modern one is not", () =>
      live(Effect.gen(function*() {
        const first = JsonRpc.notification("notifications/progress", { progressToken: "t", progress: 1 })
        const second = JsonRpc.notification("notifications/progress", { progressToken: "t", progress: 2 })
        const resumed: Array<string | undefined> = []
        const server = yield* stub((req, res) => {
          res.writeHead(200, { "content-type": "text/event-stream" })
          if (req.method === "POST") {
            // A priming event with an id and a short retry, one message, then the server hangs up.
            return void res.end(`id: p0\nretry: 5\ndata:\n\n${sseEvent(first, "p1")}`)
          }
          resumed.push(req.headers["last-event-id"] as string | undefined)
          res.end(resumed.length === 1 ? sseEvent(second, "p2") : sseEvent(JsonRpc.success(5, { done: true }), "p3"))
        })
        const conn = yield* openHttp(definition(server.url))
        const seen = yield* collect(conn.request(JsonRpc.request(5, "tools/call", { name: "x" }), legacy))
        assert.deepStrictEqual(seen.map((p) => p.raw), [first, second, JsonRpc.success(5, { done: true })])
        assert.deepStrictEqual(resumed, ["p1", "p2"])

        const e = yield* Effect.flip(collect(conn.request(JsonRpc.request(6, "tools/call", { name: "x" }), modern("tools/call", "x"))))
        assert.strictEqual(e._tag, "TransportClosed")
        assert.strictEqual(resumed.length, 2, "a modern stream is never resumed")
      })))

    it.scopedLive("a legacy response stream that breaks off is resumed too", () =>
      live(Effect.gen(function*() {
        const server = yield* stub((req, res) => {
          res.writeHead(200, { "content-type": "text/event-stream" })
          if (req.method === "GET") return void res.end(sseEvent(JsonRpc.success(2, { resumed: true }), "b2"))
          res.write("id: b1\nretry: 1\ndata:\n\n", () => res.destroy())
        })
        const conn = yield* openHttp(definition(server.url))
        const seen = yield* collect(conn.request(JsonRpc.request(2, "tools/call", { name: "x" }), legacy))
        assert.deepStrictEqual(seen.map((p) => p.raw), [JsonRpc.success(2, { resumed: true })])
      })))

    it.scopedLive("resumption gives up after three resumed streams bring nothing", () =>
      live(Effect.gen(function*() {
        let gets = 0
        const server = yield* stub((req, res) => {
          res.writeHead(200, { "content-type": "text/event-stream" })
          if (req.method === "GET") gets++
          res.end(req.method === "POST" ? "id: p0\nretry: 1\ndata:\n\n" : "")
        })
        const conn = yield* openHttp(definition(server.url))
        const e = yield* Effect.flip(collect(conn.request(JsonRpc.request(1, "tools/call", { name: "x" }), legacy)))
        assert.strictEqual(e._tag, "TransportClosed")
        assert.strictEqual(gets, 3)
      })))

    it.scopedLive("GET stream events arrive on unsolicited, with the session id; unsolicited ends on close", () =>
      live(Effect.gen(function*() {
        const changed = JsonRpc.notification("notifications/tools/list_changed")
        const asked = JsonRpc.request("r1", "roots/list")
        const gets: Array<string | undefined> = []
        const server = yield* stub((req, res, body) => {
          if (req.method === "GET") {
            gets.push(req.headers["mcp-session-id"] as string | undefined)
            res.writeHead(200, { "content-type": "text/event-stream" })
            res.write(sseEvent(changed) + sseEvent(asked))
            return
          }
          if (req.method === "DELETE") return void res.writeHead(204).end()
          const message = JSON.parse(body)
          if (message.id === undefined) return void res.writeHead(202).end()
          res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "stub-session" })
          res.end(JSON.stringify(JsonRpc.success(message.id, { protocolVersion: LegacyVersion, capabilities: {}, serverInfo: clientInfo })))
        })
        const rest = yield* Effect.scoped(Effect.gen(function*() {
          const conn = yield* openHttp(definition(server.url))
          yield* initialize(conn)
          yield* conn.openNotificationStream
          const first = yield* collect(conn.unsolicited.pipe(Stream.take(2)))
          assert.deepStrictEqual(first.map((p) => p.raw), [changed, asked])
          return yield* Effect.fork(collect(conn.unsolicited))
        }))
        assert.deepStrictEqual(yield* Fiber.join(rest), [], "unsolicited ends when the connection closes")
        assert.deepStrictEqual(gets, ["stub-session"])
      })))
  })
})
