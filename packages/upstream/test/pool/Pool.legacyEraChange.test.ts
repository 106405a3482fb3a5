/**
 * An HTTP upstream learned legacy that turns modern-only while the pool runs (seed 003: era
 * detection cached per endpoint "with re-probe on failure"). Whether it refuses the legacy session's
 * request with -32022 or forgets the session and then refuses `initialize`, the call is tried once
 * more on a fresh probe that distrusts the era cache, and the change is told as server.era.stale.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import { EraCache } from "../../src/era/EraCache.js"
import { Negotiator } from "../../src/era/Negotiator.js"
import { Pool } from "../../src/pool/Pool.js"
import { type PoolServer, ScopeKey } from "../../src/pool/PoolModel.js"
import type { PoolEvent } from "../../src/pool/PoolEvents.js"
import type { Preference } from "../../src/era/Preference.js"
import { Prober } from "../../src/era/Prober.js"
import { HttpDefinition } from "../../src/ServerDefinition.js"
import type { Session } from "../../src/session/SessionModel.js"
import { HTTPStatusError, SessionExpired, type TransportError } from "../../src/transport/Transport.js"
import { discoverResult, err, fakeTransport, initializeResult, ok, type Recorder, type Script } from "../util/FakeTransport.js"

/** How the changed server answers a request of the legacy session it used to serve. */
type LegacyRefusal = "32022" | "forgotten"

/** A Streamable HTTP server, legacy until `state.modern` is set, then modern-only. */
const changing = (state: { modern: boolean }, refusal: LegacyRefusal): Script => (req) => {
  const legacyRequest = req.params?._meta === undefined
  const answer = (era: string): Effect.Effect<JsonRpc.Response, TransportError> => ok(req, { content: [{ type: "text", text: `over ${era}` }] })
  if (!state.modern) {
    if (req.method === "server/discover") return Effect.fail(new HTTPStatusError({ status: 400, body: "Bad Request" }))
    if (req.method === "initialize") return ok(req, initializeResult("2025-11-25"))
    return answer("legacy")
  }
  if (req.method === "initialize") {
    return err(req, ErrorCode.UnsupportedProtocolVersion, "unsupported protocol version", {
      supported: ["2026-07-28"],
      requested: "2025-11-25"
    })
  }
  if (req.method === "server/discover") return ok(req, discoverResult(["2026-07-28"]))
  if (req.method === "tools/list") return ok(req, { tools: [] })
  if (!legacyRequest) return answer("modern")
  return refusal === "forgotten"
    ? Effect.fail(new SessionExpired({ sessionId: "s1" }))
    : err(req, ErrorCode.UnsupportedProtocolVersion, "unsupported protocol version", {
      supported: ["2026-07-28"],
      requested: "2025-11-25"
    })
}

const setup = (script: Script) => {
  const recorder: Recorder = { sent: [], opened: 0 }
  const layer = Pool.layer.pipe(
    Layer.provide(Prober.layer),
    Layer.provideMerge(EraCache.layerMemory),
    Layer.provide(Negotiator.layer),
    Layer.provide(fakeTransport(script, recorder, "streamable-http"))
  )
  return { recorder, layer }
}

const serverWith = (preference: Preference): PoolServer => ({
  definition: new HttpDefinition({ transport: "http", name: "remote", url: "http://127.0.0.1:9/mcp" }),
  probe: {
    preference,
    probeTimeout: "2 seconds",
    session: { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} }
  }
})

const textOf = (s: Session) => Effect.map(s.request("tools/call", { name: "hello", arguments: {} }), (r) => JSON.stringify(r.content))

const call = (server: PoolServer) => Effect.flatMap(Pool, (pool) => pool.withSession(server, { key: ScopeKey.global }, textOf))

const nextOf = <T extends PoolEvent["type"]>(events: Queue.Dequeue<PoolEvent>, type: T) =>
  Effect.gen(function*() {
    while (true) {
      const e = yield* Queue.take(events)
      if (e.type === type) return e as Extract<PoolEvent, { type: T }>
    }
  })

describe("Pool: an HTTP upstream learned legacy that turns modern-only", () => {
  for (const preference of ["prefer-discover", "prefer-initialize"] as const) {
    for (const [refusal, how] of [["32022", "refuses the legacy call with -32022"], ["forgotten", "forgets the session and refuses initialize"]] as const) {
      it.scoped(`pool/era-change/legacy-to-modern/${preference}: a server that ${how} is probed again once and served modern`, () => {
        const state = { modern: false }
        const { layer, recorder } = setup(changing(state, refusal))
        return Effect.gen(function*() {
          const server = serverWith(preference)
          const events = yield* Effect.flatMap(Pool, (p) => p.subscribe)
          const cache = yield* EraCache
          assert.include(yield* call(server), "over legacy")
          assert.strictEqual(Option.getOrThrow(yield* cache.get(server.definition)).era, "legacy")

          state.modern = true
          recorder.sent.length = 0
          // The same call, answered in the era the new probe found.
          assert.include(yield* call(server), "over modern")
          assert.strictEqual(recorder.opened, 2)
          assert.deepStrictEqual(recorder.sent.filter((m) => m.startsWith("2:")).slice(-1), ["2:tools/call"])

          const stale = yield* nextOf(events, "server.era.stale")
          assert.deepStrictEqual([stale.cached, stale.era, stale.negotiated], ["legacy", "modern", "2026-07-28"])
          const report = Option.getOrThrow(yield* Effect.flatMap(Pool, (p) => p.report("remote")))
          assert.deepStrictEqual([report.era, report.stale], ["modern", true])
          assert.isTrue(report.steps.some((s) => s.includes("probing again")), report.steps.join("\n"))
          assert.strictEqual(Option.getOrThrow(yield* cache.get(server.definition)).era, "modern")
          // Settled: the next call goes straight to the modern session.
          assert.include(yield* call(server), "over modern")
          assert.strictEqual(recorder.opened, 2)
        }).pipe(Effect.provide(layer))
      })
    }
  }

  it.scoped("pool/era-change/legacy-to-modern: a legacy server's other errors are passed on, with no second probe", () => {
    // -32021 on a delivered response may be what a server behind this legacy one said.
    const passingOn: Script = (req) =>
      req.method === "initialize"
        ? ok(req, initializeResult("2025-11-25"))
        : req.method === "server/discover"
        ? Effect.fail(new HTTPStatusError({ status: 400, body: "Bad Request" }))
        : err(req, ErrorCode.MissingRequiredClientCapability, "the server behind needs elicitation")
    const { layer, recorder } = setup(passingOn)
    return Effect.gen(function*() {
      const e = yield* Effect.flip(call(serverWith("prefer-discover")))
      assert.strictEqual(e._tag, "UpstreamRpcError")
      assert.strictEqual(recorder.opened, 1)
    }).pipe(Effect.provide(layer))
  })
})
