/**
 * Questions a legacy host cannot take never reach it: an upstream's elicitation for a host that did
 * not declare elicitation, or whose revision has none, is answered `cancel` on its behalf.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Legacy, open } from "../support/Revisions.js"
import { era, type Frame, type Message, responseId, start } from "../support/StdioServe.js"

/** The call's reply or an `elicitation/create` sent to the host, whichever comes first. */
const replyOrQuestion = (id: string) => (f: Frame): Message | undefined =>
  !Array.isArray(f) && (responseId(f) === id || (f as Message).method === "elicitation/create") ? (f as Message) : undefined

describe.concurrent("questions a host cannot take", () => {
  // Design §3: a host that declared no such capability gets the question answered `cancel` on its
  // behalf, never a server→client request it did not opt into (and never a hang).
  it.scoped.each(Legacy)("%s/stdio/a host that did not declare elicitation is never sent elicitation/create", (revision) =>
    Effect.gen(function*() {
      const serve = yield* start({ servers: { leg: era("legacy-32601") }, settings: { "transport.stdioDrain": "1s" } })
      const host = yield* open(serve, revision, { sampling: {} })
      yield* host.send("ask", "tools/call", { name: "leg__ask_name", arguments: {} })
      const first = yield* serve.frame(replyOrQuestion("ask"), "the reply or a question")
      assert.notStrictEqual(first.method, "elicitation/create", JSON.stringify(first))
      assert.include(JSON.stringify(first.result), "cancel")
    }))

  // Elicitation arrived in 2025-06-18: a 2024-11-05 or 2025-03-26 host cannot be asked, whatever
  // its initialize claimed.
  it.scoped.each(["2024-11-05", "2025-03-26"] as const)(
    "%s/stdio/a host whose revision has no elicitation is never sent elicitation/create",
    (revision) =>
      Effect.gen(function*() {
        const serve = yield* start({ servers: { leg: era("legacy-32601") }, settings: { "transport.stdioDrain": "1s" } })
        const host = yield* open(serve, revision, { elicitation: {} })
        yield* host.send("ask", "tools/call", { name: "leg__ask_name", arguments: {} })
        const first = yield* serve.frame(replyOrQuestion("ask"), "the reply or a question")
        assert.notStrictEqual(first.method, "elicitation/create", JSON.stringify(first))
        assert.include(JSON.stringify(first.result), "cancel")
        assert.include(JSON.stringify(first.result), "cancel")
      })
  )
})
