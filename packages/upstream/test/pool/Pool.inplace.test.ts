/**
 * Calls run in place: on a serving legacy stdio session a call has no fiber of its own, and is
 * still cut short by whatever ends it (its caller's deadline, the process stopping, a crash), its
 * upstream request cancelled, exactly as a call under `Abortable`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type { Abort } from "@mcpx-fx/cancel/Abortable"
import { enter, InPlaceCall, inPlaceIn, leave, runningCount, type WaitingCall } from "../../src/transport/internal/InPlace.js"
import { Pool } from "../../src/pool/Pool.js"
import type { PoolServer } from "../../src/pool/PoolModel.js"
import { PoolError } from "../../src/pool/PoolEvents.js"
import { StdioDefinition } from "../../src/ServerDefinition.js"
import { caller, Cut, textOf, tool } from "../util/HeldCalls.js"
import { stdioPool } from "../util/StdioPool.js"

const layer = stdioPool

/**
 * A legacy stdio server: `ok` answers, `hold` says it got the call (progress) and never
 * answers, `quiet` never answers and says nothing (`quieted` answers with the ids it holds so),
 * `die` exits, and `cancelled` answers with the ids it was told were cancelled.
 */
const script = `
const rl = require("node:readline").createInterface({ input: process.stdin })
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n")
const cancelled = []
const quiet = []
const text = (id, t) => send({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: t }] } })
rl.on("line", (line) => {
  const m = JSON.parse(line)
  if (m.method === "initialize") {
    send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "held", version: "1" } } })
  } else if (m.method === "notifications/cancelled") {
    cancelled.push(m.params.requestId)
  } else if (m.method === "tools/call" && m.params.name === "ok") {
    text(m.id, "ok")
  } else if (m.method === "tools/call" && m.params.name === "hold") {
    send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: m.params._meta.progressToken, progress: 0, message: "holding " + m.id } })
  } else if (m.method === "tools/call" && m.params.name === "quiet") {
    quiet.push(m.id)
  } else if (m.method === "tools/call" && m.params.name === "quieted") {
    text(m.id, JSON.stringify(quiet))
  } else if (m.method === "tools/call" && m.params.name === "die") {
    process.stderr.write("fatal: gone mid-call\\n")
    process.exit(3)
  } else if (m.method === "tools/call" && m.params.name === "cancelled") {
    text(m.id, JSON.stringify(cancelled))
  } else if (m.id !== undefined) {
    send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no " + m.method } })
  }
})
`

const held: PoolServer = {
  definition: new StdioDefinition({ transport: "stdio", name: "held", command: process.execPath, args: ["-e", script] }),
  probe: {
    preference: "prefer-initialize",
    probeTimeout: "20 seconds",
    session: { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} }
  }
}

/** Starts the server with a first call, and says whether its session runs calls in place. */
const warm = Effect.flatMap(
  Pool,
  (pool) => pool.withSession(held, caller, (s) => Effect.map(tool(s, "ok"), (r) => ({ text: textOf(r), inPlace: s.runsInPlace })))
)

/** A held call, forked; answers once the server has it, with the abort its caller was handed. */
const holding = Effect.gen(function*() {
  const pool = yield* Pool
  const heard = yield* Deferred.make<void>()
  const armed = yield* Deferred.make<Abort<Cut>>()
  const fiber = yield* Effect.fork(pool.withSession(held, caller, (s) => tool(s, "hold", () => Deferred.succeed(heard, undefined)), {
    cutShort: (abort: Abort<Cut>) => {
      Deferred.unsafeDone(armed, Effect.succeed(abort))
      return () => {}
    }
  }))
  yield* Deferred.await(heard)
  return { fiber, abort: yield* Deferred.await(armed) }
})

/** The ids of the `quiet` calls the server holds. */
const quietIds = Effect.flatMap(
  Pool,
  (pool) => pool.withSession(held, caller, (s) => Effect.map(tool(s, "quieted"), (r) => JSON.parse(textOf(r)) as ReadonlyArray<unknown>))
)

const cancelledIds = Effect.flatMap(
  Pool,
  (pool) => pool.withSession(held, caller, (s) => Effect.map(tool(s, "cancelled"), (r) => JSON.parse(textOf(r)) as ReadonlyArray<unknown>))
)

// One after another: they count the calls in place of the whole module (runningCount).
describe.sequential("Pool: calls in place", () => {
  it.effect("pool/in-place/a forked fiber does not see the call running in place, and leaving restores the call around it", () =>
    Effect.gen(function*() {
      const outer = new InPlaceCall<string>()
      const inner = new InPlaceCall<string>()
      type Seen = Record<"none" | "here" | "forked" | "afterInner" | "afterAll", WaitingCall | undefined>
      const seen = yield* Effect.withFiberRuntime<Seen>((fiber) => {
        const none = enter(fiber, outer)
        const aroundInner = enter(fiber, inner)
        return Effect.map(
          Effect.flatMap(Effect.fork(Effect.withFiberRuntime<WaitingCall | undefined>((child) => Effect.succeed(inPlaceIn(child)))), Fiber.join),
          (forked) => {
            const here = inPlaceIn(fiber)
            leave(fiber, aroundInner)
            const afterInner = inPlaceIn(fiber)
            leave(fiber, none)
            return { none, here, forked, afterInner, afterAll: inPlaceIn(fiber) }
          }
        )
      })
      assert.isUndefined(seen.none)
      assert.strictEqual(seen.here, inner)
      assert.isUndefined(seen.forked)
      assert.strictEqual(seen.afterInner, outer)
      assert.isUndefined(seen.afterAll)
      assert.strictEqual(runningCount(), 0)
    }))

  it.effect("pool/in-place/an abort before the wait ends it at once; one after the call is over changes nothing", () =>
    Effect.sync(() => {
      const early = new InPlaceCall<string>()
      early.abort("first")
      early.abort("second")
      let ended = 0
      early.waitingOn(() => void ended++)
      assert.deepStrictEqual([early.error, ended], [{ error: "first" }, 1])
      const late = new InPlaceCall<string>()
      const letGo = late.waitingOn(() => void ended++)
      letGo()
      late.finish()
      late.abort("too late")
      assert.deepStrictEqual([late.error, ended], [undefined, 1])
    }))

  it.effect("pool/in-place/what waits for a call's end is told once, latest first, and at once when it came after the end", () =>
    Effect.sync(() => {
      const told: Array<string> = []
      const call = new InPlaceCall<string>()
      call.onEnd(() => told.push("first"))
      call.onEnd(() => told.push("second"))
      call.abort("cut")
      assert.deepStrictEqual(told, [], "a cut is not the end: the call still unwinds")
      call.finish()
      call.finish()
      call.onEnd(() => told.push("late"))
      assert.deepStrictEqual(told, ["second", "first", "late"])
    }))

  it.scopedLive("pool/in-place/a call cut short by its caller fails with the caller's error and is cancelled upstream", () =>
    Effect.gen(function*() {
      const first = yield* warm
      assert.deepStrictEqual(first, { text: "ok", inPlace: true })
      const { abort, fiber } = yield* holding
      abort(new Cut({ why: "deadline" }))
      const e = yield* Effect.flip(Fiber.join(fiber))
      assert.deepStrictEqual(e, new Cut({ why: "deadline" }))
      assert.strictEqual((yield* cancelledIds).length, 1, "the server was told the held call was cancelled")
      assert.strictEqual(runningCount(), 0, "the cut call left nothing behind")
      // The instance was released: the next call is served by the same process.
      assert.strictEqual((yield* warm).text, "ok")
    }).pipe(Effect.provide(layer)))

  it.scopedLive("pool/in-place/a call in place whose caller leaves is cancelled upstream and leaves nothing behind", () =>
    Effect.gen(function*() {
      const pool = yield* Pool
      yield* warm
      // Nothing comes back for this call before it is interrupted: only its wait for the answer ends.
      const fiber = yield* Effect.fork(pool.withSession(held, caller, (s) => tool(s, "quiet")))
      // Asked again until the server has it (its line may reach the server after the first asking).
      yield* Effect.repeat(quietIds, { until: (ids) => ids.length > 0 })
      yield* Fiber.interrupt(fiber)
      assert.strictEqual((yield* cancelledIds).length, 1, "the server was told the held call was cancelled")
      assert.strictEqual(runningCount(), 0, "the interrupted call left nothing behind")
      assert.strictEqual((yield* warm).text, "ok", "the same process serves the next call")
    }).pipe(Effect.provide(layer)))

  it.scopedLive("pool/in-place/stopCalls cuts a call in place short as shutdown, and refuses the next", () =>
    Effect.gen(function*() {
      const pool = yield* Pool
      yield* warm
      const { fiber } = yield* holding
      yield* pool.stopCalls
      const e = yield* Effect.flip(Fiber.join(fiber))
      assert.instanceOf(e, PoolError)
      if (e instanceof PoolError) assert.strictEqual(e.reason, "shutdown")
      const later = yield* Effect.flip(warm)
      assert.instanceOf(later, PoolError)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("pool/in-place/a crash under a call in place fails it naming the server and its stderr", () =>
    Effect.gen(function*() {
      const pool = yield* Pool
      yield* warm
      const e = yield* Effect.flip(pool.withSession(held, caller, (s) => tool(s, "die")))
      assert.instanceOf(e, PoolError)
      if (e instanceof PoolError) {
        assert.strictEqual(e.reason, "crashed")
        assert.include(e.message, "gone mid-call")
      }
      assert.strictEqual((yield* warm).text, "ok", "the next call starts a new process")
      assert.strictEqual(runningCount(), 0, "the crashed call left nothing behind")
    }).pipe(Effect.provide(layer)))
})
