/**
 * A full lane held by calls parked on their callers' answers (CallContext.parked): a key waiting
 * for a permit gets the instance whose calls all wait on callers who walked away, looked for when
 * it starts waiting and again every second; an instance with any call that is not parked is never
 * handed over.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { EraCache } from "../../src/era/EraCache.js"
import { Negotiator } from "../../src/era/Negotiator.js"
import { Pool } from "../../src/pool/Pool.js"
import { PoolError } from "../../src/pool/PoolEvents.js"
import { type Caller, type PoolServer, ScopeKey } from "../../src/pool/PoolModel.js"
import { Prober } from "../../src/era/Prober.js"
import { StdioDefinition } from "../../src/ServerDefinition.js"
import type { CallContext, Parked } from "../../src/session/SessionModel.js"
import { discoverResult, err, type FakeConnection, fakeTransport, ok, type Recorder, type Script } from "../util/FakeTransport.js"

/** A modern server whose first connection holds every `tools/call` until the caller lets go. */
const script = (entered: Deferred.Deferred<number>): Script => (req: JsonRpc.Request, n) => {
  if (req.method === "server/discover") return ok(req, discoverResult(["2026-07-28"]))
  if (req.method !== "tools/call") return err(req, ErrorCode.MethodNotFound, "no such method")
  const answer = ok(req, { content: [{ type: "text", text: String(n) }] })
  return n === 1 ? Effect.zipRight(Deferred.succeed(entered, n), Effect.never) : answer
}

const setup = (entered: Deferred.Deferred<number>) => {
  const connections = new Map<number, FakeConnection>()
  const recorder: Recorder = { sent: [], opened: 0, connections }
  const layer = Pool.layer.pipe(
    Layer.provide(Prober.layer),
    Layer.provideMerge(EraCache.layerMemory),
    Layer.provide(Negotiator.layer),
    Layer.provide(fakeTransport(script(entered), recorder, "stdio"))
  )
  return { recorder, layer }
}

const server: PoolServer = {
  definition: new StdioDefinition({ transport: "stdio", name: "fake", command: "fake-server" }),
  probe: {
    preference: "prefer-discover",
    probeTimeout: "2 seconds",
    session: { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} }
  },
  settings: { max: 1, startTimeout: "10 seconds" }
}

const session = (id: string): Caller => ({ key: ScopeKey.session(id) })

/** A call's parking, as the pending registry keeps it: parked from `park`, and how often it gave way. */
const parking = () => {
  const state = { since: undefined as number | undefined, gaveWay: 0, end: Effect.void as Effect.Effect<void> }
  const parked: Parked = {
    since: () => state.since,
    giveWay: Effect.suspend(() => {
      state.gaveWay += 1
      return state.end
    })
  }
  return { state, parked }
}

const call = (caller: Caller, ctx: CallContext = {}) =>
  Effect.flatMap(
    Pool,
    (pool) =>
      pool.withSession(server, caller, (s) => Effect.map(s.request("tools/call", { name: "who", arguments: {} }, ctx), (r) => JSON.stringify(r.content)))
  )

/** Yields until `done` holds; fails the test (rather than hanging) when it never does. */
const eventually = <R>(what: string, done: Effect.Effect<boolean, never, R>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 10_000; i++) {
      if (yield* done) return
      yield* Effect.yieldNow()
    }
    return yield* Effect.dieMessage(`never happened: ${what}`)
  })

const sleepers = Effect.map(TestClock.sleeps(), Chunk.size)

/** Forks `self` and waits until it sleeps on the TestClock, so that adjusting the clock reaches it. */
const forkSleeping = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const before = yield* sleepers
    const fiber = yield* Effect.fork(self)
    yield* eventually("a new sleeper on the TestClock", Effect.map(sleepers, (n) => n > before))
    return fiber
  })

describe("Pool: a lane held by parked calls", () => {
  it.effect("pool/parked: a key waiting for a permit gets the instance whose call became parked while it waited", () => {
    const entered = Deferred.unsafeMake<number>(FiberId.none)
    const { layer, recorder } = setup(entered)
    return Effect.gen(function*() {
      const a = parking()
      const held = yield* Effect.fork(call(session("a"), { parked: a.parked }))
      a.state.end = Fiber.interrupt(held)
      yield* Deferred.await(entered)
      // b finds the lane full with a call that is not parked: it waits for a permit.
      const waiting = yield* forkSleeping(call(session("b")))
      assert.strictEqual(a.state.gaveWay, 0)
      // a's round is handed out and its caller walks away; the next look finds it.
      a.state.since = yield* Clock.currentTimeMillis
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Fiber.join(waiting), JSON.stringify([{ type: "text", text: "2" }]))
      assert.strictEqual(a.state.gaveWay, 1)
      assert.isTrue(Exit.isInterrupted(yield* Fiber.await(held)))
      assert.strictEqual(recorder.opened, 2)
    }).pipe(Effect.provide(layer))
  })

  it.effect("pool/parked: an instance with a call that is not parked is never handed over; the new key fails saturated at startTimeout", () => {
    const entered = Deferred.unsafeMake<number>(FiberId.none)
    const { layer, recorder } = setup(entered)
    return Effect.gen(function*() {
      const a = parking()
      const held = yield* Effect.fork(call(session("a"), { parked: a.parked }))
      yield* Deferred.await(entered)
      // A second call of a's session is in flight on the same process and waits on nobody.
      const busy = yield* Effect.fork(call(session("a")))
      yield* eventually("both calls of a are in flight", Effect.map(Effect.flatMap(Pool, (p) => p.snapshot), (s) => s[0]?.instances[0]?.busy === 2))
      a.state.since = yield* Clock.currentTimeMillis
      const waiting = yield* forkSleeping(Effect.flip(call(session("b"))))
      yield* TestClock.adjust("10 seconds")
      const e = yield* Fiber.join(waiting)
      assert.instanceOf(e, PoolError)
      assert.strictEqual((e as PoolError).reason, "saturated")
      assert.strictEqual(a.state.gaveWay, 0)
      assert.isTrue(Option.isNone(yield* Fiber.poll(held)))
      assert.strictEqual(recorder.opened, 1)
      yield* Fiber.interrupt(busy)
      yield* Fiber.interrupt(held)
    }).pipe(Effect.provide(layer))
  })
})
