/**
 * What a legacy stdio upstream's questions do when the daemon cannot simply hand them to the host
 * that asked: the host never comes back (`questions.ttl`, short here), or the upstream is shared
 * (`pool.scope: global`, the default) by two hosts whose calls are in flight at once, so a
 * question, which names no call on stdio, cannot be said to be either's. It is then held for
 * for the owner to answer by id (`/v1/elicit` on the unix socket), never put to a host that may not
 * have caused it, nor shown to or answered by any TCP caller. With
 * `"pool": {"scope": "session"}` each call has a process of its own, and both hosts are asked.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { HttpDaemon } from "../support/HttpDaemon.js"
import { sseReader } from "../support/HttpMcp.js"
import { send } from "../support/RawHttp.js"
import { overHttp, overStdio } from "../support/ModernHost.js"
import { firstText } from "../support/Replies.js"
import type { Sandbox } from "../support/Sandbox.js"
import { type Message, start } from "../support/StdioServe.js"
import * as Flows from "./Flows.js"

const legacy = Fixtures.fixtureScript("sdk-v1-legacy")
const logOf = (sb: Sandbox, ns: string) => sb.path(`${ns}.log`)
const upstream = (sb: Sandbox, ns: string): Flows.Upstream => ({ ns, log: logOf(sb, ns) })

const config = (sb: Sandbox) => ({
  servers: {
    ttl_http: Flows.legacyServer(legacy, logOf(sb, "ttl_http")),
    ttl_relay: Flows.legacyServer(legacy, logOf(sb, "ttl_relay")),
    shared: Flows.legacyServer(legacy, logOf(sb, "shared")),
    // Two at once, so both hosts' calls run side by side rather than one after the other.
    own: Flows.legacyServer(legacy, logOf(sb, "own"), { pool: { scope: "session", max: 2 } })
  },
  // Long enough for a host to answer on a loaded machine, short enough to wait for.
  settings: { "questions.ttl": "8s" }
})

/** The daemon's API at `base` (its `info.url`). */
const api = (base: string, method: "GET" | "POST", path: string, body?: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, body: (await response.json()) as Message }
  })

/** `/v1/events` of `types`, in place once this returns; each `next` is the next event's data. */
const events = (base: string, types: string): Effect.Effect<{ readonly next: Effect.Effect<Message | undefined> }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const controller = new AbortController()
    const response = yield* Effect.acquireRelease(
      Effect.promise(() => fetch(`${base}/v1/events?types=${types}`, { headers: { accept: "text/event-stream" }, signal: controller.signal })),
      () => Effect.sync(() => controller.abort())
    )
    const reader = sseReader(response, controller)
    // The subscription is in place once its first comment has come.
    const first = yield* reader.next
    assert.strictEqual(first?._tag, "comment", JSON.stringify(first))
    return { next: reader.nextEvent }
  })

interface OpenQuestion {
  readonly id: string
  readonly from: string
  readonly call?: string
  readonly method: string
}

/** Every open question, as the owner sees them over the unix socket. */
const openQuestions = (socketPath: string) =>
  Effect.map(
    send({ socketPath, method: "GET", path: "/v1/elicit" }),
    (r) => ((r.json as { questions?: ReadonlyArray<OpenQuestion> } | undefined)?.questions ?? [])
  )

describe.concurrent("questions nobody can be handed at once", () => {
  layer(HttpDaemon.layer(config), { timeout: 60_000 })("daemon question bounds", (it) => {
    it.effect("2026-07-28/questions/ttl [http]: at questions.ttl the question is answered cancel, the upstream call cancelled, the state refused as expired", () =>
      Effect.scoped(Effect.gen(function*() {
        const { http, sandbox } = yield* HttpDaemon
        yield* Flows.expiry(overHttp(http), upstream(sandbox, "ttl_http"))
      })))

    it.effect("2026-07-28/questions/ttl [relay]: at questions.ttl the question is answered cancel, the upstream call cancelled, the state refused as expired", () =>
      Effect.scoped(Effect.gen(function*() {
        const { daemon, sandbox } = yield* HttpDaemon
        const relay = yield* start({ servers: {}, settings: { "transport.stdioDrain": "5s" } }, { args: ["--relay"], stateDir: daemon.stateDir })
        yield* Flows.expiry(overStdio(relay, "relay"), upstream(sandbox, "ttl_relay"))
      })))

    it.effect("2026-07-28/questions/shared-upstream [http]: two hosts on one shared stdio upstream: the second's question is held, never put to either, and no answer crosses", () =>
      Effect.scoped(Effect.gen(function*() {
        const { daemon, http, sandbox } = yield* HttpDaemon
        const base = daemon.info.url
        const shared = upstream(sandbox, "shared")
        const host = overHttp(http)
        const unattributed = yield* events(base, "question.unattributed")

        // Host A is asked, and its call waits upstream for the answer.
        const a = Flows.asking(host, "tools/call", Flows.tool(shared, "ask_name"), Flows.Elicitation)
        const asked = Flows.inputRequired(yield* a.first)
        const { key } = Flows.onlyQuestion(asked, "elicitation/create")

        // Host B's call asks too, while A's is in flight on the same process: whose is it?
        const b = yield* host.begin(Flows.nextId("b"), "tools/call", Flows.tool(shared, "ask_name"), Flows.Elicitation)
        const event = yield* unattributed.next
        assert.deepInclude(event, { type: "question.unattributed", server: "shared", method: "elicitation/create", callers: 2 })
        assert.include(String(event?.hint), `"pool": {"scope": "session", "max": 4}`)
        const held = (yield* openQuestions(daemon.info.socket)).filter((q) => q.from === "shared" && q.call === undefined)
        assert.deepStrictEqual(held.map((q) => [q.id, q.method]), [[event?.id, "elicitation/create"]])
        // Held, it is no TCP caller's: not listed there, not answered from there.
        const listed = yield* api(base, "GET", "/v1/elicit")
        assert.deepStrictEqual(listed.body.questions, [], JSON.stringify(listed.body))
        const stolen = yield* api(base, "POST", `/v1/elicit/${encodeURIComponent(String(event?.id))}`, { action: "accept", content: { name: "Mallory" } })
        assert.strictEqual(stolen.status, 404, JSON.stringify(stolen.body))

        // A's answer reaches A's call, and only it.
        assert.strictEqual(firstText(Flows.complete(yield* a.retry({ [key]: Flows.accept({ name: "Ada" }) }, asked.state))), "Hello, Ada!")
        // B was never asked; the held question is answered by id, and B's call ends with that answer.
        const declined = yield* send({
          socketPath: daemon.info.socket,
          method: "POST",
          path: `/v1/elicit/${encodeURIComponent(String(event?.id))}`,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ action: "decline" })
        })
        assert.strictEqual(declined.status, 200, declined.text)
        assert.strictEqual(firstText(Flows.complete(yield* b.reply)), "No name given (decline)")
        assert.strictEqual(Flows.upstreamCount(shared, "asked elicitation/create"), 2)
      })))

    it.effect("2026-07-28/questions/session-scope [http]: with pool.scope session two hosts asking at once are each asked, and each answer reaches its own call", () =>
      Effect.scoped(Effect.gen(function*() {
        const { daemon, http, sandbox } = yield* HttpDaemon
        const own = upstream(sandbox, "own")
        const host = overHttp(http)
        const calls = [0, 1].map(() => Flows.asking(host, "tools/call", Flows.tool(own, "ask_name"), Flows.Elicitation))
        // Both are asked before either answers.
        const asked = (yield* Effect.all(calls.map((c) => c.first), { concurrency: "unbounded" })).map(Flows.inputRequired)
        assert.deepStrictEqual((yield* openQuestions(daemon.info.socket)).filter((q) => q.from === "own"), [], "nothing held")
        const replies = yield* Effect.all(
          ["Ada", "Grace"].map((name, i) => {
            const { key } = Flows.onlyQuestion(asked[i]!, "elicitation/create")
            return calls[i]!.retry({ [key]: Flows.accept({ name }) }, asked[i]!.state)
          }),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(replies.map((r) => firstText(Flows.complete(r))), ["Hello, Ada!", "Hello, Grace!"])
      })))
  })
})
