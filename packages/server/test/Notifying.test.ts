import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import { notifying } from "../src/Server.js"

const log = (level: string) => JsonRpc.notification("notifications/message", { level, data: level })
const progress = JsonRpc.notification("notifications/progress", { progressToken: "t", progress: 1 })

/** What reaches the host through `notifying(channel, level)` of each message sent. */
const delivered = (level: Parameters<typeof notifying>[1], sent: ReadonlyArray<JsonRpc.Notification>) =>
  Effect.gen(function*() {
    const seen: Array<string> = []
    const { notify } = notifying((n) => Effect.sync(() => void seen.push(String(n.params?.level ?? n.method))), level)
    assert.isDefined(notify)
    yield* Effect.forEach(sent, (n) => notify!(n), { discard: true })
    return seen
  })

describe("notifying", () => {
  it.effect("2026-07-28/logging/no log message reaches a host that asked for no level; progress does", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* delivered(undefined, [log("error"), progress]), ["notifications/progress"])
    }))

  it.effect("2025-11-25/logging/log messages below the host's level are dropped", () =>
    Effect.gen(function*() {
      const seen = yield* delivered("warning", [log("debug"), log("info"), log("warning"), log("emergency"), log("bogus")])
      assert.deepStrictEqual(seen, ["warning", "emergency"])
    }))

  it("2025-11-25/logging/without a channel there is nothing to notify", () => {
    assert.deepStrictEqual(notifying(undefined, "debug"), {})
  })
})
