/**
 * Calls in place on a legacy Streamable HTTP session: the call has no fiber of its own, and a cut
 * (its caller's deadline, the process stopping) aborts the exchange it waits on, whether it still
 * waits for the answer's headers or reads its event stream; the request is then cancelled upstream
 * with `notifications/cancelled`, exactly as a call under `Abortable`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { Abort } from "@mcpx-fx/cancel/Abortable"
import { listenLocal } from "@mcpx-fx/testing/Listening"
import { Pool } from "../../src/pool/Pool.js"
import type { PoolServer } from "../../src/pool/PoolModel.js"
import { PoolError } from "../../src/pool/PoolEvents.js"
import { HttpDefinition } from "../../src/ServerDefinition.js"
import { runningCount } from "../../src/transport/internal/InPlace.js"
import { caller, Cut, textOf, tool } from "../util/HeldCalls.js"
import { httpPool } from "../util/HttpPool.js"

const layer = httpPool

/** What the server saw: a held call arriving (and how often), its POST closing, and the id it was told was cancelled. */
interface Seen {
  readonly received: Map<string, number>
  readonly asked: Deferred.Deferred<void>
  readonly closed: Deferred.Deferred<void>
  readonly cancelled: Deferred.Deferred<unknown>
}

/**
 * A legacy Streamable HTTP server: `ok` answers as JSON, `hold` opens an event stream with one
 * progress notification and never answers, `silent` never sends even its headers.
 */
const legacyServer = Effect.gen(function*() {
  const seen: Seen = {
    received: new Map(),
    asked: yield* Deferred.make<void>(),
    closed: yield* Deferred.make<void>(),
    cancelled: yield* Deferred.make<unknown>()
  }
  const json = (res: ServerResponse, body: unknown) => {
    res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s-1" })
    res.end(JSON.stringify(body))
  }
  const handle = (req: IncomingMessage, res: ServerResponse, text: string) => {
    if (req.method !== "POST") return void res.writeHead(req.method === "DELETE" ? 200 : 405).end()
    const m = JSON.parse(text) as { id?: number; method: string; params?: { name?: string; requestId?: unknown; _meta?: { progressToken?: unknown } } }
    if (m.id === undefined) {
      if (m.method === "notifications/cancelled") Deferred.unsafeDone(seen.cancelled, Exit.succeed(m.params?.requestId))
      return void res.writeHead(202).end()
    }
    if (m.method === "initialize") {
      return json(res, {
        jsonrpc: "2.0",
        id: m.id,
        result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "held", version: "1" } }
      })
    }
    if (m.method !== "tools/call") return json(res, { jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `no ${m.method}` } })
    const name = m.params?.name
    if (name === "ok") return json(res, { jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "ok" }] } })
    seen.received.set(String(name), (seen.received.get(String(name)) ?? 0) + 1)
    req.once("close", () => Deferred.unsafeDone(seen.closed, Exit.void))
    Deferred.unsafeDone(seen.asked, Exit.void)
    if (name === "hold") {
      res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": "s-1" })
      const progress = { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: m.params?._meta?.progressToken, progress: 0 } }
      res.write(`data: ${JSON.stringify(progress)}\n\n`)
    }
    // `silent`: nothing at all.
  }
  const server = createServer((req, res) => {
    let text = ""
    req.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")))
    req.on("end", () => handle(req, res, text))
  })
  const port = yield* listenLocal(server)
  const server_: PoolServer = {
    definition: new HttpDefinition({ transport: "http", name: "held", url: `http://127.0.0.1:${port}/mcp` }),
    probe: {
      preference: "prefer-initialize",
      probeTimeout: "5 seconds",
      session: { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} }
    }
  }
  return { seen, server: server_ }
})

const warm = (server: PoolServer) =>
  Effect.flatMap(Pool, (pool) => pool.withSession(server, caller, (s) => Effect.map(tool(s, "ok"), (r) => ({ text: textOf(r), inPlace: s.runsInPlace }))))

/** A call of `name`, forked; answers once the server has it (and, for `hold`, once its progress came), with its abort. */
const holding = (server: PoolServer, seen: Seen, name: "hold" | "silent") =>
  Effect.gen(function*() {
    const pool = yield* Pool
    const heard = yield* Deferred.make<void>()
    const armed = yield* Deferred.make<Abort<Cut>>()
    const fiber = yield* Effect.fork(pool.withSession(server, caller, (s) => tool(s, name, () => Deferred.succeed(heard, undefined)), {
      cutShort: (abort: Abort<Cut>) => {
        Deferred.unsafeDone(armed, Effect.succeed(abort))
        return () => {}
      }
    }))
    yield* Deferred.await(name === "hold" ? heard : seen.asked)
    return { fiber, abort: yield* Deferred.await(armed) }
  })

// One after another: they count the calls in place of the whole module (runningCount).
describe.sequential("Pool: calls in place on a legacy Streamable HTTP session", () => {
  for (const name of ["hold", "silent"] as const) {
    const where = name === "hold" ? "while its reply streams" : "before its answer's headers came"
    it.scopedLive(`pool/in-place/http: a call cut ${where} fails with the caller's error, its POST aborted and cancelled upstream`, () =>
      Effect.gen(function*() {
        const { seen, server } = yield* legacyServer
        assert.deepStrictEqual(yield* warm(server), { text: "ok", inPlace: true })
        const { abort, fiber } = yield* holding(server, seen, name)
        abort(new Cut({ why: "deadline" }))
        assert.deepStrictEqual(yield* Effect.flip(Fiber.join(fiber)), new Cut({ why: "deadline" }))
        yield* Deferred.await(seen.closed)
        assert.isNumber(yield* Deferred.await(seen.cancelled), "the server was told which request was cancelled")
        assert.strictEqual(runningCount(), 0, "the cut call left nothing behind")
        // The aborted POST is not sent again.
        assert.strictEqual(seen.received.get(name), 1)
        assert.strictEqual((yield* warm(server)).text, "ok", "the session serves the next call")
      }).pipe(Effect.provide(layer)))
  }

  it.scopedLive("pool/in-place/http: stopCalls cuts a call in place short as shutdown", () =>
    Effect.gen(function*() {
      const { seen, server } = yield* legacyServer
      const pool = yield* Pool
      yield* warm(server)
      const { fiber } = yield* holding(server, seen, "hold")
      yield* pool.stopCalls
      const e = yield* Effect.flip(Fiber.join(fiber))
      assert.instanceOf(e, PoolError)
      if (e instanceof PoolError) assert.strictEqual(e.reason, "shutdown")
      yield* Deferred.await(seen.closed)
    }).pipe(Effect.provide(layer)))
})
