/**
 * Issue 24: under `pool.scope: "session"`, a 2026-07-28 host that walks away from an
 * `input_required` round of a stdio legacy server leaves its upstream call parked, holding its
 * process, for `questions.ttl`. With `pool.max` processes so held, another session's plain call
 * once waited out `pool.startTimeout` and failed "lane is saturated". Now the parked call gives
 * its process way: it is ended for its caller, and the late retry is refused with "call again".
 */
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Server from "@mcpx-fx/server/Server"
import { RequestState } from "@mcpx-fx/server/RequestState"
import { Pool } from "@mcpx-fx/upstream/pool/Pool"
import { era, layer as gateway } from "@mcpx-fx/testing/gateway/TestGateway"
import * as TestTasks from "@mcpx-fx/testing/server/TestTasks"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as GatewayBackend from "../src/GatewayBackend.js"

/** Long enough for a process to start on a loaded machine; a saturated lane fails after it. */
const StartTimeoutMs = 8_000

const serverFor = (mcpServers: Record<string, unknown>) =>
  Server.Server.layer.pipe(
    Layer.provide(TestTasks.layer),
    Layer.provide(GatewayBackend.layer),
    Layer.provideMerge(gateway(mcpServers)),
    Layer.provideMerge(RequestState.layerWithKey(new Uint8Array(32).fill(5)))
  )

/** A 2026-07-28 request of host session `session`, which can be asked for a form. */
const modern = (id: number, session: string, tool: string, extra: JsonObject = {}) =>
  JsonRpc.request(id, "tools/call", {
    name: tool,
    arguments: {},
    ...extra,
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
      "io.modelcontextprotocol/clientInfo": { name: "parked-test", version: "1.0.0" },
      "dev.mcpx/session": session
    }
  })

const send = (message: JsonRpc.Message) =>
  Effect.gen(function*() {
    const server = yield* Server.Server
    const connection = yield* Server.makeConnection(`c-${String(Math.random()).slice(2)}`)
    return yield* server.handle(message, { connection })
  })

const resultOf = (r: JsonRpc.Response | undefined): JsonObject => {
  if (r === undefined || !JsonRpc.isSuccess(r)) throw new Error(`expected a result, got ${JSON.stringify(r)}`)
  return r.result
}
const errorOf = (r: JsonRpc.Response | undefined): JsonRpc.ErrorObject => {
  if (r === undefined || !JsonRpc.isErrorResponse(r)) throw new Error(`expected an error, got ${JSON.stringify(r)}`)
  return r.error
}

/** Session `session` is asked, and walks away: its round's state. */
const abandonedRound = (id: number, session: string) =>
  Effect.gen(function*() {
    const asked = resultOf(yield* send(modern(id, session, "legacy__ask_name")))
    assert.strictEqual(asked.resultType, "input_required")
    return String(asked.requestState)
  })

describe("a parked round under pool.scope session", () => {
  it.scopedLive(
    "2026-07-28/questions/parked [session pool]: abandoned rounds never cost another session its call; the late retry is told to call again",
    () =>
      Effect.gen(function*() {
        // Both processes of the lane are held by calls waiting on callers who never come back.
        const stateA = yield* abandonedRound(1, "A")
        yield* abandonedRound(2, "B")

        // A third session's plain call gets a process at once, not after pool.startTimeout.
        const began = yield* Clock.currentTimeMillis
        const hello = resultOf(yield* send(modern(3, "C", "legacy__hello")))
        assert.include(JSON.stringify(hello.content), "hello")
        assert.isBelow((yield* Clock.currentTimeMillis) - began, StartTimeoutMs)

        // The oldest parked call gave way: its session's retry is refused, and names what to do.
        const late = errorOf(
          yield* send(modern(4, "A", "legacy__ask_name", {
            requestState: stateA,
            inputResponses: { name: { action: "accept", content: { name: "Ada" } } }
          }))
        )
        assert.strictEqual(late.code, -32602)
        assert.deepStrictEqual(late.data, { reason: "abandoned" })
        assert.include(late.message, "call again")

        // Called again, A is asked afresh: C's idle process goes first, B's parked round stays.
        const again = resultOf(yield* send(modern(5, "A", "legacy__ask_name")))
        assert.strictEqual(again.resultType, "input_required")
        const [status] = yield* (yield* Pool).snapshot
        assert.deepStrictEqual(status?.instances.map((i) => i.key).sort(), ["session:A", "session:B"])
      }).pipe(
        Effect.provide(serverFor({
          legacy: era("dual", { protocol: "force-initialize", pool: { scope: "session", max: 2, startTimeout: `${StartTimeoutMs}ms` } })
        }))
      ),
    { timeout: 60_000 }
  )
})
