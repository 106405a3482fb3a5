/**
 * End of input over the bundle's stdio: reading stops, requests already in flight get
 * `transport.stdioDrain` to answer, what is still running then is cancelled (and the upstream is
 * told), and the process exits 0. A host that closes stdin right after writing still gets answers.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as EraLog from "../support/EraLog.js"
import { firstText } from "../support/Replies.js"
import { All, open } from "../support/Revisions.js"
import { era, type Message, responseId, start } from "../support/StdioServe.js"

const upstreamLog = "slowpoke.log"

describe.concurrent("stdio end of input", () => {
  it.scoped.each(All)("%s/stdio/end of input drains requests in flight, then cancels the rest and exits 0", (revision) =>
    Effect.gen(function*() {
      const serve = yield* start((sb) => ({
        servers: { slowpoke: era("dual", "--log", sb.path(upstreamLog)) },
        // Long enough for a 100ms call on a busy machine, far shorter than the stuck one.
        settings: { "transport.stdioDrain": "3s" }
      }))
      const host = yield* open(serve, revision)
      yield* host.send("quick", "tools/call", { name: "slowpoke__slow", arguments: { ms: 100 } })
      yield* host.send("stuck", "tools/call", { name: "slowpoke__slow", arguments: { ms: 600_000 } })
      yield* serve.end
      const run = yield* serve.exited
      assert.strictEqual(run.code, 0, run.stderr)
      assert.deepStrictEqual(run.violations, [])
      const quick = run.frames.find((f) => responseId(f) === "quick")
      assert.isDefined(quick, run.lines.join("\n"))
      assert.strictEqual(firstText(quick as Message), "slept 100ms")
      assert.isFalse(run.frames.some((f) => responseId(f) === "stuck"), run.lines.join("\n"))
      const log = EraLog.read(serve.sandbox.path(upstreamLog))
      assert.strictEqual(log.filter((l) => l.method === "tools/call").length, 2)
      assert.isTrue(log.some((l) => l.method === "notifications/cancelled"), JSON.stringify(log))
    }))
})
