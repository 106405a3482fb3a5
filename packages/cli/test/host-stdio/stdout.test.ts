/**
 * stdout carries only JSON-RPC, checked against the built binary in every revision: a listing, a
 * call whose text holds a newline, a tool error, an unknown tool, an unknown method, input that is
 * not JSON, and an upstream that prints a banner on its own stdout. Every line must be exactly one
 * JSON-RPC message, one per reply, and the run must end with exit code 0.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { content, error, firstText, result } from "../support/Replies.js"
import { All, open } from "../support/Revisions.js"
import { era, type Message, responseId, start } from "../support/StdioServe.js"

const config = {
  servers: { alpha: era("dual"), banner: era("legacy-banner") },
  settings: { "transport.stdioDrain": "20s" }
}

const tricky = "two\nlines, a \u2028 separator, \"quotes\" and ✓"

describe.concurrent("stdio stdout", () => {
  it.scoped.each(All)("%s/stdio/stdout carries only JSON-RPC", (revision) =>
    Effect.gen(function*() {
      const serve = yield* start(config)
      const host = yield* open(serve, revision)
      yield* host.send("list", "tools/list")
      yield* host.send("text", "tools/call", { name: "banner__echo", arguments: { message: tricky } })
      yield* host.send("boom", "tools/call", { name: "alpha__boom", arguments: {} })
      yield* host.send("unknown-tool", "tools/call", { name: "alpha__no_such_tool", arguments: {} })
      yield* host.send("unknown-method", "no/such/method")
      yield* serve.sendLine("this line is not JSON")
      yield* serve.sendLine("{\"jsonrpc\":\"2.0\",\"id\":\"cut\",")
      yield* serve.end
      const run = yield* serve.exited
      assert.strictEqual(run.code, 0, run.stderr)
      assert.deepStrictEqual(run.violations, [])

      const reply = (id: string): Message => {
        const found = run.frames.find((f) => responseId(f) === id)
        assert.isDefined(found, `${id} in\n${run.lines.join("\n")}`)
        return found as Message
      }
      const listed = (result(reply("list")).tools as ReadonlyArray<Message>).map((t) => t.name)
      assert.includeMembers(listed, ["alpha__echo", "banner__echo"])
      assert.strictEqual(firstText(reply("text")), tricky)
      assert.isTrue(result(reply("boom")).isError)
      assert.isAbove(content(reply("boom")).length, 0)
      error(reply("unknown-tool"))
      assert.strictEqual(error(reply("unknown-method")).code, -32601)
      const unparsed = run.frames.filter((f) => responseId(f) === null).map((f) => error(f as Message).code)
      assert.deepStrictEqual(unparsed, [-32700, -32700])
      // JSON-RPC 2.0: an error whose request id could not be read carries "id": null.
      assert.strictEqual(run.lines.filter((l) => l.startsWith(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700`)).length, 2, run.lines.join("\n"))

      // One line per reply and nothing else: initialize (legacy), five replies, two parse errors.
      assert.strictEqual(run.lines.length, (revision === "2026-07-28" ? 0 : 1) + 5 + 2, run.lines.join("\n"))
    }))
})
