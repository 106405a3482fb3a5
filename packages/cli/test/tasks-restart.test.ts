/**
 * Tasks outlive the daemon that ran them, through the bundle: a 2025-11-25 host makes two tasks
 * (one finished, one still running), the daemon stops, a new one starts on the same state dir,
 * and the host reads the finished task's result and the running one as failed, saying why —
 * never `working` for ever. Another caller still cannot see them.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as DaemonProcess from "./support/DaemonProcess.js"
import { endpoint, openSession } from "./support/HttpMcp.js"
import { error, firstText } from "./support/Replies.js"
import { sandbox } from "./support/Sandbox.js"
import { era, type Message } from "./support/StdioServe.js"

const owner = (who: string) => ({ _meta: { "dev.mcpx/session": who } })
const resultOf = (m: Message): Message => {
  assert.isObject(m.result, JSON.stringify(m))
  return m.result as Message
}

describe("tasks across a daemon restart", () => {
  it.scoped("tasks/restart/a finished task keeps its result and a running one reads failed, on a new daemon", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const config = yield* sb.writeJson("mcpx.json", { mcpServers: { slow: era("dual") } })
      const stateDir = sb.path("state")
      const first = yield* Effect.orDie(DaemonProcess.start(sb, { config, stateDir }))
      const before = yield* openSession(endpoint(first.info.mcp), "2025-11-25")
      const task = (id: number, ms: number) =>
        Effect.map(before.request(id, "tools/call", { name: "slow__slow", arguments: { ms }, task: {}, ...owner("alice") }), (r) =>
          String(((resultOf(r.body as Message).task) as Message).taskId))
      const done = yield* task(1, 0)
      const finished = yield* before.request(2, "tasks/result", { taskId: done, ...owner("alice") })
      assert.strictEqual(firstText(finished.body as Message), "slept 0ms")
      const running = yield* task(3, 600_000)
      assert.strictEqual(resultOf((yield* before.request(4, "tasks/get", { taskId: running, ...owner("alice") })).body as Message).status, "working")
      assert.strictEqual(yield* first.stop("SIGTERM"), 0)

      const second = yield* Effect.orDie(DaemonProcess.start(sb, { config, stateDir }))
      const after = yield* openSession(endpoint(second.info.mcp), "2025-11-25")
      const kept = yield* after.request(5, "tasks/result", { taskId: done, ...owner("alice") })
      assert.strictEqual(firstText(kept.body as Message), "slept 0ms")
      const gone = resultOf((yield* after.request(6, "tasks/get", { taskId: running, ...owner("alice") })).body as Message)
      assert.strictEqual(gone.status, "failed")
      const why = error((yield* after.request(7, "tasks/result", { taskId: running, ...owner("alice") })).body as Message)
      assert.strictEqual(why.code, -32603)
      // A clean stop cuts the call short as it does every call in flight, and the task says so.
      assert.match(why.message, /shutting down/)
      assert.strictEqual(error((yield* after.request(8, "tasks/get", { taskId: done, ...owner("mallory") })).body as Message).code, -32602)
    }))
})
