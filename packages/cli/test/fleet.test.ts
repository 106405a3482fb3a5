/**
 * Issue 28: three daemons (the bundle) on one PostgreSQL task store and NATS, behind a stock nginx
 * with no affinity (`scripts/fleet.mjs`, the `npm run fleet` script), serve 2026-07-28 hosts (the
 * official SDK 2.x client, and raw JSON-RPC for the tasks extension, which no SDK speaks) as one
 * gateway: listings and calls spread over every instance, a question whose retry lands on another
 * instance than its first round, a task made on one instance and polled, answered and cancelled
 * through the others; and an SDK 1.x host's legacy session kept on its instance by nginx's map of
 * the session id's prefix. fleet-kill.test.ts kills an instance under load.
 * Needs PostgreSQL at 127.0.0.1:5432 and NATS at 127.0.0.1:4222 (CI runs both); nginx is installed
 * with apt-get when missing.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { accessLog, accessLogUntil, TheFleet } from "./support/FleetConfig.js"
import { legacyClient, modernClient, textOf } from "./support/FleetHosts.js"
import { endpoint, modernBody, modernHeaders, openSession } from "./support/HttpMcp.js"
import * as RawHttp from "./support/RawHttp.js"
import { firstText, result } from "./support/Replies.js"
import type { Message } from "./support/StdioServe.js"
import { modernHost, pollUntil } from "./support/TaskHosts.js"

/** The one question of an `input_required` task: its key. */
const questionKey = (task: Readonly<Record<string, unknown>>): string => {
  const requests = task.inputRequests
  assert.isObject(requests, JSON.stringify(task))
  const keys = Object.keys(requests as Message)
  assert.lengthOf(keys, 1, JSON.stringify(task))
  return keys[0]!
}

describe("a fleet of three daemons behind nginx", () => {
  // The live clock: the task polls wait on real time between rounds.
  layer(TheFleet.layer(3), { timeout: 120_000, excludeTestServices: true })("fleet", (it) => {
    it.scoped("fleet/modern: SDK 2.x hosts list and call through nginx, every answer right, every instance serving", () =>
      Effect.gen(function*() {
        const { fleet } = yield* TheFleet
        const before = accessLog(fleet).length
        const rounds = yield* Effect.forEach([1, 2, 3, 4], (host) =>
          Effect.gen(function*() {
            const { client } = yield* modernClient(fleet.url)
            const answers: Array<string> = []
            for (let n = 0; n < 10; n++) {
              const listed = yield* Effect.promise(() => client.listTools())
              assert.includeMembers(listed.tools.map((t) => t.name), ["mod__echo", "legacy__ask_name", "up__work"])
              answers.push(textOf(yield* Effect.promise(() => client.callTool({ name: "mod__echo", arguments: { message: `host ${host} call ${n}` } }))))
            }
            return answers
          }), { concurrency: "unbounded" })
        assert.deepStrictEqual(rounds, [1, 2, 3, 4].map((host) => Array.from({ length: 10 }, (_, n) => `host ${host} call ${n}`)))
        // nginx spread them: each instance answered some of the calls, all with 200.
        const calls = (yield* accessLogUntil(fleet, (log) => log.slice(before).filter((l) => l.method === "tools/call").length >= 40, "the 40 calls"))
          .slice(before).filter((l) => l.method === "tools/call")
        assert.deepStrictEqual(calls.filter((l) => l.status !== 200), [])
        const served = new Set(calls.map((l) => l.upstream))
        assert.sameMembers([...served], fleet.info.instances.map((i) => `127.0.0.1:${i.port}`), JSON.stringify(calls))
      }), 120_000)

    it.scoped("fleet/questions: a legacy upstream's question, asked on one instance, is answered by a retry sent to another", () =>
      Effect.gen(function*() {
        const { fleet } = yield* TheFleet
        // The first round goes to i1; the retry carrying the answer, to i2.
        const { client, sent } = yield* modernClient(fleet.mcp("i1"), (body) => (body.includes("\"inputResponses\"") ? fleet.mcp("i2") : undefined))
        const asked = yield* Effect.promise(() => client.callTool({ name: "legacy__ask_name", arguments: {} }))
        assert.strictEqual(textOf(asked), "Hello, Grace!")
        const calls = sent.filter((s) => s.body.includes("\"tools/call\""))
        assert.deepStrictEqual(calls.map((s) => [s.url, s.body.includes("\"inputResponses\"")]), [[fleet.mcp("i1"), false], [fleet.mcp("i2"), true]])
      }), 120_000)

    it.scoped(
      "fleet/tasks: a task made on i1 is polled on i2, answered on i3 and read completed on i2; another made on i3 is cancelled on i1",
      () =>
        Effect.gen(function*() {
          const { fleet } = yield* TheFleet
          const on = (name: string) => modernHost(endpoint(fleet.mcp(name)), "alice")
          const created = result(yield* on("i1")("create", "tools/call", { name: "up__ask", arguments: {} }))
          assert.strictEqual(created.resultType, "task", JSON.stringify(created))
          const taskId = String(created.taskId)
          const get = on("i2")("get", "tasks/get", { taskId })
          const key = questionKey(yield* pollUntil(get, "input_required"))
          const answered = yield* on("i3")("answer", "tasks/update", { taskId, inputResponses: { [key]: { action: "accept", content: { name: "Grace" } } } })
          assert.deepStrictEqual(result(answered), { resultType: "complete" }, JSON.stringify(answered))
          const done = yield* pollUntil(get, "completed", 300)
          assert.deepStrictEqual((done.result as Message).content, [{ type: "text", text: "hello, Grace" }], JSON.stringify(done))
          // A legacy host of the same name reads its result on yet another instance's session.
          const legacy = yield* openSession(endpoint(fleet.mcp("i3")), "2025-11-25", { tasks: { list: {}, cancel: {} } })
          const read = yield* legacy.request("result", "tasks/result", { taskId, _meta: { "dev.mcpx/session": "alice" } })
          assert.strictEqual(firstText(read.body as Message), "hello, Grace", read.text)

          const working = result(yield* on("i3")("work", "tools/call", { name: "up__work", arguments: { ms: 600_000 } }))
          const workId = String(working.taskId)
          assert.deepStrictEqual(result(yield* on("i1")("cancel", "tasks/cancel", { taskId: workId })), { resultType: "complete" })
          yield* pollUntil(on("i2")("get-work", "tasks/get", { taskId: workId }), "cancelled")
          // The listing (a legacy method) from the session on i3 holds both.
          const listed = result((yield* legacy.request("list", "tasks/list", { _meta: { "dev.mcpx/session": "alice" } })).body as Message)
          assert.includeMembers((listed.tasks as ReadonlyArray<Message>).map((t) => t.taskId), [taskId, workId])
        }),
      120_000
    )

    it.scoped(
      "fleet/edge: through nginx, a session id routes only to an instance it names, and the daemons' Host and Origin checks still hold",
      () =>
        Effect.gen(function*() {
          const { fleet } = yield* TheFleet
          const nginx = new URL(fleet.url)
          const own = `127.0.0.1:${nginx.port}`
          const list = JSON.stringify(modernBody("list", "tools/list"))
          // Each request's own query string finds its line in nginx's log among other tests' streams ending.
          const post = (headers: Readonly<Record<string, string>>, body = list, tag = "") =>
            RawHttp.send({
              url: nginx.origin,
              method: "POST",
              path: `/mcp${tag}`,
              headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
              body
            })
          const modern = (headers: Readonly<Record<string, string>>) => post({ ...modernHeaders("tools/list"), ...headers })
          // nginx's own name and origin are the daemons' allowed ones.
          const plain = yield* modern({ host: own, origin: nginx.origin })
          assert.strictEqual(plain.status, 200, plain.text)
          // A DNS-rebinding page reaches nginx under its own name: the daemon behind refuses it.
          const rebound = yield* modern({ host: `evil.example:${nginx.port}` })
          assert.strictEqual(rebound.status, 403, rebound.text)
          const foreign = yield* modern({ host: own, origin: "http://evil.example" })
          assert.strictEqual(foreign.status, 403, foreign.text)
          // Session ids naming no instance, or written to steer nginx elsewhere, go round-robin to an
          // instance, which does not know them (404); none reaches anything but the fleet.
          const tagged = (prefix: string, n: number) =>
            Effect.map(
              accessLogUntil(fleet, (log) => log.filter((l) => l.request.includes(`?${prefix}=`)).length >= n, `${n} ${prefix} requests`),
              (log) => log.filter((l) => l.request.includes(`?${prefix}=`)).map((l) => l.upstream)
            )
          const hostile = ["i9.x", "127.0.0.1:22", "evil.example", "mcpx_all", "i1", ".i1.x", "I1.x", "i1/../x", "http://evil.example/"]
          for (const [n, id] of hostile.entries()) {
            const reply = yield* post(
              { host: own, "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" },
              JSON.stringify({ jsonrpc: "2.0", id: "list", method: "tools/list" }),
              `?hostile=${n}`
            )
            assert.strictEqual(reply.status, 404, `${id}: ${reply.status} ${reply.text}`)
          }
          const routed = yield* tagged("hostile", hostile.length)
          const instances = fleet.info.instances.map((i) => `127.0.0.1:${i.port}`)
          assert.lengthOf(routed, hostile.length)
          for (const upstream of routed) assert.include(instances, upstream)
          // An id that names an instance goes to that one only, known there or not.
          const i3 = `127.0.0.1:${new URL(fleet.mcp("i3")).port}`
          for (let n = 0; n < 3; n++) {
            const forged = yield* post(
              { host: own, "mcp-session-id": "i3.forged", "mcp-protocol-version": "2025-11-25" },
              JSON.stringify({ jsonrpc: "2.0", id: "list", method: "tools/list" }),
              `?forged=${n}`
            )
            assert.strictEqual(forged.status, 404, forged.text)
          }
          assert.deepStrictEqual(yield* tagged("forged", 3), [i3, i3, i3])
        }),
      120_000
    )

    it.scoped("fleet/legacy: an SDK 1.x host's session through nginx stays on the instance that minted it", () =>
      Effect.gen(function*() {
        const { fleet } = yield* TheFleet
        const { client, transport } = yield* legacyClient(fleet.url)
        const owner = fleet.info.instances.find((i) => transport.sessionId?.startsWith(`${i.name}.`) === true)
        assert.isDefined(owner, `the session id ${transport.sessionId} names no instance`)
        for (let n = 0; n < 6; n++) {
          const tools = yield* Effect.promise(() => client.listTools())
          assert.include(tools.tools.map((t) => t.name), "legacy__echo")
          assert.strictEqual(
            textOf(yield* Effect.promise(() => client.callTool({ name: "legacy__echo", arguments: { message: `legacy ${n}` } }))),
            `legacy ${n}`
          )
        }
        assert.strictEqual(textOf(yield* Effect.promise(() => client.callTool({ name: "legacy__ask_name", arguments: {} }))), "Hello, Ada!")
      }), 120_000)
  })
})
