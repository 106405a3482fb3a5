/**
 * The legacy lifecycle over the bundle's stdio: what comes before `initialize` is answered under
 * the oldest revision's shapes (mcpx-fx accepts liberally), `initialize` is handled in line so the
 * request right behind it already gets the negotiated revision, an unknown version is countered
 * with the newest legacy one, and 2024-11-05 is served.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { firstText, result } from "../support/Replies.js"
import { initializeParams, Legacy, speaking } from "../support/Revisions.js"
import { assertStructuredCall } from "../support/Shapes.js"
import { era, start } from "../support/StdioServe.js"

const config = { servers: { alpha: era("dual") }, settings: { "transport.stdioDrain": "5s" } }

const structured = { name: "alpha__structured", arguments: {} }

describe.concurrent.each(Legacy)("%s", (revision) => {
  it.scoped(
    `${revision}/stdio/before initialize requests get 2024-11-05 shapes, and initialize settles ${revision} for the request right behind it`,
    () =>
      Effect.gen(function*() {
        const serve = yield* start(config)
        assert.deepStrictEqual(result(yield* serve.request("pre-ping", "ping")), {})
        assertStructuredCall("2024-11-05", yield* serve.request("pre-call", "tools/call", structured))
        // Written back to back: the call must not be read before initialize has been handled.
        yield* serve.send({ id: "init", method: "initialize", params: initializeParams(revision) })
        yield* serve.send({ id: "post-call", method: "tools/call", params: structured })
        assert.strictEqual(result(yield* serve.reply("init")).protocolVersion, revision)
        assertStructuredCall(revision, yield* serve.reply("post-call"))
      })
  )

  it.scoped(`${revision}/stdio/initialize answers ${revision} with the capabilities ${revision} has`, () =>
    Effect.gen(function*() {
      const serve = yield* start(config)
      const init = result(yield* serve.request("init", "initialize", initializeParams(revision)))
      assert.strictEqual(init.protocolVersion, revision)
      assert.isObject(init.serverInfo)
      assert.isString((init.serverInfo as Record<string, unknown>).name)
      const capabilities = init.capabilities as Record<string, unknown>
      assert.isObject(capabilities.tools)
      // The completions capability arrived in 2025-03-26; 2024-11-05 has no such key.
      if (revision === "2024-11-05") assert.notProperty(capabilities, "completions")
      assert.notProperty(capabilities, "extensions")
      yield* serve.send({ method: "notifications/initialized" })
      const host = speaking(serve, revision)
      assert.strictEqual(firstText(yield* host.call("echo", "alpha__echo", { message: `served ${revision}` })), `served ${revision}`)
    }))
})

describe.concurrent("unknown versions", () => {
  it.scoped.each(["2099-12-31", "2026-07-28", "2024-10-07", "not-a-date"])(
    "2025-11-25/stdio/initialize offering %s is countered with 2025-11-25",
    (offered) =>
      Effect.gen(function*() {
        const serve = yield* start(config)
        const init = result(yield* serve.request("init", "initialize", initializeParams(offered)))
        assert.strictEqual(init.protocolVersion, "2025-11-25")
        yield* serve.send({ method: "notifications/initialized" })
        assertStructuredCall("2025-11-25", yield* serve.request("call", "tools/call", structured))
      })
  )
})
