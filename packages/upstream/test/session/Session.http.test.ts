import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { EraCache } from "../../src/era/EraCache.js"
import { Negotiator } from "../../src/era/Negotiator.js"
import { Prober } from "../../src/era/Prober.js"
import { HttpDefinition } from "../../src/ServerDefinition.js"
import * as TransportLayer from "../../src/transport/TransportLayer.js"
import { UpstreamAuth } from "../../src/auth/UpstreamAuth.js"
import { ProcessGroups } from "../../src/os/ProcessGroups.js"

// A legacy Streamable HTTP server that, like a v1-SDK server whose tool calls `server.request(…)`
// without relating it to the call, asks its question on the session's GET stream and drops it
// when no stream is open. The call's answer waits for the question's.
const askingOnTheGetStream = () =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly gets: () => number; readonly close: () => void }>((resume) => {
      let stream: ServerResponse | undefined
      let pending: { readonly id: unknown; readonly res: ServerResponse } | undefined
      let gets = 0
      const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
        if (req.method === "GET") {
          gets++
          res.writeHead(200, { "content-type": "text/event-stream" })
          res.write(": open\n\n")
          stream = res
          return
        }
        if (req.method === "DELETE") return void res.writeHead(204).end()
        const message = JSON.parse(body)
        if (message.method === "initialize") {
          res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" })
          return void res.end(JSON.stringify({
            jsonrpc: "2.0",
            id: message.id,
            result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "stub", version: "1" } }
          }))
        }
        if (req.headers["mcp-session-id"] !== "s1") return void res.writeHead(400).end("no session")
        if (message.method === "tools/call") {
          res.writeHead(200, { "content-type": "text/event-stream" })
          pending = { id: message.id, res }
          const question = {
            jsonrpc: "2.0",
            id: "q1",
            method: "elicitation/create",
            params: { message: "name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } }
          }
          stream?.write(`event: message\ndata: ${JSON.stringify(question)}\n\n`)
          return
        }
        if (message.id === "q1" && message.result !== undefined && pending !== undefined) {
          res.writeHead(202).end()
          const text = `hello ${message.result.content?.name ?? "nobody"}`
          pending.res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: pending.id, result: { content: [{ type: "text", text }] } })}\n\n`)
          return
        }
        res.writeHead(202).end()
      }
      const server = createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")))
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({
          url: `http://127.0.0.1:${port}/mcp`,
          gets: () => gets,
          close: () => {
            server.closeAllConnections()
            server.close()
          }
        }))
      })
    }),
    (s) => Effect.sync(() => s.close())
  )

const layer = Prober.layer.pipe(
  Layer.provide(Layer.mergeAll(TransportLayer.layer(), EraCache.layerMemory, Negotiator.layer)),
  Layer.provide(Layer.mergeAll(FetchHttpClient.layer, NodeContext.layer, UpstreamAuth.none, ProcessGroups.layerNone))
)

describe("Session over legacy Streamable HTTP", () => {
  it.scopedLive("a question asked on the session's GET stream reaches the call's handler", () =>
    Effect.gen(function*() {
      const server = yield* askingOnTheGetStream()
      const { session } = yield* Effect.flatMap(Prober, (p) =>
        p.start(new HttpDefinition({ transport: "http", name: "stub", url: server.url }), {
          preference: "prefer-discover",
          probeTimeout: "2 seconds",
          session: { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: { elicitation: {} } }
        }))
      assert.strictEqual(session.era, "legacy")
      assert.strictEqual(server.gets(), 1, "the GET stream is open once the session has started")
      const result = yield* session.request("tools/call", { name: "greet", arguments: {} }, {
        questions: (q) => Effect.succeed({ action: "accept", content: { name: q.method === "elicitation/create" ? "Ada" : "?" } })
      }).pipe(Effect.timeout("10 seconds"))
      assert.deepStrictEqual(result.content, [{ type: "text", text: "hello Ada" }])
    }).pipe(Effect.provide(layer)))
})
