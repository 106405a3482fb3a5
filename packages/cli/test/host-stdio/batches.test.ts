/**
 * JSON-RPC batches over the bundle's stdio follow the connection's negotiated revision: only
 * 2025-03-26 has them (2025-06-18 removed them), and before any `initialize` the connection reads
 * as 2025-03-26. A batch's reply is one array line; notifications get nothing; `initialize` must
 * not be batched, so it is an error element.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as EraLog from "../support/EraLog.js"
import { error, firstText, result } from "../support/Replies.js"
import { initializeParams, open } from "../support/Revisions.js"
import { era, type Frame, type Message, responseId, start } from "../support/StdioServe.js"

const upstreamLog = "alpha.log"

const config = (sb: { readonly path: (...s: ReadonlyArray<string>) => string }) => ({
  servers: { alpha: era("dual", "--log", sb.path(upstreamLog)) },
  settings: { "transport.stdioDrain": "20s" }
})

const call = (id: string, tool: string, args: Message = {}): Message => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: `alpha__${tool}`, arguments: args }
})
const ping = (id: string): Message => ({ jsonrpc: "2.0", id, method: "ping" })

/** The batch reply holding a response to `id`. */
const arrayWith = (id: string) => (f: Frame) => (Array.isArray(f) && f.some((m) => m.id === id) ? (f as ReadonlyArray<Message>) : undefined)

const byId = (replies: ReadonlyArray<Message>, id: string): Message => {
  const found = replies.find((m) => m.id === id)
  assert.isObject(found, `${id} in ${JSON.stringify(replies)}`)
  return found as Message
}

describe.concurrent("2025-03-26", () => {
  it.scoped("2025-03-26/stdio/batch reply is one array", () =>
    Effect.gen(function*() {
      const serve = yield* start(config)
      yield* open(serve, "2025-03-26")
      yield* serve.send([ping("b-ping"), call("b-echo", "echo", { message: "two\nlines" }), {
        method: "notifications/progress",
        params: { progressToken: 1, progress: 1 }
      }, call("b-boom", "boom")])
      const replies = yield* serve.frame(arrayWith("b-ping"), "the batch reply")
      assert.sameMembers(replies.map((m) => m.id), ["b-ping", "b-echo", "b-boom"])
      assert.deepStrictEqual(result(byId(replies, "b-ping")), {})
      assert.strictEqual(firstText(byId(replies, "b-echo")), "two\nlines")
      assert.isTrue(result(byId(replies, "b-boom")).isError)
      yield* serve.end
      const run = yield* serve.exited
      assert.strictEqual(run.code, 0, run.stderr)
      // Nothing of the batch was answered outside its one array.
      assert.isFalse(run.frames.some((f) => ["b-ping", "b-echo", "b-boom"].includes(String(responseId(f)))))
    }))

  it.scoped("2025-03-26/stdio/a batch before initialize is served as 2025-03-26", () =>
    Effect.gen(function*() {
      const serve = yield* start(config)
      yield* serve.send([ping("pre-1"), ping("pre-2")])
      const replies = yield* serve.frame(arrayWith("pre-1"), "the batch reply")
      assert.sameMembers(replies.map((m) => m.id), ["pre-1", "pre-2"])
    }))

  it.scoped("2025-03-26/stdio/initialize in a batch is an error element and negotiates nothing", () =>
    Effect.gen(function*() {
      const serve = yield* start(config)
      yield* serve.send([{ jsonrpc: "2.0", id: "b-init", method: "initialize", params: initializeParams("2025-03-26") }, ping("b-ping")])
      const replies = yield* serve.frame(arrayWith("b-init"), "the batch reply")
      assert.strictEqual(error(byId(replies, "b-init")).code, -32600)
      assert.deepStrictEqual(result(byId(replies, "b-ping")), {})
      // The refused initialize settled nothing: a real one still negotiates, even another revision.
      const init = yield* serve.request("init", "initialize", initializeParams("2025-06-18"))
      assert.strictEqual(result(init).protocolVersion, "2025-06-18")
    }))

  it.scoped("2025-03-26/stdio/a batch of notifications alone gets no reply", () =>
    Effect.gen(function*() {
      const serve = yield* start(config)
      yield* open(serve, "2025-03-26")
      yield* serve.send([{ method: "notifications/progress", params: { progressToken: 1, progress: 1 } }, {
        method: "notifications/cancelled",
        params: { requestId: "none" }
      }])
      // The batch is read before this ping, so a reply to it would come first.
      yield* serve.request("after", "ping")
      yield* serve.end
      const run = yield* serve.exited
      assert.strictEqual(run.code, 0, run.stderr)
      assert.deepStrictEqual(run.frames.filter((f) => Array.isArray(f) || responseId(f) === null), [])
    }))

  it.scoped("2025-03-26/stdio/a cancelled batch element is left out of the array and reaches the upstream", () =>
    Effect.gen(function*() {
      const serve = yield* start(config)
      yield* open(serve, "2025-03-26")
      const log = serve.sandbox.path(upstreamLog)
      yield* serve.send([call("b-slow", "slow", { ms: 600_000 }), call("b-echo", "echo", { message: "kept" })])
      yield* EraLog.until(log, (l) => l.filter((x) => x.method === "tools/call").length === 2)
      yield* serve.send({ method: "notifications/cancelled", params: { requestId: "b-slow" } })
      const replies = yield* serve.frame(arrayWith("b-echo"), "the batch reply")
      assert.deepStrictEqual(replies.map((m) => m.id), ["b-echo"])
      yield* EraLog.until(log, (l) => l.some((x) => x.method === "notifications/cancelled"))
    }))
})

describe.concurrent.each(["2024-11-05", "2025-06-18", "2025-11-25"] as const)("%s", (revision) => {
  it.scoped(`${revision}/stdio/a batch is refused with one -32600 error`, () =>
    Effect.gen(function*() {
      const serve = yield* start(config)
      yield* open(serve, revision)
      yield* serve.send([ping("x-1"), ping("x-2")])
      const refusal = yield* serve.frame((f) => (!Array.isArray(f) && responseId(f) === null ? (f as Message) : undefined), "the refusal")
      assert.strictEqual(error(refusal).code, -32600)
      yield* serve.request("after", "ping")
      yield* serve.end
      const run = yield* serve.exited
      assert.strictEqual(run.code, 0, run.stderr)
      assert.isFalse(run.frames.some((f) => Array.isArray(f) || responseId(f) === "x-1" || responseId(f) === "x-2"), run.lines.join("\n"))
    }))
})
