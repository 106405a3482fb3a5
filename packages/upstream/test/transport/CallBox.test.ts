/**
 * One call's box on a shared channel: the response ends the wait, messages before it go to the
 * caller's handler in order, and the call is let go of exactly once, whether it was answered,
 * failed, or its caller left while it waited.
 */
import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { TransportClosed } from "../../src/transport/Transport.js"
import { CallBox, MaxQueued } from "../../src/transport/internal/CallBox.js"

const parsed = (message: JsonRpc.Message): JsonRpc.Parsed => ({ message, raw: message as unknown as JsonRpc.Parsed["raw"] })
const response = parsed(JsonRpc.success(1, { ok: true }))
const progress = parsed(JsonRpc.notification("notifications/progress", { progressToken: "t", progress: 1 }))

const counted = () => {
  const state = { released: 0 }
  return { state, box: new CallBox(() => void state.released++) }
}

describe("CallBox", () => {
  it.effect("upstream/callbox/a caller that cannot take its messages holds at most MaxQueued; later notifications are dropped, never the response or a question", () =>
    Effect.gen(function*() {
      const { box } = counted()
      for (let i = 0; i < MaxQueued * 3; i++) box.unsafeOffer(progress)
      const question = parsed(JsonRpc.request("q", "elicitation/create", { message: "?", requestedSchema: {} }))
      box.unsafeOffer(question)
      box.unsafeOffer(response)
      box.unsafeDone(Exit.void)
      let notes = 0
      let asked = 0
      const answer = yield* box.response((p) =>
        Effect.sync(() => {
          if (JsonRpc.isNotification(p.message)) notes++
          else asked++
        })
      )
      assert.deepStrictEqual(answer, response.message)
      assert.strictEqual(notes, MaxQueued)
      assert.strictEqual(asked, 1)
    }))

  it.effect("upstream/callbox/the response ends the wait; what came before it is handed on first, in order", () =>
    Effect.gen(function*() {
      const { box, state } = counted()
      const seen: Array<string> = []
      const fiber = yield* Effect.fork(box.response((p) => Effect.sync(() => void seen.push(JsonRpc.isNotification(p.message) ? p.message.method : "?"))))
      yield* Effect.yieldNow()
      box.unsafeOffer(progress)
      box.unsafeOffer(progress)
      box.unsafeOffer(response)
      box.unsafeDone(Exit.void)
      const answer = yield* Fiber.join(fiber)
      assert.deepStrictEqual(answer, response.message)
      assert.deepStrictEqual(seen, ["notifications/progress", "notifications/progress"])
      assert.strictEqual(state.released, 1)
      // Nothing reaches a box that has ended, and it is not let go of twice.
      assert.isFalse(box.unsafeOffer(progress))
      assert.isFalse(box.unsafeDone(Exit.void))
      assert.strictEqual(state.released, 1)
    }))

  it.effect("upstream/callbox/an answer that arrived before anyone waited is taken at once", () =>
    Effect.gen(function*() {
      const { box, state } = counted()
      box.unsafeOffer(response)
      box.unsafeDone(Exit.void)
      assert.strictEqual(state.released, 1)
      assert.deepStrictEqual(yield* box.response(() => Effect.void), response.message)
    }))

  it.effect("upstream/callbox/a caller that leaves while it waits lets go of the call, once", () =>
    Effect.gen(function*() {
      const { box, state } = counted()
      const fiber = yield* Effect.fork(box.response(() => Effect.void))
      yield* Effect.yieldNow()
      assert.strictEqual(state.released, 0)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(state.released, 1)
      box.unsafeOffer(response)
      box.unsafeDone(Exit.void)
      assert.strictEqual(state.released, 1)
    }))

  it.effect("upstream/callbox/a caller that leaves while a message is handed on lets go of the call", () =>
    Effect.gen(function*() {
      const { box, state } = counted()
      box.unsafeOffer(progress)
      const fiber = yield* Effect.fork(box.response(() => Effect.never))
      yield* Effect.yieldNow()
      assert.strictEqual(state.released, 0)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(state.released, 1)
    }))

  it.effect("upstream/callbox/a box that ends in failure fails the wait; one that ends without a response answers nothing", () =>
    Effect.gen(function*() {
      const failed = counted()
      const closed = new TransportClosed({ reason: "gone" })
      const fiber = yield* Effect.fork(failed.box.response(() => Effect.void))
      yield* Effect.yieldNow()
      failed.box.unsafeDone(Exit.fail(closed))
      assert.deepStrictEqual(yield* Fiber.await(fiber), Exit.fail(closed))
      assert.strictEqual(failed.state.released, 1)

      const bare = counted()
      bare.box.unsafeDone(Exit.void)
      assert.isUndefined(yield* bare.box.response(() => Effect.void))
    }))
})
