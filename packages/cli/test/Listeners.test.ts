/**
 * The daemon's listeners under a storm of new connections (issue 10, "Resource bounds"): 1,100
 * connections opened in one tick — before the event loop can accept any — are all queued by the
 * kernel and answered; none is reset, and the listen queue never overflows (the kernel's own count
 * of overflows, /proc/net/netstat ListenOverflows, stays put). With Node's default backlog of 511
 * the same storm overflows the queue by some 600 connections, which then wait on SYN retries.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Listeners from "../src/Listeners.js"

const Storm = 1100

/** The kernel's count of connections its listen queues had no room for, where it keeps one. */
const listenOverflows = (): number | undefined => {
  try {
    const lines = Fs.readFileSync("/proc/net/netstat", "utf8").split("\n").filter((l) => l.startsWith("TcpExt:"))
    const [names, values] = lines.map((l) => l.split(/\s+/))
    const at = names?.indexOf("ListenOverflows") ?? -1
    return at < 0 || values === undefined ? undefined : Number(values[at])
  } catch {
    return undefined
  }
}

interface Outcome {
  readonly answered: number
  readonly errors: ReadonlyArray<string>
}

/** Opens `n` connections in one synchronous burst; each sends one request and reads to the end. */
const storm = (port: number, n: number): Effect.Effect<Outcome> =>
  Effect.async<Outcome>((resume) => {
    let answered = 0
    let closed = 0
    const errors: Array<string> = []
    const sockets: Array<Net.Socket> = []
    for (let i = 0; i < n; i++) {
      const socket = Net.connect({ host: "127.0.0.1", port })
      sockets.push(socket)
      let reply = ""
      socket.setEncoding("utf8")
      socket.on("connect", () => socket.write(`GET /x HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`))
      socket.on("data", (chunk: string) => {
        reply += chunk
      })
      socket.on("error", (e: NodeJS.ErrnoException) => void errors.push(e.code ?? e.message))
      socket.on("close", () => {
        if (reply.startsWith("HTTP/1.1 200")) answered++
        if (++closed === n) resume(Effect.succeed({ answered, errors }))
      })
    }
    return Effect.sync(() => sockets.forEach((s) => s.destroy()))
  })

describe("Listeners", () => {
  it.scoped(`a storm of ${Storm} simultaneous connections is queued and answered, not reset or dropped`, () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "mcpx-listen-" })
      const app = Effect.succeed(HttpServerResponse.text("ok"))
      const listening = yield* Listeners.serve(() => Effect.succeed({ tcp: app, socket: app, mcp: { tcp: app, socket: app } }), {
        host: "127.0.0.1",
        port: 0,
        socket: `${dir}/daemon.sock`,
        grace: "1 second"
      })
      const before = listenOverflows()
      const outcome = yield* storm(listening.port, Storm)
      const after = listenOverflows()
      assert.deepStrictEqual(outcome.errors, [], "connections were reset or refused")
      assert.strictEqual(outcome.answered, Storm)
      if (before !== undefined && after !== undefined) {
        assert.strictEqual(after - before, 0, "the listen queue overflowed")
      }
    }).pipe(Effect.provide(NodeContext.layer)), { timeout: 120_000 })

  it.scoped("a client that trickles its headers is answered 408 and cut off", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "mcpx-listen-" })
      const app = Effect.succeed(HttpServerResponse.text("ok"))
      const listening = yield* Listeners.serve(() => Effect.succeed({ tcp: app, socket: app, mcp: { tcp: app, socket: app } }), {
        host: "127.0.0.1",
        port: 0,
        socket: `${dir}/daemon.sock`,
        grace: "1 second",
        limits: { headersTimeout: "200 millis", requestTimeout: "400 millis", maxConnections: 0 }
      })
      // The headers never end: the request line and one header, then nothing.
      const reply = yield* connectAndWrite(listening.port, `GET /x HTTP/1.1\r\nHost: 127.0.0.1:${listening.port}\r\n`)
      assert.match(reply, /^HTTP\/1\.1 408/)
    }).pipe(Effect.provide(NodeContext.layer)), { timeout: 30_000 })

  it.scoped("TCP holds at most maxConnections; past it new connections are closed and the CLI socket still answers", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "mcpx-listen-" })
      const app = Effect.succeed(HttpServerResponse.text("ok"))
      const socket = `${dir}/daemon.sock`
      const listening = yield* Listeners.serve(() => Effect.succeed({ tcp: app, socket: app, mcp: { tcp: app, socket: app } }), {
        host: "127.0.0.1",
        port: 0,
        socket,
        grace: "1 second",
        limits: { headersTimeout: "10 seconds", requestTimeout: "20 seconds", maxConnections: 2 }
      })
      // Two keep-alive connections, each answered once and then held open.
      const held = yield* Effect.forEach([1, 2], () => keptAlive(listening.port))
      yield* Effect.addFinalizer(() => Effect.sync(() => held.forEach((s) => s.destroy())))
      const third = yield* connectAndWrite(listening.port, `GET /x HTTP/1.1\r\nHost: 127.0.0.1:${listening.port}\r\nConnection: close\r\n\r\n`)
      assert.strictEqual(third, "", "the third connection was served")
      const viaSocket = yield* Effect.async<number>((resume) => {
        const req = Http.request({ socketPath: socket, path: "/x" }, (res) => {
          res.resume()
          res.on("end", () => resume(Effect.succeed(res.statusCode ?? 0)))
        })
        req.on("error", () => resume(Effect.succeed(-1)))
        req.end()
      })
      assert.strictEqual(viaSocket, 200)
    }).pipe(Effect.provide(NodeContext.layer)), { timeout: 30_000 })
})

/** Connects, writes `text`, and reads everything the server sends until it closes the connection. */
const connectAndWrite = (port: number, text: string) =>
  Effect.async<string>((resume) => {
    const socket = Net.connect({ host: "127.0.0.1", port })
    let reply = ""
    socket.setEncoding("utf8")
    socket.on("connect", () => socket.write(text))
    socket.on("data", (chunk: string) => {
      reply += chunk
    })
    socket.on("error", () => {})
    socket.on("close", () => resume(Effect.succeed(reply)))
    return Effect.sync(() => socket.destroy())
  })

/** A connection that got one answer and stays open. */
const keptAlive = (port: number) =>
  Effect.async<Net.Socket>((resume) => {
    const socket = Net.connect({ host: "127.0.0.1", port })
    socket.setEncoding("utf8")
    socket.on("connect", () => socket.write(`GET /x HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`))
    socket.once("data", () => resume(Effect.succeed(socket)))
    socket.on("error", () => {})
  })
