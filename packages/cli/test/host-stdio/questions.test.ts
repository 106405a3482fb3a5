/**
 * Questions on stdio: a legacy upstream's `elicitation/create` (the era-server `ask_name` tool in
 * a legacy mode asks one) reaches a legacy host that declared elicitation as a server→client
 * request on stdout, and the host's answer goes back to the upstream. Elicitation exists from
 * 2025-06-18 on.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { firstText } from "../support/Replies.js"
import { open } from "../support/Revisions.js"
import { era, type Frame, type Message, type Serve, start } from "../support/StdioServe.js"

const config = { servers: { leg: era("legacy-32601") }, settings: { "transport.stdioDrain": "5s" } }

/** The first `elicitation/create` request on stdout whose id is not in `seen`. */
const question = (serve: Serve, seen: ReadonlyArray<unknown>) =>
  serve.frame(
    (f: Frame) =>
      !Array.isArray(f) && (f as Message).method === "elicitation/create" && "id" in f && !seen.includes((f as Message).id)
        ? (f as Message)
        : undefined,
    "an elicitation/create request"
  )

describe.concurrent("stdio questions", () => {
  it.scoped.each(["2025-06-18", "2025-11-25"] as const)(
    "%s/stdio/a legacy upstream's elicitation/create reaches the host and the answer goes back",
    (revision) =>
      Effect.gen(function*() {
        const serve = yield* start(config)
        const host = yield* open(serve, revision, { elicitation: {} })

        yield* host.send("accepting", "tools/call", { name: "leg__ask_name", arguments: {} })
        const first = yield* question(serve, [])
        const params = first.params as Message
        assert.isString(params.message)
        assert.isObject(params.requestedSchema)
        yield* serve.send({ id: first.id as string, result: { action: "accept", content: { name: "Ada" } } })
        assert.strictEqual(firstText(yield* serve.reply("accepting")), "hello, Ada")

        yield* host.send("declining", "tools/call", { name: "leg__ask_name", arguments: {} })
        const second = yield* question(serve, [first.id])
        yield* serve.send({ id: second.id as string, result: { action: "decline" } })
        assert.strictEqual(firstText(yield* serve.reply("declining")), "no name (decline)")
      })
  )
})
