import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { FrameTooLarge } from "../../src/transport/Transport.js"
import * as Wire from "../../src/transport/Wire.js"

/** A loopback server answering with `handle` (`nth`: the request's place on its connection). */
const serve = (handle: (req: IncomingMessage, res: ServerResponse, nth: number) => void) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly connections: () => number; readonly closed: Promise<void>; readonly server: Server }>((resume) => {
      const perSocket = new WeakMap<Socket, number>()
      let connections = 0
      let markClosed = () => {}
      const closed = new Promise<void>((r) => (markClosed = r))
      const server = createServer((req, res) => {
        const nth = (perSocket.get(req.socket) ?? 0) + 1
        perSocket.set(req.socket, nth)
        // Closed with its response unfinished: the client gave up on it.
        res.on("close", () => {
          if (!res.writableEnded) markClosed()
        })
        handle(req, res, nth)
      })
      server.on("connection", () => connections++)
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}/mcp`, connections: () => connections, closed, server }))
      })
    }),
    ({ server }) =>
      Effect.sync(() => {
        server.closeAllConnections()
        server.close()
      })
  )

const post = (wire: Wire.Wire, url: string, body = "{}") =>
  Effect.scoped(Effect.flatMap(wire.send({ method: "POST", url, headers: { "content-type": "application/json" }, body }), (r) => r.text(1024)))

/** What a reader heard of one exchange: its status, its chunks as text, and how it ended. */
interface Heard {
  readonly status: number | undefined
  readonly chunks: ReadonlyArray<string>
  readonly end: string
}

/**
 * Dispatches a POST with a reader that records what it is told; `take`: whether it takes the body,
 * `refuseAt`: the chunk that it fails, `began`: told at the answer's start.
 */
const dispatched = (
  wire: Wire.Wire,
  url: string,
  options: { readonly take?: boolean; readonly refuseAt?: number; readonly began?: () => void } = {}
) =>
  Effect.async<Heard & { readonly response: Wire.WireResponse | undefined }>((resume) => {
    let status: number | undefined
    let response: Wire.WireResponse | undefined
    const chunks: Array<string> = []
    wire.dispatch({ method: "POST", url, headers: {}, body: "{}" }, {
      begin: (r) => {
        status = r.status
        response = r
        options.began?.()
        if (options.take === false) resume(Effect.succeed({ status, chunks, end: "left", response }))
        return options.take !== false
      },
      chunk: (bytes) => {
        chunks.push(bytes.toString("utf8"))
        return chunks.length === options.refuseAt ? new FrameTooLarge({ limit: 1 }) : undefined
      },
      end: (failure) => resume(Effect.succeed({ status, chunks, end: failure?._tag ?? "whole", response }))
    })
  })

describe("Wire", () => {
  it.scopedLive("keeps the connection alive between exchanges", () =>
    Effect.gen(function*() {
      const server = yield* serve((_req, res) => res.end("ok"))
      const wire = yield* Wire.make()
      for (let i = 0; i < 20; i++) assert.strictEqual(yield* post(wire, server.url), "ok")
      // Undici's pool opens a second connection for the second request while the first one is
      // still settling in; from then on both are reused.
      assert.isAtMost(server.connections(), 2)
    }))

  it.scopedLive("a request on a kept-alive connection the server dropped is sent again, once, on a fresh one", () =>
    Effect.gen(function*() {
      // The second request on any connection finds it reset, as when the server closed it idle.
      let served = 0
      const server = yield* serve((req, res, nth) => {
        if (nth > 1) return req.socket.destroy()
        served++
        res.end(`answer ${served}`)
      })
      const wire = yield* Wire.make()
      assert.strictEqual(yield* post(wire, server.url), "answer 1")
      assert.strictEqual(yield* post(wire, server.url), "answer 2")
      assert.strictEqual(server.connections(), 2)
    }))

  it.scopedLive("a reset on a fresh connection is not retried: the server is out of reach", () =>
    Effect.gen(function*() {
      const server = yield* serve((req) => req.socket.destroy())
      const wire = yield* Wire.make()
      const exit = yield* Effect.exit(post(wire, server.url))
      assert.isTrue(Exit.isFailure(exit))
      assert.match(String(Exit.isFailure(exit) ? exit.cause : ""), /cannot reach/)
      assert.strictEqual(server.connections(), 1)
    }))

  it.scopedLive("a body over the cap is FrameTooLarge, declared or not", () =>
    Effect.gen(function*() {
      const server = yield* serve((req, res) => {
        if (req.url?.endsWith("declared") === true) return res.end("x".repeat(2048))
        res.write("x".repeat(1000))
        res.end("y".repeat(1000))
      })
      const wire = yield* Wire.make()
      for (const url of [`${server.url}?declared`, server.url]) {
        const failure = yield* Effect.flip(post(wire, url))
        assert.strictEqual(failure._tag, "FrameTooLarge")
      }
    }))

  it.scopedLive("closing the scope before the body ends aborts the request", () =>
    Effect.gen(function*() {
      const server = yield* serve((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write("data: first\n\n")
      })
      const wire = yield* Wire.make()
      const scope = yield* Scope.make()
      const response = yield* Scope.extend(wire.send({ method: "POST", url: server.url, headers: {}, body: "{}" }), scope)
      const first = yield* response.next
      assert.strictEqual(new TextDecoder().decode(first), "data: first\n\n")
      yield* Scope.close(scope, Exit.void)
      // The server sees its request closed with the response unfinished.
      yield* Effect.promise(() => server.closed)
    }))

  it.scopedLive("a body is pulled chunk by chunk to its end, and read whole as a Stream", () =>
    Effect.gen(function*() {
      const server = yield* serve((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write("a")
        setImmediate(() => {
          res.write("b")
          res.end("c")
        })
      })
      const wire = yield* Wire.make()
      const pulled: Array<string> = []
      const response = yield* wire.send({ method: "POST", url: server.url, headers: {}, body: "{}" })
      for (let chunk = yield* response.next; chunk !== undefined; chunk = yield* response.next) pulled.push(new TextDecoder().decode(chunk))
      assert.strictEqual(pulled.join(""), "abc")
      // Past the end, a pull keeps saying so.
      assert.isUndefined(yield* response.next)
      const again = yield* wire.send({ method: "POST", url: server.url, headers: {}, body: "{}" })
      const whole = yield* Stream.runFold(Wire.stream(again), "", (text, chunk) => text + new TextDecoder().decode(chunk))
      assert.strictEqual(whole, "abc")
    }))

  it.scopedLive("a body the server breaks off fails the pull with TransportClosed", () =>
    Effect.gen(function*() {
      const server = yield* serve((req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write("data: first\n\n")
        setImmediate(() => req.socket.destroy())
      })
      const wire = yield* Wire.make()
      const response = yield* wire.send({ method: "POST", url: server.url, headers: {}, body: "{}" })
      assert.isDefined(yield* response.next)
      const failure = yield* Effect.flip(response.next)
      assert.strictEqual(failure._tag, "TransportClosed")
      assert.include(failure.reason, "broke")
    }))

  it.scopedLive("abortInFlight fails what is waiting for its answer", () =>
    Effect.gen(function*() {
      const arrived = yield* Deferred.make<void>()
      const server = yield* serve(() => Deferred.unsafeDone(arrived, Exit.void))
      const wire = yield* Wire.make()
      const waiting = yield* Effect.fork(post(wire, server.url))
      yield* Deferred.await(arrived)
      yield* wire.abortInFlight
      const failure = yield* Effect.flip(Effect.flatten(waiting.await))
      assert.strictEqual(failure._tag, "TransportClosed")
    }))

  it.scopedLive("a reader takes the body in place: the start, each chunk in order, the end; the connection is kept", () =>
    Effect.gen(function*() {
      const server = yield* serve((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write("data: one\n\n", () => res.end("data: two\n\n"))
      })
      const wire = yield* Wire.make()
      for (let i = 0; i < 5; i++) {
        const heard = yield* dispatched(wire, server.url)
        assert.strictEqual(heard.status, 200)
        assert.strictEqual(heard.chunks.join(""), "data: one\n\ndata: two\n\n")
        assert.strictEqual(heard.end, "whole")
      }
      assert.isAtMost(server.connections(), 2)
    }))

  it.scopedLive("a reader that leaves the body has it read through the response; one that fails a chunk ends the exchange", () =>
    Effect.gen(function*() {
      const server = yield* serve((req, res) => {
        if (req.url?.endsWith("stream") === true) {
          res.writeHead(200, { "content-type": "text/event-stream" })
          return res.write("data: first\n\n")
        }
        res.end("left for the response")
      })
      const wire = yield* Wire.make()
      const left = yield* dispatched(wire, server.url, { take: false })
      assert.strictEqual(left.end, "left")
      assert.deepStrictEqual(left.chunks, [])
      assert.strictEqual(yield* left.response!.text(1024), "left for the response")
      const refused = yield* dispatched(wire, `${server.url}?stream`, { refuseAt: 1 })
      assert.strictEqual(refused.end, "FrameTooLarge")
      // The server sees its request closed with the response unfinished.
      yield* Effect.promise(() => server.closed)
    }))

  it.scopedLive("a reader hears an exchange that never began as TransportClosed, and abortInFlight as its end", () =>
    Effect.gen(function*() {
      const wire = yield* Wire.make()
      const unreachable = yield* dispatched(wire, "http://127.0.0.1:1/mcp")
      assert.strictEqual(unreachable.end, "TransportClosed")
      assert.isUndefined(unreachable.status)
      const began = yield* Deferred.make<void>()
      const server = yield* serve((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write("data: first\n\n")
      })
      const waiting = yield* Effect.fork(dispatched(wire, server.url, { began: () => Deferred.unsafeDone(began, Exit.void) }))
      yield* Deferred.await(began)
      yield* wire.abortInFlight
      const aborted = yield* waiting.await.pipe(Effect.flatten)
      assert.strictEqual(aborted.status, 200)
      assert.strictEqual(aborted.end, "TransportClosed")
    }))
})
