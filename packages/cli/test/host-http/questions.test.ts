/**
 * Questions within one era pass through the daemon's `/mcp`, and `protocol: follow` gives each
 * host era an upstream session of its own era:
 * - a legacy upstream's `elicitation/create` (era-server `ask_name` in a legacy mode) reaches the
 *   legacy host that caused it on the SSE stream of that POST, and the host's answer, POSTed in
 *   the session, goes back to the upstream;
 * - a modern upstream's `input_required` reaches a modern host with mcpx-fx's own signed state in
 *   place of the upstream's `requestState`; the retry's `inputResponses` go back upstream, and a
 *   state mcpx-fx did not sign is refused.
 * Elicitation exists from 2025-06-18 on. One daemon.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as EraLog from "../support/EraLog.js"
import { HttpDaemon } from "../support/HttpDaemon.js"
import { modernRequest, openSession } from "../support/HttpMcp.js"
import { error, firstText, result } from "../support/Replies.js"
import { Legacy, type LegacyRevision } from "../support/Revisions.js"
import type { Sandbox } from "../support/Sandbox.js"
import { era, type Message } from "../support/StdioServe.js"

const followLog = (sb: Sandbox) => sb.path("follow.log")

/** Which legacy upstream a host of `revision` asks through. */
const legacyNs = (revision: string) => `leg_${revision.replace(/-/g, "")}`
/** The legacy upstream of a host that declared nothing it can be asked. */
const unaskedNs = (revision: string) => `unk_${revision.replace(/-/g, "")}`

// A stdio upstream ties a question to no call, so the daemon can only attribute it to a call in
// flight: each host here gets an upstream of its own (a shared one is in open-bugs.test.ts).
// The Streamable HTTP legacy upstream ties each question to its POST, so two hosts share it.
const config = (sb: Sandbox) =>
  Effect.map(Fixtures.startHttpFixture("era-server", ["--mode", "legacy-32601"]), (legacyHttp) => ({
    servers: {
      [legacyNs("2025-06-18")]: era("legacy-32601"),
      [legacyNs("2025-11-25")]: era("legacy-32601"),
      [unaskedNs("2025-06-18")]: era("legacy-32601"),
      [unaskedNs("2025-11-25")]: era("legacy-32601"),
      leghttp: { url: legacyHttp.url },
      mod: era("modern-only"),
      flw: { ...era("dual", "--log", followLog(sb)), protocol: "follow" }
    }
  }))

const asMessage = (body: unknown): Message => {
  assert.isObject(body, JSON.stringify(body))
  return body as Message
}

/** What the era-server signs as its own state for `ask_name` (base64url JSON, then a MAC). */
const upstreamStatePrefix = Buffer.from(JSON.stringify({ tool: "ask_name", round: 1 })).toString("base64url")

describe.concurrent("questions over /mcp", () => {
  layer(HttpDaemon.layer({ effect: config }), { timeout: 30_000 })("http questions", (it) => {
    it.effect.each(["2025-06-18", "2025-11-25"] as const)(
      "%s/http/a legacy upstream's elicitation/create reaches the host on its POST's SSE stream and the answer goes back",
      (revision) =>
        Effect.scoped(Effect.gen(function*() {
          const { http } = yield* HttpDaemon
          const session = yield* openSession(http, revision, { elicitation: {} })
          for (
            const [id, answer, expected] of [
              ["accepting", { action: "accept", content: { name: "Ada" } }, "hello, Ada"],
              ["declining", { action: "decline" }, "no name (decline)"]
            ] as const
          ) {
            const stream = yield* session.stream(id, "tools/call", { name: `${legacyNs(revision)}__ask_name`, arguments: {} })
            assert.match(stream.response.headers.get("content-type") ?? "", /^text\/event-stream/)
            const question = yield* stream.nextEvent
            assert.strictEqual(question?.method, "elicitation/create", JSON.stringify(question))
            assert.isString((question?.params as Message).message)
            const answered = yield* session.send({ jsonrpc: "2.0", id: question?.id, result: answer })
            assert.strictEqual(answered.status, 202, answered.text)
            const reply = yield* stream.nextEvent
            assert.strictEqual(reply?.id, id, JSON.stringify(reply))
            assert.strictEqual(firstText(reply!), expected)
          }
        }))
    )

    it.effect.each(["2025-06-18", "2025-11-25"] as const)(
      "%s/http/a legacy host that declared nothing it can be asked has an elicitation cancelled on its behalf, in a plain JSON reply",
      (revision) =>
        Effect.gen(function*() {
          const { http } = yield* HttpDaemon
          // Such a host's request runs in its POST's own fiber: nothing is streamed to it first.
          const session = yield* openSession(http, revision)
          const reply = yield* session.request("unasked", "tools/call", { name: `${unaskedNs(revision)}__ask_name`, arguments: {} })
          assert.strictEqual(reply.status, 200, reply.text)
          assert.match(reply.headers.get("content-type") ?? "", /^application\/json/)
          const body = asMessage(reply.body)
          assert.strictEqual(body.id, "unasked")
          assert.match(firstText(body), /cancel/, JSON.stringify(body))
        })
    )

    it.effect("2025-11-25/http/two hosts asking at once through a Streamable HTTP legacy upstream each get their own question", () =>
      Effect.scoped(Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const asked = yield* Effect.all([Deferred.make<void>(), Deferred.make<void>()])
        const ask = (revision: LegacyRevision, name: string, mine: Deferred.Deferred<void>, theirs: Deferred.Deferred<void>) =>
          Effect.gen(function*() {
            const session = yield* openSession(http, revision, { elicitation: {} })
            const stream = yield* session.stream(`ask-${name}`, "tools/call", { name: "leghttp__ask_name", arguments: {} })
            const question = yield* stream.nextEvent
            assert.strictEqual(question?.method, "elicitation/create", JSON.stringify(question))
            yield* Deferred.succeed(mine, undefined)
            yield* Deferred.await(theirs)
            const answered = yield* session.send({ jsonrpc: "2.0", id: question?.id, result: { action: "accept", content: { name } } })
            assert.strictEqual(answered.status, 202, answered.text)
            const reply = yield* stream.nextEvent
            assert.strictEqual(reply?.id, `ask-${name}`, JSON.stringify(reply))
            return firstText(reply!)
          })
        // Both questions are out before either is answered: each host answers only its own.
        const replies = yield* Effect.all([ask("2025-11-25", "Ada", asked[0], asked[1]), ask("2025-06-18", "Grace", asked[1], asked[0])], {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(replies, ["hello, Ada", "hello, Grace"])
      })))

    it.effect("2026-07-28/http/a modern upstream's input_required reaches the host under mcpx-fx's own state, and the retry's inputResponses go back", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const caps = { elicitation: {} }
        const first = yield* modernRequest(http, "ask-1", "tools/call", { name: "mod__ask_name", arguments: {} }, caps)
        assert.strictEqual(first.status, 200, first.text)
        const r = result(asMessage(first.body))
        assert.strictEqual(r.resultType, "input_required", first.text)
        const requests = r.inputRequests as Record<string, Message>
        assert.strictEqual(requests.name?.method, "elicitation/create", first.text)
        const state = r.requestState
        assert.isString(state)
        assert.isFalse((state as string).startsWith(upstreamStatePrefix), `the upstream's own state reached the host: ${state}`)

        const retry = yield* modernRequest(http, "ask-2", "tools/call", {
          name: "mod__ask_name",
          arguments: {},
          inputResponses: { name: { action: "accept", content: { name: "Ada" } } },
          requestState: state
        }, caps)
        assert.strictEqual(retry.status, 200, retry.text)
        assert.strictEqual(result(asMessage(retry.body)).resultType, "complete")
        assert.strictEqual(firstText(asMessage(retry.body)), "hello, Ada")
      }))

    it.effect("2026-07-28/http/a requestState mcpx-fx did not sign is refused", () =>
      Effect.gen(function*() {
        const { http } = yield* HttpDaemon
        const forged = yield* modernRequest(http, "forged", "tools/call", {
          name: "mod__ask_name",
          arguments: {},
          inputResponses: { name: { action: "accept", content: { name: "Eve" } } },
          requestState: `${upstreamStatePrefix}.forged`
        }, { elicitation: {} })
        assert.strictEqual(forged.status, 400, forged.text)
        assert.strictEqual(error(asMessage(forged.body)).code, -32602)
      }))

    it.effect.each(Legacy)("%s/http/with protocol follow a legacy host meets a legacy upstream session", (revision) =>
      Effect.gen(function*() {
        const { http, sandbox } = yield* HttpDaemon
        const session = yield* openSession(http, revision)
        const reply = yield* session.request("who", "tools/call", { name: "flw__hello", arguments: {} })
        assert.strictEqual(reply.status, 200, reply.text)
        assert.match(firstText(asMessage(reply.body)), /^hello from dual over legacy /)
        yield* EraLog.until(followLog(sandbox), (log) => log.some((l) => l.era === "legacy" && l.method === "tools/call"))
      }))

    it.effect("2026-07-28/http/with protocol follow a modern host meets a modern upstream session", () =>
      Effect.gen(function*() {
        const { http, sandbox } = yield* HttpDaemon
        const reply = yield* modernRequest(http, "who", "tools/call", { name: "flw__hello", arguments: {} })
        assert.strictEqual(reply.status, 200, reply.text)
        assert.strictEqual(firstText(asMessage(reply.body)), "hello from dual over modern 2026-07-28")
        yield* EraLog.until(followLog(sandbox), (log) => log.some((l) => l.era === "modern" && l.method === "tools/call"))
      }))
  })
})
