/**
 * A request cancelled while the upstream it needs is still starting takes nothing with it: the
 * other requests waiting for that upstream are answered (the start is the pool's, not the
 * cancelled caller's).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { All, open } from "../support/Revisions.js"
import { era, responseId, start } from "../support/StdioServe.js"

describe.concurrent("cancellation during an upstream start", () => {
  // Each request runs under its own fiber: cancelling one must not take down another that waits
  // on the same upstream start.
  it.scoped.each(All)("%s/stdio/cancelling a request while its upstream starts leaves the other requests to finish", (revision) =>
    Effect.gen(function*() {
      const serve = yield* start({ servers: { alpha: era("dual") }, settings: { "transport.stdioDrain": "10s" } })
      const host = yield* open(serve, revision)
      yield* host.send("list", "tools/list")
      yield* host.send("doomed", "tools/call", { name: "alpha__slow", arguments: { ms: 600_000 } })
      yield* serve.send({ method: "notifications/cancelled", params: { requestId: "doomed" } })
      // End of input drains: the listing has 10s to answer before it is cancelled too.
      yield* serve.end
      const run = yield* serve.exited
      assert.strictEqual(run.code, 0, run.stderr)
      assert.isTrue(run.frames.some((f) => responseId(f) === "list"), `tools/list was never answered:\n${run.lines.join("\n")}\n${run.stderr}`)
    }))
})
