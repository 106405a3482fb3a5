/**
 * Issue 28: one of three daemons behind nginx (`scripts/fleet.mjs`) SIGKILLed while eight SDK 2.x
 * hosts loop calls through nginx. Every call is counted: answered right, failed retryably (a
 * connection error, nginx's 502, a JSON-RPC error that says to call again), wrong or lost (both
 * must be 0). Then what the dead instance held: its task reads `failed` from the others (at the
 * latest once its lease in the task store runs out), its pending question answers a retry with an
 * error that says to call again; the survivors serve on, and a fourth daemon with the same settings
 * joins and reads the fleet's tasks. docs/deploy.md quotes the counts of runs of this test.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FleetConfig from "./support/FleetConfig.js"
import * as Fleet from "./support/Fleet.js"
import { modernClient, textOf } from "./support/FleetHosts.js"
import * as FleetLoad from "./support/FleetLoad.js"
import { endpoint, modernRequest, openSession } from "./support/HttpMcp.js"
import { error, result } from "./support/Replies.js"
import { sandbox } from "./support/Sandbox.js"
import type { Message } from "./support/StdioServe.js"
import { modernHost, pollUntil } from "./support/TaskHosts.js"

const Elicitation = { elicitation: {} }

describe("an instance of the fleet killed under load", () => {
  it.scopedLive(
    "fleet/kill: SIGKILL under load loses nothing; its task reads failed, its question says call again; the survivors serve and a new instance joins",
    () =>
      Effect.gen(function*() {
        const sb = yield* sandbox
        const config = yield* FleetConfig.config(sb)
        const fleet = yield* Effect.orDie(Fleet.start(sb, config, 3))

        // What i2 holds when it dies: a running task and a pending question.
        const alice = (name: string) => modernHost(endpoint(name === "nginx" ? fleet.url : fleet.mcp(name)), "alice")
        const task = result(yield* alice("i2")("work", "tools/call", { name: "up__work", arguments: { ms: 600_000 } }))
        assert.strictEqual(task.resultType, "task", JSON.stringify(task))
        const taskId = String(task.taskId)
        const asked = yield* modernRequest(endpoint(fleet.mcp("i2")), "ask", "tools/call", { name: "legacy__ask_name", arguments: {} }, Elicitation)
        const question = result(asked.body as Message)
        assert.strictEqual(question.resultType, "input_required", asked.text)
        const key = Object.keys(question.inputRequests as Message)[0]!
        // And a task waiting for its person's answer.
        const waiting = String(result(yield* alice("i2")("ask-task", "tools/call", { name: "up__ask", arguments: {} })).taskId)
        const waitingKey = Object.keys(
          (yield* pollUntil(alice("i1")("ask-get", "tasks/get", { taskId: waiting }), "input_required")).inputRequests as Message
        )[0]!
        // And a legacy session, minted by i2 (its id names it).
        const session = yield* openSession(endpoint(fleet.mcp("i2")), "2025-11-25")

        // And one a survivor ran to its end.
        const quick = String(result(yield* alice("i1")("quick", "tools/call", { name: "up__work", arguments: { ms: 0 } })).taskId)

        const load = yield* FleetLoad.start(fleet.url, "mod__echo", 8)
        yield* load.rightAtLeast(80)
        yield* fleet.kill("i2")
        const atKill = yield* load.counts
        yield* load.rightAtLeast(atKill.right + 160)
        const counts = yield* load.stop
        assert.deepStrictEqual(counts.wrong, [], JSON.stringify(counts))
        assert.strictEqual(counts.lost, 0, JSON.stringify(counts))
        assert.isAtLeast(counts.right, 240)

        // Its waiting task, answered on a survivor: the answer cannot reach i2, so the task fails at once,
        // long before i2's lease in the task store lapses.
        yield* alice("i3")("answer", "tasks/update", { taskId: waiting, inputResponses: { [waitingKey]: { action: "accept", content: { name: "Ada" } } } })
        const orphaned = result(yield* alice("i1")("answered-get", "tasks/get", { taskId: waiting }))
        assert.strictEqual(orphaned.status, "failed", JSON.stringify(orphaned))

        // Its running task, from the others: failed, once its lease in the task store lapses (30 s).
        const failed = yield* pollUntil(alice("i1")("get", "tasks/get", { taskId }), "failed", 600)
        assert.strictEqual((failed.error as Message | undefined)?.code, -32603, JSON.stringify(failed))
        assert.match(String((failed.error as Message | undefined)?.message), /stopped while the task ran/, JSON.stringify(failed))
        assert.strictEqual(result(yield* alice("i3")("get-3", "tasks/get", { taskId })).status, "failed")

        // The survivors serve through nginx, with nothing restarted.
        const { client } = yield* modernClient(fleet.url)
        for (let n = 0; n < 12; n++) {
          assert.strictEqual(textOf(yield* Effect.promise(() => client.callTool({ name: "mod__echo", arguments: { message: `after ${n}` } }))), `after ${n}`)
        }

        // A fourth daemon with the same settings joins: it serves on its own port and reads the fleet's tasks.
        const joined = yield* Effect.orDie(fleet.join("i4"))
        const fourth = modernHost(endpoint(joined.info.mcp), "alice")
        assert.strictEqual(result(yield* fourth("get-4", "tasks/get", { taskId })).status, "failed")
        const finished = yield* pollUntil(fourth("quick-4", "tasks/get", { taskId: quick }), "completed", 200)
        assert.deepStrictEqual((finished.result as Message).content, [{ type: "text", text: "worked 0ms" }], JSON.stringify(finished))
        const { client: onFourth } = yield* modernClient(joined.info.mcp)
        assert.strictEqual(textOf(yield* Effect.promise(() => onFourth.callTool({ name: "mod__echo", arguments: { message: "joined" } }))), "joined")

        // Its question: the retry, wherever it lands, is told to call again.
        const retry = yield* modernRequest(endpoint(fleet.mcp("i3")), "retry", "tools/call", {
          name: "legacy__ask_name",
          arguments: {},
          inputResponses: { [key]: { action: "accept", content: { name: "Ada" } } },
          requestState: question.requestState
        }, Elicitation)
        const refused = error(retry.body as Message)
        assert.match(refused.message, /again/i, retry.text)

        // Its legacy session through nginx: only i2 may serve it, so the session ended with it, and the
        // client is told so as a daemon tells of an ended session (404: initialize again).
        assert.isTrue(session.id.startsWith("i2."), session.id)
        const orphan = yield* endpoint(fleet.url).post({ jsonrpc: "2.0", id: "orphan", method: "tools/list" }, { headers: session.headers })
        assert.strictEqual(orphan.status, 404, orphan.text)
        assert.match(error(orphan.body as Message).message, /initialize again/, orphan.text)
      }),
    180_000
  )
})
