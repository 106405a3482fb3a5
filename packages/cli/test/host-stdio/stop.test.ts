/**
 * SIGTERM to `mcpx-fx serve` (in-process and `--relay`): the host is still listening, so nothing
 * it asked may go unanswered. Reading stops, requests in flight get `transport.stdioDrain` to
 * answer, and what still runs after it is cancelled upstream and answered -32603 with
 * `data.reason: "shutdown"`; then the process exits 0. (At end of input the drain is the same, but
 * the host has gone and nothing is answered after it: drain.test.ts.)
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as DaemonProcess from "../support/DaemonProcess.js"
import * as EraLog from "../support/EraLog.js"
import { error, firstText } from "../support/Replies.js"
import { All, Modern, open, type Revision } from "../support/Revisions.js"
import { sandbox } from "../support/Sandbox.js"
import { era, type Exited, type Message, responseId, type Serve, start } from "../support/StdioServe.js"

const replyIn = (run: Exited, id: string): Message => {
  const reply = run.frames.find((f) => responseId(f) === id)
  assert.isDefined(reply, `no reply to ${id}:\n${run.lines.join("\n")}\n${run.stderr}`)
  return reply as Message
}

/** Two calls, a quick one and one that would run for ten minutes; SIGTERM once the upstream has both. */
const stopWithTwoCalls = (serve: Serve, revision: Revision, ns: string, log: string) =>
  Effect.gen(function*() {
    const host = yield* open(serve, revision)
    yield* host.send("quick", "tools/call", { name: `${ns}__slow`, arguments: { ms: 100 } })
    yield* host.send("stuck", "tools/call", { name: `${ns}__slow`, arguments: { ms: 600_000 } })
    yield* EraLog.until(log, (l) => l.filter((x) => x.method === "tools/call").length === 2)
    yield* serve.kill("SIGTERM")
    const run = yield* serve.exited
    assert.strictEqual(run.code, 0, run.stderr)
    assert.deepStrictEqual(run.violations, [])
    assert.strictEqual(firstText(replyIn(run, "quick")), "slept 100ms")
    const stuck = error(replyIn(run, "stuck"))
    assert.strictEqual(stuck.code, -32603, JSON.stringify(stuck))
    assert.deepStrictEqual(stuck.data, { reason: "shutdown" })
    // The stuck call was cancelled upstream, not left running.
    yield* EraLog.until(log, (l) => l.some((x) => x.method === "notifications/cancelled"))
  })

describe.concurrent("stdio stop", () => {
  it.scoped.each(All)("%s/stdio/SIGTERM answers every request: the drain, then the shutdown error", (revision) =>
    Effect.gen(function*() {
      const serve = yield* start((sb) => ({
        servers: { slowpoke: era("dual", "--log", sb.path("slowpoke.log")) },
        // Long enough for a 100ms call on a busy machine, far shorter than the stuck one.
        settings: { "transport.stdioDrain": "3s" }
      }))
      yield* stopWithTwoCalls(serve, revision, "slowpoke", serve.sandbox.path("slowpoke.log"))
    }))

  it.scoped("2026-07-28/stdio/SIGTERM closes an open subscriptions/listen with its completion result", () =>
    Effect.gen(function*() {
      const serve = yield* start({ servers: { lc: era("dual", "--list-changed") }, settings: { "transport.stdioDrain": "10m" } })
      const host = yield* open(serve, Modern)
      yield* host.send("listen", "subscriptions/listen", { notifications: { toolsListChanged: true } })
      yield* serve.frame((f) => ((f as Message).method === "notifications/subscriptions/acknowledged" ? f : undefined), "the ack")
      yield* serve.kill("SIGTERM")
      const run = yield* serve.exited
      assert.strictEqual(run.code, 0, run.stderr)
      const closed = replyIn(run, "listen").result as Message
      assert.strictEqual(closed.resultType, "complete", JSON.stringify(closed))
      assert.deepStrictEqual(closed._meta, { "io.modelcontextprotocol/subscriptionId": "listen" })
    }))

  it.scoped("2025-11-25/stdio relay/SIGTERM answers every request: the drain, then the shutdown error", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const log = sb.path("slowpoke.log")
      const config = yield* sb.writeJson("mcpx.json", { mcpServers: { slowpoke: era("dual", "--log", log) } })
      const daemon = yield* Effect.orDie(DaemonProcess.start(sb, { config }))
      const relay = yield* start({ servers: {}, settings: { "transport.stdioDrain": "3s" } }, {
        args: ["--relay"],
        stateDir: daemon.stateDir
      })
      yield* stopWithTwoCalls(relay, "2025-11-25", "slowpoke", log)
    }))
})
