/**
 * Seed 002, cancellation over the daemon's `/mcp`, watched from the upstream's side (the era-server
 * `--log` shows what reached it):
 * - 2026-07-28: closing the request's stream is the cancellation; it reaches the upstream call.
 * - legacy, in a session: `notifications/cancelled` cancels the request, reaches the upstream and
 *   withholds the reply (the POST ends as an event stream with nothing on it); a dropped
 *   connection is not a cancellation — the request is still in flight under its id afterwards.
 * - legacy, without a session: nothing could name the request, so the disconnect cancels it.
 * Each test has an upstream (and log) of its own, so concurrent tests cannot read each other's.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as EraLog from "../support/EraLog.js"
import { HttpDaemon } from "../support/HttpDaemon.js"
import { modernRequest, openSession, sessionless } from "../support/HttpMcp.js"
import { error } from "../support/Replies.js"
import { Legacy } from "../support/Revisions.js"
import type { Sandbox } from "../support/Sandbox.js"
import { era, type Message } from "../support/StdioServe.js"

const Scenarios = ["modern", "cancelled", "dropped", "sessionless"] as const
type Scenario = (typeof Scenarios)[number]

/** The upstream namespace of one test. */
const ns = (scenario: Scenario, revision: string) => `${scenario}_${revision.replace(/-/g, "")}`
const logOf = (sb: Sandbox, scenario: Scenario, revision: string) => sb.path(`${ns(scenario, revision)}.log`)

const config = (sb: Sandbox) => ({
  servers: Object.fromEntries(
    Scenarios.flatMap((s) => (s === "modern" ? ["2026-07-28"] : Legacy).map((r) => [ns(s, r), era("dual", "--log", logOf(sb, s, r))] as const))
  )
})

const has = (method: string) => (log: ReadonlyArray<EraLog.Logged>) => log.some((l) => l.method === method)

const slow = (scenario: Scenario, revision: string) => ({ name: `${ns(scenario, revision)}__slow`, arguments: { ms: 600_000 } })

describe.concurrent("cancellation over /mcp", () => {
  layer(HttpDaemon.layer(config), { timeout: 30_000 })("http cancellation", (it) => {
    it.effect("2026-07-28/http/closing the request's stream cancels it and the upstream call", () =>
      Effect.gen(function*() {
        const { http, sandbox } = yield* HttpDaemon
        const log = logOf(sandbox, "modern", "2026-07-28")
        const call = yield* Effect.fork(modernRequest(http, "doomed", "tools/call", slow("modern", "2026-07-28")))
        yield* EraLog.until(log, has("tools/call"))
        yield* Fiber.interrupt(call)
        const seen = yield* EraLog.until(log, has("notifications/cancelled"))
        assert.deepStrictEqual(seen.filter((l) => l.method === "notifications/cancelled").map((l) => l.era), ["modern"])
      }))

    it.effect.each(Legacy)(
      "%s/http/notifications/cancelled in the session cancels the request, reaches the upstream and withholds the reply",
      (revision) =>
        Effect.gen(function*() {
          const { http, sandbox } = yield* HttpDaemon
          const log = logOf(sandbox, "cancelled", revision)
          const session = yield* openSession(http, revision)
          const call = yield* Effect.fork(session.request("doomed", "tools/call", slow("cancelled", revision)))
          yield* EraLog.until(log, has("tools/call"))
          const cancel = yield* session.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "doomed", reason: "test" } })
          assert.strictEqual(cancel.status, 202, cancel.text)
          yield* EraLog.until(log, has("notifications/cancelled"))
          const reply = yield* Fiber.join(call)
          assert.strictEqual(reply.status, 200)
          assert.match(reply.headers.get("content-type") ?? "", /^text\/event-stream/)
          assert.notMatch(reply.text, /^data:/m, reply.text)
        })
    )

    it.effect.each(Legacy)("%s/http/a dropped connection in a session is not a cancellation", (revision) =>
      Effect.gen(function*() {
        const { http, sandbox } = yield* HttpDaemon
        const log = logOf(sandbox, "dropped", revision)
        const session = yield* openSession(http, revision)
        const call = yield* Effect.fork(session.request("kept", "tools/call", slow("dropped", revision)))
        yield* EraLog.until(log, has("tools/call"))
        yield* Fiber.interrupt(call)
        // Still running under its id: a second request with that id is refused as a duplicate.
        const duplicate = yield* session.request("kept", "ping")
        assert.strictEqual(error(duplicate.body as Message).code, -32600, duplicate.text)
        assert.match(error(duplicate.body as Message).message, /in flight/)
        assert.isFalse(has("notifications/cancelled")(EraLog.read(log)), JSON.stringify(EraLog.read(log)))
        // And notifications/cancelled is what ends it.
        yield* session.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "kept" } })
        yield* EraLog.until(log, has("notifications/cancelled"))
      }))

    it.effect.each(Legacy)("%s/http/without a session, a dropped connection cancels the request and the upstream call", (revision) =>
      Effect.gen(function*() {
        const { http, sandbox } = yield* HttpDaemon
        const log = logOf(sandbox, "sessionless", revision)
        const call = yield* Effect.fork(sessionless(http, revision, "alone", "tools/call", slow("sessionless", revision)))
        yield* EraLog.until(log, has("tools/call"))
        yield* Fiber.interrupt(call)
        yield* EraLog.until(log, has("notifications/cancelled"))
      }))
  })
})
