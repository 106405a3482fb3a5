import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { ChildProcess } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import { startHttpFixture } from "@mcpx-fx/testing/Fixtures"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { openHttp } from "../../src/transport/HttpTransport.js"
import * as Wire from "../../src/transport/Wire.js"
import { openHttpSse } from "../../src/transport/HttpSseTransport.js"
import { HttpDefinition } from "../../src/ServerDefinition.js"
import { logIncludes, logLines, tempLog, WaitTimedOut } from "../util/MethodLog.js"
import type { Connection } from "../../src/transport/Transport.js"

// Real I/O against era-server in legacy-sse mode (the 2024-11-05 HTTP+SSE transport), with
// event-driven waits on its stderr and method log.

const OldVersion = "2024-11-05"
const clientInfo = { name: "http-sse-transport-test", version: "0.0.0" }

const start = (mode: string, ...args: ReadonlyArray<string>) => startHttpFixture("era-server", ["--mode", mode, ...args])

const definition = (url: string, headers: Record<string, string> = {}) => new HttpDefinition({ transport: "http", name: "era-sse", url, headers })

const live = <A, E>(self: Effect.Effect<A, E, Scope.Scope>) => self

interface Sent {
  readonly method: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
}

const recordingWire = Effect.gen(function*() {
  const sent: Array<Sent> = []
  const inner = yield* Wire.make()
  const wire: Wire.Sender = {
    send: (r) => Effect.zipRight(Effect.sync(() => sent.push({ method: r.method, url: r.url, headers: r.headers })), inner.send(r))
  }
  return { sent, wire }
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

const textOf = (result: Record<string, unknown>): string => {
  const content = result["content"] as ReadonlyArray<Record<string, unknown>>
  return String(content[0]?.["text"])
}

const initialize = (conn: Connection, capabilities: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const init = only(
      yield* collect(conn.request(
        JsonRpc.request("init", "initialize", { protocolVersion: OldVersion, capabilities, clientInfo })
      ))
    )
    yield* conn.notify(JsonRpc.notification("notifications/initialized"))
    return resultOf(init)
  })

const callTool = (id: string, name: string, args: Record<string, unknown> = {}) => JsonRpc.request(id, "tools/call", { name, arguments: args })

const stderrIncludes = (child: ChildProcess) =>
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
  ).pipe(Effect.map(({ state }) => (text: string) =>
    Effect.async<void>((resume) => {
      const check = () => {
        if (state.text.includes(text)) resume(Effect.void)
      }
      state.waiters.add(check)
      check()
      return Effect.sync(() => state.waiters.delete(check))
    }).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new WaitTimedOut({ what: `stderr to say ${text}` }) }))
  ))

/** A scripted server for what era-server does not do (end its stream, name a foreign endpoint). */
const stub = (handle: (req: IncomingMessage, res: ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly close: () => void }>((resume) => {
      const server = createServer(handle)
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({
          url: `http://127.0.0.1:${port}/sse`,
          close: () => {
            server.closeAllConnections()
            server.close()
          }
        }))
      })
    }),
    (s) => Effect.sync(() => s.close())
  )

describe("openHttpSse (2024-11-05 HTTP+SSE)", () => {
  it.scopedLive("is the fallback for a server that refuses Streamable HTTP: initialize, calls and a question round trip", () =>
    live(Effect.gen(function*() {
      const { url } = yield* start("legacy-sse")
      const refused = yield* Effect.flip(collect((yield* openHttp(definition(url))).request(
        JsonRpc.request(0, "initialize", { protocolVersion: OldVersion, capabilities: {}, clientInfo }),
        { era: "legacy" }
      )))
      assert.strictEqual(refused._tag, "LegacyHTTPRefusedError")

      const { sent, wire } = yield* recordingWire
      const conn = yield* openHttpSse(definition(url, { "X-Api-Key": "secret" }), { wire })
      assert.strictEqual(conn.wire, "http+sse")
      const init = yield* initialize(conn, { elicitation: {} })
      assert.strictEqual(init["protocolVersion"], OldVersion)
      const echo = only(yield* collect(conn.request(callTool("e", "echo", { message: "over sse" }))))
      assert.strictEqual(textOf(resultOf(echo)), "over sse")

      // The question arrives on the one stream, tied to no request; the answer is a POST.
      const questions = yield* Effect.fork(conn.unsolicited.pipe(
        Stream.filter((p) => JsonRpc.isRequest(p.message)),
        Stream.take(1),
        Stream.runForEach((p) => conn.respond(JsonRpc.success((p.message as JsonRpc.Request).id, { action: "accept", content: { name: "Grace" } })))
      ))
      const asked = only(yield* collect(conn.request(callTool("ask", "ask_name"))))
      assert.strictEqual(textOf(resultOf(asked)), "hello, Grace")
      yield* Fiber.join(questions)

      assert.strictEqual(sent[0]?.method, "GET")
      assert.strictEqual(sent[0]?.url, url)
      assert.strictEqual(sent[0]?.headers["accept"], "text/event-stream")
      const posts = sent.filter((s) => s.method === "POST")
      assert.isAtLeast(posts.length, 4)
      for (const p of posts) {
        assert.match(p.url, /\/messages\?sessionId=[0-9a-f-]+$/)
        assert.strictEqual(p.headers["x-api-key"], "secret")
      }
    })))

  it.scopedLive("finds the stream at /sse when the configured URL answers with something else", () =>
    live(Effect.gen(function*() {
      const { url } = yield* start("legacy-sse")
      const origin = new URL(url).origin
      const { sent, wire } = yield* recordingWire
      const conn = yield* openHttpSse(definition(`${origin}/elsewhere`), { wire })
      yield* initialize(conn)
      assert.deepStrictEqual(sent.filter((s) => s.method === "GET").map((s) => s.url), [`${origin}/elsewhere`, `${origin}/sse`])
    })))

  it.scopedLive("fails with the last refusal when neither URL is an SSE stream, and TransportClosed when unreachable", () =>
    live(Effect.gen(function*() {
      const dual = yield* start("dual")
      const e = yield* Effect.flip(openHttpSse(definition(dual.url)))
      // GET /mcp without a session is 405 on the dual fixture; /sse does not exist there.
      assert.deepInclude(e, { _tag: "HTTPStatusError", status: 404, body: "Not Found" })

      const gone = yield* stub(() => {})
      gone.close()
      const down = yield* Effect.flip(openHttpSse(definition(gone.url)))
      assert.strictEqual(down._tag, "TransportClosed")
      assert.include(down.message, `cannot reach ${gone.url}`)
    })))

  it.scopedLive("interrupting a request POSTs notifications/cancelled", () =>
    live(Effect.gen(function*() {
      const log = yield* tempLog
      const fixture = yield* start("legacy-sse", "--log", log.file)
      const said = yield* stderrIncludes(fixture.process)
      const conn = yield* openHttpSse(definition(fixture.url))
      yield* initialize(conn)
      const call = yield* Effect.fork(collect(conn.request(callTool("slow-1", "slow", { ms: 60_000 }))))
      yield* logIncludes(log, "legacy tools/call")
      yield* Fiber.interrupt(call)
      yield* said(`cancelled tools/call "slow-1"`)
      assert.include(logLines(log.file), "legacy notifications/cancelled")
      const after = only(yield* collect(conn.request(JsonRpc.request(2, "ping"))))
      assert.deepStrictEqual(resultOf(after), {})
    })))

  it.scopedLive("closing the scope closes the stream: pending requests fail with TransportClosed and the server lets go", () =>
    live(Effect.gen(function*() {
      const log = yield* tempLog
      const fixture = yield* start("legacy-sse", "--log", log.file)
      const said = yield* stderrIncludes(fixture.process)
      const scope = yield* Scope.make()
      const conn = yield* openHttpSse(definition(fixture.url)).pipe(Scope.extend(scope))
      yield* initialize(conn)
      const call = yield* Effect.fork(Effect.flip(collect(conn.request(callTool("slow-2", "slow", { ms: 60_000 })))))
      const rest = yield* Effect.fork(collect(conn.unsolicited))
      yield* logIncludes(log, "legacy tools/call")
      yield* Scope.close(scope, Exit.void)
      const e = yield* Fiber.join(call)
      assert.strictEqual(e._tag, "TransportClosed")
      assert.deepStrictEqual(yield* Fiber.join(rest), [])
      assert.strictEqual((yield* conn.closed)._tag, "TransportClosed")
      // The fixture cancels a connection's calls when its stream closes.
      yield* said(`cancelled tools/call "slow-2"`)
      assert.notInclude(logLines(log.file), "legacy notifications/cancelled")
      const late = yield* Effect.flip(conn.notify(JsonRpc.notification("notifications/initialized")))
      assert.strictEqual(late._tag, "TransportClosed")
    })))

  it.scopedLive("the server ending its stream closes the connection; a foreign endpoint is refused", () =>
    live(Effect.gen(function*() {
      const ending = yield* stub((req, res) => {
        if (req.method !== "GET") return void res.writeHead(202).end()
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.end("event: endpoint\ndata: /messages?s=1\n\n")
      })
      const conn = yield* openHttpSse(definition(ending.url))
      const closed = yield* conn.closed
      assert.include(closed.message, "ended")
      const e = yield* Effect.flip(collect(conn.request(JsonRpc.request(1, "ping"))))
      assert.strictEqual(e._tag, "TransportClosed")

      const foreign = yield* stub((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write("event: endpoint\ndata: http://elsewhere.invalid/messages\n\n")
      })
      const refused = yield* Effect.flip(openHttpSse(definition(foreign.url)))
      assert.strictEqual(refused._tag, "TransportClosed")
      assert.include(refused.message, "unusable endpoint")
    })))
})
