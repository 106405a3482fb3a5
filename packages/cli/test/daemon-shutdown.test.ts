/**
 * The daemon at SIGTERM, through the bundle, watched from both ends (the host's replies and the
 * era-server's `--log`): calls in flight on every route finish within `daemon.shutdownGrace`;
 * whatever still runs after it is cancelled upstream and answered with an error (-32603 with
 * `data.reason: "shutdown"` on /mcp, 503 on /v1), never with nothing; and streams that never end on
 * their own (a legacy GET stream, a modern listen) do not hold the daemon for the grace.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as DaemonProcess from "./support/DaemonProcess.js"
import * as EraLog from "./support/EraLog.js"
import { endpoint, isStream, modernRequest, modernStream, openSession, sessionless } from "./support/HttpMcp.js"
import { error, firstText } from "./support/Replies.js"
import { sandbox } from "./support/Sandbox.js"
import { era, type Message } from "./support/StdioServe.js"

const countOf = (method: string) => (log: ReadonlyArray<EraLog.Logged>) => log.filter((l) => l.method === method).length

const slow = (ms: number) => ({ name: "slow__slow", arguments: { ms } })

const v1Call = (url: string, ms: number) =>
  Effect.promise(() =>
    fetch(`${url}/v1/call`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tool: "slow.slow", arguments: { ms } })
    }).then(async (r) => ({ status: r.status, body: await r.json() as Message }))
  )

/** A daemon fronting one era-server (`slow`) that logs what it receives. */
const daemonWithSlow = (args: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const sb = yield* sandbox
    const log = sb.path("slow.log")
    const config = yield* sb.writeJson("mcpx.json", { mcpServers: { slow: era("dual", "--log", log) } })
    const daemon = yield* Effect.orDie(DaemonProcess.start(sb, { config, args }))
    return { daemon, log, http: endpoint(daemon.info.mcp) }
  })

describe.concurrent("daemon shutdown", () => {
  it.scoped("daemon/shutdown/legacy-session calls in flight at SIGTERM finish within the grace", () =>
    Effect.gen(function*() {
      const { daemon, http, log } = yield* daemonWithSlow()
      const session = yield* openSession(http, "2025-11-25")
      const calls = yield* Effect.fork(
        Effect.all(Array.from({ length: 5 }, (_, i) => session.request(i, "tools/call", slow(1500))), { concurrency: "unbounded" })
      )
      yield* EraLog.until(log, (l) => countOf("tools/call")(l) === 5)
      yield* Effect.sync(() => daemon.child.kill("SIGTERM"))
      const replies = yield* Fiber.join(calls)
      for (const reply of replies) {
        assert.strictEqual(reply.status, 200, reply.text)
        assert.strictEqual(firstText(reply.body as Message), "slept 1500ms", reply.text)
      }
      assert.strictEqual(yield* daemon.exited, 0)
    }))

  it.scoped("daemon/shutdown/after the grace, calls still running on every route are cancelled upstream and answered with an error", () =>
    Effect.gen(function*() {
      const { daemon, http, log } = yield* daemonWithSlow(["--daemon-shutdown-grace", "1s"])
      const session = yield* openSession(http, "2025-11-25")
      const inSession = yield* Effect.fork(session.request("in-session", "tools/call", slow(600_000)))
      const withoutSession = yield* Effect.fork(sessionless(http, "2025-11-25", "sessionless", "tools/call", slow(600_000)))
      const modern = yield* Effect.fork(modernRequest(http, "modern", "tools/call", slow(600_000)))
      const v1 = yield* Effect.fork(v1Call(daemon.info.url, 600_000))
      yield* EraLog.until(log, (l) => countOf("tools/call")(l) === 4)
      yield* Effect.sync(() => daemon.child.kill("SIGTERM"))

      for (const [fiber, id, status] of [[inSession, "in-session", 200], [withoutSession, "sessionless", 200], [modern, "modern", 200]] as const) {
        const reply = yield* Fiber.join(fiber)
        assert.strictEqual(reply.status, status, reply.text)
        const body = reply.body as Message
        assert.strictEqual(body.id, id, reply.text)
        assert.strictEqual(error(body).code, -32603, reply.text)
        assert.deepStrictEqual(error(body).data, { reason: "shutdown" }, reply.text)
      }
      const api = yield* Fiber.join(v1)
      assert.strictEqual(api.status, 503, JSON.stringify(api.body))
      assert.include(String(api.body.error), "shutting down")
      // Each call was cancelled upstream before the upstream was stopped, and the daemon is gone.
      yield* EraLog.until(log, (l) => countOf("notifications/cancelled")(l) === 4)
      assert.strictEqual(yield* daemon.exited, 0)
    }))

  it.scoped("daemon/shutdown/a legacy GET stream and a modern listen end at once and do not hold the daemon for the grace", () =>
    Effect.gen(function*() {
      // A grace far longer than the test may run: the daemon must not wait for these streams.
      const { daemon, http } = yield* daemonWithSlow(["--daemon-shutdown-grace", "1h"])
      const session = yield* openSession(http, "2025-11-25")
      const get = yield* http.get(session.headers)
      assert.isTrue(isStream(get))
      const listen = yield* modernStream(http, "listen", "subscriptions/listen", { notifications: { toolsListChanged: true } })
      const ack = yield* listen.nextEvent
      assert.strictEqual(ack?.method, "notifications/subscriptions/acknowledged", JSON.stringify(ack))
      yield* Effect.sync(() => daemon.child.kill("SIGTERM"))
      const closed = yield* listen.nextEvent
      assert.deepStrictEqual(closed?.result, { resultType: "complete", _meta: { "io.modelcontextprotocol/subscriptionId": "listen" } })
      assert.isUndefined(yield* listen.nextEvent)
      if (isStream(get)) assert.isTrue((yield* get.rest).every((item) => item._tag === "comment"))
      assert.strictEqual(yield* daemon.exited, 0)
    }))
})
