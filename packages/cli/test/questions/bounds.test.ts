/**
 * What a legacy stdio upstream's questions do when the daemon cannot simply hand them to the host
 * that asked: the host never comes back (`questions.ttl`, short here), or the upstream is shared
 * (`pool.scope: global`, the default) by two hosts whose calls are in flight at once. A question
 * names no call on stdio; one that comes while another host's call waits on its own round is the
 * other call's (Session.attribution.test.ts covers the ones nobody can be said to have caused, held
 * for the owner to answer by id on the unix socket, never shown to or answered by a TCP caller).
 * With `"pool": {"scope": "session"}` each call has a process of its own, and both hosts are asked.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import { HttpDaemon } from "../support/HttpDaemon.js"
import { send } from "../support/RawHttp.js"
import { overHttp, overStdio } from "../support/ModernHost.js"
import { firstText } from "../support/Replies.js"
import type { Sandbox } from "../support/Sandbox.js"
import { start } from "../support/StdioServe.js"
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

    it.effect("2026-07-28/questions/shared-upstream [http]: a host that abandons its round on a shared stdio upstream does not make the next host's question unanswerable", () =>
      Effect.scoped(Effect.gen(function*() {
        const { daemon, http, sandbox } = yield* HttpDaemon
        const shared = upstream(sandbox, "shared")
        const host = overHttp(http)

        // Host A is asked, and its call waits upstream for an answer A may never send.
        const a = Flows.asking(host, "tools/call", Flows.tool(shared, "ask_name"), Flows.Elicitation)
        const askedA = Flows.inputRequired(yield* a.first)
        const keyA = Flows.onlyQuestion(askedA, "elicitation/create").key

        // Host B's call asks on the same process while A's waits: A's round was put to A, so
        // the question is B's. B is asked, and nothing is held.
        const b = Flows.asking(host, "tools/call", Flows.tool(shared, "ask_name"), Flows.Elicitation)
        const askedB = Flows.inputRequired(yield* b.first)
        const keyB = Flows.onlyQuestion(askedB, "elicitation/create").key
        assert.deepStrictEqual((yield* openQuestions(daemon.info.socket)).filter((q) => q.from === "shared" && q.call === undefined), [], "nothing held")
        assert.strictEqual(firstText(Flows.complete(yield* b.retry({ [keyB]: Flows.accept({ name: "Grace" }) }, askedB.state))), "Hello, Grace!")

        // A's answer, late, still reaches A's call, and only it.
        assert.strictEqual(firstText(Flows.complete(yield* a.retry({ [keyA]: Flows.accept({ name: "Ada" }) }, askedA.state))), "Hello, Ada!")
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
