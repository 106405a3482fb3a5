/**
 * Streams that stay open until their client leaves are held to `transport.maxStreams`: past it a
 * 2026-07-28 `subscriptions/listen` or a `/v1/events` stream is refused with 503 and Retry-After,
 * the open ones go on, and a place a client gave back is taken by the next one.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as DaemonProcess from "../support/DaemonProcess.js"
import { endpoint, modernBody, modernHeaders, modernStream } from "../support/HttpMcp.js"
import { sandbox } from "../support/Sandbox.js"
import { era } from "../support/StdioServe.js"

const listenParams = { notifications: { toolsListChanged: true } }

describe("stream caps", () => {
  it.scoped("http/listen and /v1/events streams past transport.maxStreams are 503; a place given back is taken again", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const config = yield* sb.writeJson("mcpx.json", { mcpServers: { alpha: era("dual") } })
      const daemon = yield* Effect.orDie(DaemonProcess.start(sb, { config, args: ["--transport-max-streams", "2"] }))
      const http = endpoint(daemon.info.mcp)

      const first = yield* modernStream(http, "l1", "subscriptions/listen", listenParams)
      const second = yield* modernStream(http, "l2", "subscriptions/listen", listenParams)
      assert.strictEqual((yield* first.nextEvent)?.method, "notifications/subscriptions/acknowledged")
      assert.strictEqual((yield* second.nextEvent)?.method, "notifications/subscriptions/acknowledged")
      const third = yield* http.post(modernBody("l3", "subscriptions/listen", listenParams), { headers: modernHeaders("subscriptions/listen") })
      assert.strictEqual(third.status, 503)
      assert.isNotNull(third.headers.get("retry-after"))
      assert.include(third.text, "transport.maxStreams")

      // One client leaves: once the daemon has seen it go, its place is free.
      yield* first.abort
      const again = yield* modernStream(http, "l4", "subscriptions/listen", listenParams).pipe(
        Effect.filterOrFail((s) => s.response.status === 200, () => "still full"),
        Effect.retry(Schedule.spaced("25 millis").pipe(Schedule.upTo("10 seconds")))
      )
      assert.strictEqual((yield* again.nextEvent)?.method, "notifications/subscriptions/acknowledged")

      // /v1/events has places of its own.
      const events = (n: number) =>
        Effect.acquireRelease(
          Effect.sync(() => new AbortController()).pipe(
            Effect.flatMap((controller) =>
              Effect.map(
                Effect.promise(() => fetch(`${daemon.info.url}/v1/events`, { signal: controller.signal })),
                (response) => ({ controller, response, n })
              )
            )
          ),
          ({ controller }) => Effect.sync(() => controller.abort())
        )
      const e1 = yield* events(1)
      const e2 = yield* events(2)
      assert.strictEqual(e1.response.status, 200)
      assert.strictEqual(e2.response.status, 200)
      const e3 = yield* events(3)
      assert.strictEqual(e3.response.status, 503)
      assert.include(yield* Effect.promise(() => e3.response.text()), "transport.maxStreams")
    }), { timeout: 60_000 })
})
