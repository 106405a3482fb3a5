import { assert, describe, it } from "@effect/vitest"
import { Pool } from "@mcpx-fx/upstream/pool/Pool"
import type { PoolStatus } from "@mcpx-fx/upstream/pool/PoolStatus"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Progress from "../src/Progress.js"

const status = (server: string, state: "starting" | "ready"): PoolStatus =>
  ({
    server,
    preference: "prefer-discover",
    lanes: [],
    instances: [{ id: `${server}#1`, lane: "modern", key: "global", state, busy: 1, calls: 1, lastUsed: 0 }]
  }) as unknown as PoolStatus

/** A pool whose snapshot is whatever the test last put in `current`. */
const fakePool = (current: { value: ReadonlyArray<PoolStatus> }) =>
  Layer.succeed(
    Pool,
    Pool.of({
      withSession: () => Effect.dieMessage("unused"),
      snapshot: Effect.sync(() => current.value),
      report: () => Effect.succeed(Option.none()),
      reports: Effect.succeed([]),
      restart: () => Effect.dieMessage("unused"),
      stop: () => Effect.succeed(0),
      retire: () => Effect.void,
      stopCalls: Effect.void,
      events: Stream.empty,
      subscribe: Effect.dieMessage("unused"),
      notifications: Effect.dieMessage("unused")
    })
  )

describe("Progress", () => {
  it("cli/progress/names-the-servers-still-starting", () => {
    assert.deepStrictEqual(Progress.starting([status("a", "starting"), status("b", "ready")]), ["a"])
    assert.strictEqual(Progress.line(["a", "npx-server"], 2500), "mcpx-fx: starting a, npx-server... 2s")
    assert.isUndefined(Progress.line([], 2500))
  })

  it.effect("cli/progress/quiet-for-quick-starts-shown-for-long-ones-and-erased-at-the-end", () => {
    const current = { value: [status("slow", "starting")] as ReadonlyArray<PoolStatus> }
    const written: Array<string> = []
    return Effect.gen(function*() {
      const fiber = yield* Effect.fork(
        Effect.scoped(Effect.zipRight(Progress.show((t) => written.push(t)), Effect.never))
      )
      yield* TestClock.adjust("999 millis")
      assert.deepStrictEqual(written, [])
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(written.length, 1)
      assert.include(written[0]!, "starting slow... 1s")
      current.value = [status("slow", "ready")]
      yield* TestClock.adjust("500 millis")
      assert.strictEqual(written[1], "\r\x1b[K")
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(written.length, 2)
    }).pipe(Effect.provide(fakePool(current)))
  })
})
