/**
 * Seed 002: `notifications/cancelled` on stdio interrupts the request it names, the interruption
 * reaches the upstream call (the era-server's log shows the upstream received the cancel), and the
 * request is never answered. The notification is handled in line, so the id it frees can be used
 * by the very next request.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as EraLog from "../support/EraLog.js"
import { firstText } from "../support/Replies.js"
import { All, open } from "../support/Revisions.js"
import { era, responseId, start } from "../support/StdioServe.js"

const upstreamLog = "slowpoke.log"

const config = (sb: { readonly path: (...s: ReadonlyArray<string>) => string }) => ({
  servers: { slowpoke: era("dual", "--log", sb.path(upstreamLog)) },
  settings: { "transport.stdioDrain": "20s" }
})

const has = (method: string) => (log: ReadonlyArray<EraLog.Logged>) => log.some((l) => l.method === method)

describe.concurrent("stdio cancellation", () => {
  it.scoped.each(All)(
    "%s/stdio/notifications/cancelled interrupts the request, reaches the upstream and suppresses its reply",
    (revision) =>
      Effect.gen(function*() {
        const serve = yield* start(config)
        const host = yield* open(serve, revision)
        const log = serve.sandbox.path(upstreamLog)
        yield* host.send("doomed", "tools/call", { name: "slowpoke__slow", arguments: { ms: 600_000 } })
        yield* EraLog.until(log, has("tools/call"))
        yield* serve.send({ method: "notifications/cancelled", params: { requestId: "doomed", reason: "test" } })
        yield* EraLog.until(log, has("notifications/cancelled"))
        yield* host.cheap("after")
        yield* serve.end
        const run = yield* serve.exited
        assert.strictEqual(run.code, 0, run.stderr)
        assert.deepStrictEqual(run.violations, [])
        assert.isFalse(run.frames.some((f) => responseId(f) === "doomed"), run.lines.join("\n"))
      })
  )

  it.scoped.each(All)("%s/stdio/a cancelled request's id is free for the very next request", (revision) =>
    Effect.gen(function*() {
      const serve = yield* start(config)
      const host = yield* open(serve, revision)
      yield* host.send("reused", "tools/call", { name: "slowpoke__slow", arguments: { ms: 600_000 } })
      // Once this is answered the upstream is up and the slow call is surely in flight.
      yield* host.call("warm", "slowpoke__echo", { message: "warm" })
      // No wait between the two: the cancel must land before the request that follows it.
      yield* serve.send({ method: "notifications/cancelled", params: { requestId: "reused" } })
      const reply = yield* host.call("reused", "slowpoke__echo", { message: "second" })
      assert.strictEqual(firstText(reply), "second")
      yield* serve.end
      const run = yield* serve.exited
      assert.strictEqual(run.code, 0, run.stderr)
      assert.strictEqual(run.frames.filter((f) => responseId(f) === "reused").length, 1, run.lines.join("\n"))
    }))
})
