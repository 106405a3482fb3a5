/**
 * Two edges of /mcp found by the host-http suite: questions of hosts that share one stdio legacy
 * upstream, and an oversized body sent without a length.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpDaemon from "../support/HttpDaemon.js"
import { openSession } from "../support/HttpMcp.js"
import { firstText } from "../support/Replies.js"
import type { LegacyRevision } from "../support/Revisions.js"
import { era } from "../support/StdioServe.js"

describe.concurrent("edges of /mcp", () => {
  // A stdio legacy server's elicitation/create names no request, so on one upstream process shared
  // by two hosts (pool.scope global) nobody can tell whose call asked. Scoping the server's pool
  // by session gives each host its own process, and each question reaches the host that caused it.
  it.scoped("2025-11-25/http/hosts asking at once through a session-scoped stdio legacy upstream each get their own question", () =>
    Effect.gen(function*() {
      const { http } = yield* HttpDaemon.start({ servers: { leg: { ...era("legacy-32601"), pool: { scope: "session" } } } })
      const ask = (revision: LegacyRevision, name: string) =>
        Effect.gen(function*() {
          const session = yield* openSession(http, revision, { elicitation: {} })
          const stream = yield* session.stream(`ask-${name}`, "tools/call", { name: "leg__ask_name", arguments: {} })
          const first = yield* stream.nextEvent
          // A call answered without its host ever being asked was answered by someone else.
          assert.strictEqual(first?.method, "elicitation/create", `${revision} host: ${JSON.stringify(first)}`)
          yield* session.send({ jsonrpc: "2.0", id: first?.id, result: { action: "accept", content: { name } } })
          const reply = yield* stream.nextEvent
          assert.strictEqual(reply?.id, `ask-${name}`, `${revision} host: ${JSON.stringify(reply)}`)
          return firstText(reply!)
        })
      const replies = yield* Effect.all([ask("2025-11-25", "Ada"), ask("2025-06-18", "Grace")], { concurrency: "unbounded" })
      assert.deepStrictEqual(replies, ["hello, Ada", "hello, Grace"])
    }))

  // Past the limit the rest of the body is read and dropped, so a client still sending reads the
  // 413 instead of a reset connection.
  it.scoped("2026-07-28/http/a streamed body without a length over the size limit is answered 413", () =>
    Effect.gen(function*() {
      const { http } = yield* HttpDaemon.start({ servers: { alpha: era("dual") } })
      const chunk = new TextEncoder().encode("x".repeat(64 * 1024))
      let sent = 0
      const body = new ReadableStream<Uint8Array>({
        pull: (controller) => {
          if (sent++ >= 80) return controller.close()
          controller.enqueue(chunk)
        }
      })
      const status = yield* Effect.promise(() =>
        fetch(http.url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body,
          duplex: "half"
        } as RequestInit).then((r) => r.status, (e: unknown) => `no response: ${String((e as Error).cause ?? e)}`)
      )
      assert.strictEqual(status, 413)
    }))
})
