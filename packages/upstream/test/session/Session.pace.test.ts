/**
 * A server that keeps asking (a tool whose call ended, asking again the moment each refusal
 * comes) has its answers paced: a burst at once, then a steady rate on the Clock, so a loop no
 * longer gets thousands of answers a second. Pings are never paced.
 */
import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { Burst, PerSecond } from "../../src/session/internal/QuestionPace.js"
import { makeSession } from "../../src/session/Session.js"
import { legacyEstablished, testConnection } from "../util/TestConnection.js"

const legacy = legacyEstablished

describe("Session answer pace", () => {
  it.scoped("questions/a flood of questions nobody asked for is answered a burst at once, then at a steady rate; pings at once", () =>
    Effect.gen(function*() {
      const untied = yield* Queue.unbounded<JsonRpc.Parsed>()
      const answers = yield* Queue.unbounded<JsonRpc.Response>()
      const conn = testConnection(() => Stream.never, {
        respond: (r) => Queue.offer(answers, r),
        unsolicited: Stream.fromQueue(untied),
        wire: "stdio"
      })
      yield* makeSession("looping", conn, legacy, { clientInfo: { name: "t", version: "0" }, clientCapabilities: {} })
      const flood = Burst + 3 * PerSecond
      for (let id = 0; id < flood; id++) {
        yield* Queue.offer(untied, { message: JsonRpc.request(id, "elicitation/create", { message: "again?", requestedSchema: {} }), raw: {} })
      }
      const settle = Effect.repeatN(Effect.yieldNow(), 50)
      yield* settle
      assert.strictEqual(yield* Queue.size(answers), Burst)
      // A ping in the middle of it is not held behind the paced answers.
      yield* Queue.offer(untied, { message: JsonRpc.request("p", "ping", {}), raw: {} })
      yield* settle
      const taken = yield* Queue.takeAll(answers)
      assert.strictEqual(taken.length, Burst + 1)
      assert.isTrue([...taken].some((r) => r.id === "p"))
      // Each second lets the rate out, and no more.
      yield* TestClock.adjust("1 second")
      yield* settle
      assert.strictEqual(yield* Queue.size(answers), PerSecond)
      yield* TestClock.adjust("2 seconds")
      yield* settle
      assert.strictEqual(yield* Queue.size(answers), 3 * PerSecond)
    }))
})
