/**
 * Task changes pushed to hosts, over the stdio host and the real engine on an in-memory store:
 * 2025-11-25's `notifications/tasks/status` to the connection whose caller owns the task (and to
 * no other revision), and the extension's `notifications/tasks` on a listen that named the
 * caller's own task. A tool the test holds open (`held`) decides when a task ends.
 */
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Tasks from "@mcpx-fx/protocol/Tasks"
import * as TasksExtension from "@mcpx-fx/protocol/TasksExtension"
import * as TestTasks from "@mcpx-fx/testing/server/TestTasks"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Backend, type BackendError, UnknownName, UpstreamError } from "../src/Backend.js"
import * as Server from "../src/Server.js"
import { RequestState } from "../src/RequestState.js"
import { StdioHost } from "../src/StdioHost.js"
import { C, initialize, meta } from "./support.js"

const Ext = "io.modelcontextprotocol/tasks"
const SubscriptionId = "io.modelcontextprotocol/subscriptionId"

/** A Backend whose `held` waits for the gate, `ask` asks its caller, `boom` fails, and every tool supports tasks. */
const backendOf = (gate: Deferred.Deferred<void>) =>
  Layer.succeed(
    Backend,
    Backend.of({
      listTools: () => Effect.succeed({ items: [], failures: [] }),
      listPrompts: () => Effect.succeed({ items: [], failures: [] }),
      listResources: () => Effect.succeed({ items: [], failures: [] }),
      listResourceTemplates: () => Effect.succeed({ items: [], failures: [] }),
      callTool: (caller, name, args) =>
        Effect.suspend((): Effect.Effect<JsonObject, BackendError> => {
          switch (name) {
            case "held":
              return Effect.as(Deferred.await(gate), { content: [{ type: "text", text: `held ${JSON.stringify(args)}` }] })
            case "ask":
              return caller.questions === undefined
                ? Effect.succeed({ content: [{ type: "text", text: "nobody to ask" }] })
                : caller.questions({ method: "elicitation/create", params: { message: "name?", requestedSchema: { type: "object", properties: {} } } }).pipe(
                  Effect.map((answer): JsonObject => ({ content: [{ type: "text", text: JSON.stringify(answer) }] })),
                  Effect.catchTag("QuestionRefused", (e) => Effect.succeed({ content: [{ type: "text", text: `refused ${e.code}` }] }))
                )
            case "boom":
              return Effect.zipRight(
                Deferred.await(gate),
                Effect.fail(new UpstreamError({ server: "fx", method: "tools/call", code: -32050, rpcMessage: "upstream blew up" }))
              )
            default:
              return Effect.fail(new UnknownName({ kind: "tool", name, suggestions: [] }))
          }
        }),
      getPrompt: () => Effect.fail(new UnknownName({ kind: "prompt", name: "", suggestions: [] })),
      readResource: () => Effect.fail(new UnknownName({ kind: "resource", name: "", suggestions: [] })),
      complete: () => Effect.succeed({ completion: { values: [] } }),
      taskSupport: () => Effect.succeed("optional")
    })
  )

/** One stdio connection to the host. */
interface Conn {
  readonly send: (body: unknown) => Effect.Effect<void>
  /** The next line written, parsed as an object. */
  readonly next: Effect.Effect<JsonObject>
  readonly pending: Effect.Effect<number>
}

/** Lets forked fibers settle (no time passes). */
const settle = Effect.repeatN(Effect.yieldNow(), 100)

/**
 * Runs `f` with a way to open stdio connections to one host (one Server, one task engine) and
 * the gate every `held` call waits for.
 */
const withHost = <A, E>(
  f: (
    t: { readonly connect: (id: string) => Effect.Effect<Conn, never, Scope.Scope>; readonly gate: Deferred.Deferred<void> }
  ) => Effect.Effect<A, E, Scope.Scope>
) =>
  Effect.gen(function*() {
    const gate = yield* Deferred.make<void>()
    const layer = StdioHost.layer.pipe(
      Layer.provide(Server.Server.layer),
      Layer.provide(backendOf(gate)),
      Layer.provide(TestTasks.layer),
      Layer.provide(RequestState.layer)
    )
    return yield* Effect.gen(function*() {
      const host = yield* StdioHost
      const connect = (id: string) =>
        Effect.gen(function*() {
          const input = yield* Queue.unbounded<string>()
          const output = yield* Queue.unbounded<string>()
          yield* Effect.forkScoped(host.serve(Stream.fromQueue(input), (line) => Queue.offer(output, line), { drain: "1 second", connectionId: id }))
          // The connection follows the task engine as it starts; nothing before that could reach it.
          yield* settle
          return {
            send: (body: unknown) => Queue.offer(input, JSON.stringify(body)),
            next: Effect.map(Queue.take(output), (l) => JSON.parse(l) as JsonObject),
            pending: Queue.size(output)
          }
        })
      return yield* f({ connect, gate })
    }).pipe(Effect.provide(layer))
  })

/** A legacy connection initialized at `version`. */
const legacyHost = (connect: (id: string) => Effect.Effect<Conn, never, Scope.Scope>, id: string, version: string) =>
  Effect.gen(function*() {
    const c = yield* connect(id)
    yield* c.send(initialize(version))
    assert.strictEqual(((yield* c.next).result as JsonObject).protocolVersion, version)
    yield* c.send(JsonRpc.notification("notifications/initialized"))
    return c
  })

/** A 2025-11-25 task-augmented `tools/call`; its task id. */
const legacyTask = (c: Conn, id: number, name = "held", params: JsonObject = {}) =>
  Effect.gen(function*() {
    yield* c.send(JsonRpc.request(id, "tools/call", { name, arguments: { id }, task: {}, ...params }))
    const reply = yield* c.next
    assert.strictEqual(reply.id, id)
    const task = (reply.result as JsonObject).task as JsonObject
    assert.strictEqual(task.status, "working")
    return task.taskId as string
  })

/** A modern `_meta` declaring the tasks extension (or not), with a session identity. */
const tasksMeta = (declared: boolean, session: string): JsonObject => meta({ [C]: declared ? { extensions: { [Ext]: {} } } : {}, "dev.mcpx/session": session })

/** A modern `tools/call` that becomes a task at once (every tool supports tasks); its task id. */
const modernTask = (c: Conn, id: number, session: string) =>
  Effect.gen(function*() {
    yield* c.send(JsonRpc.request(id, "tools/call", { name: "held", arguments: { id }, _meta: tasksMeta(true, session) }))
    const reply = yield* c.next
    assert.strictEqual(reply.id, id)
    assert.strictEqual((reply.result as JsonObject).resultType, "task")
    return (reply.result as JsonObject).taskId as string
  })

const listen = (id: string, taskIds: ReadonlyArray<string>, session: string, declared = true) =>
  JsonRpc.request(id, "subscriptions/listen", { notifications: { taskIds: [...taskIds] }, _meta: tasksMeta(declared, session) })

const decodes = <A, I>(schema: Schema.Schema<A, I>, u: unknown) => assert.isTrue(Schema.is(schema)(u), JSON.stringify(u))

/** Lines from `c` until `done` holds of those read so far. */
const readUntil = (c: Conn, done: (seen: ReadonlyArray<JsonObject>) => boolean) =>
  Effect.gen(function*() {
    const seen: Array<JsonObject> = []
    while (!done(seen)) seen.push(yield* c.next)
    return seen
  })

describe("a 2025-11-25 task's questions over stdio", () => {
  it.scoped("2025-11-25/stdio/a task's question is asked on the connection, tied to its task, which reads input_required until it is answered", () =>
    withHost(({ connect }) =>
      Effect.gen(function*() {
        const c = yield* legacyHost(connect, "q", "2025-11-25")
        yield* c.send(JsonRpc.request(1, "tools/call", { name: "ask", arguments: {}, task: {} }))
        // The question may come before the task's own answer: the call runs as soon as it is made.
        const seen = yield* readUntil(c, (s) => s.some((m) => m.id === 1) && s.some((m) => m.method === "elicitation/create"))
        const taskId = ((seen.find((m) => m.id === 1)?.result as JsonObject).task as JsonObject).taskId
        const question = seen.find((m) => m.method === "elicitation/create")!
        assert.deepStrictEqual(((question.params as JsonObject)._meta as JsonObject)[Tasks.RelatedTaskKey], { taskId })
        yield* c.send(JsonRpc.request(2, "tasks/get", { taskId }))
        const got = (yield* readUntil(c, (s) => s.some((m) => m.id === 2))).find((m) => m.id === 2)!
        assert.strictEqual((got.result as JsonObject).status, "input_required")
        yield* c.send({ jsonrpc: "2.0", id: question.id, result: { action: "accept", content: { name: "Ada" } } })
        yield* c.send(JsonRpc.request(3, "tasks/result", { taskId }))
        const done = (yield* readUntil(c, (s) => s.some((m) => m.id === 3))).find((m) => m.id === 3)!
        assert.include(JSON.stringify((done.result as JsonObject).content), "Ada")
      })
    ))
})

describe("notifications/tasks/status (2025-11-25 core tasks)", () => {
  it.scoped("2025-11-25/stdio/a host is told its own task's change, and not another connection's", () =>
    withHost(({ connect, gate }) =>
      Effect.gen(function*() {
        const a = yield* legacyHost(connect, "stdio-a", "2025-11-25")
        const b = yield* legacyHost(connect, "stdio-b", "2025-11-25")
        const mine = yield* legacyTask(a, 1)
        const theirs = yield* legacyTask(b, 1)
        yield* Deferred.succeed(gate, undefined)
        for (const [c, taskId] of [[a, mine], [b, theirs]] as const) {
          const n = yield* c.next
          assert.strictEqual(n.method, "notifications/tasks/status")
          assert.isUndefined(n.id)
          const params = n.params as JsonObject
          decodes(Tasks.TaskStatusNotificationParams, params)
          assert.strictEqual(params.taskId, taskId)
          assert.strictEqual(params.status, "completed")
          // 2025-11-25's names, not the extension's.
          assert.isNumber(params.ttl)
          assert.isUndefined(params.ttlMs)
        }
        yield* settle
        assert.strictEqual(yield* a.pending, 0)
        assert.strictEqual(yield* b.pending, 0)
      })
    ))

  it.scoped("2025-11-25/stdio/a failed task is told as tasks/get answers it", () =>
    withHost(({ connect, gate }) =>
      Effect.gen(function*() {
        const a = yield* legacyHost(connect, "stdio-a", "2025-11-25")
        const failing = yield* legacyTask(a, 1, "boom")
        yield* Deferred.succeed(gate, undefined)
        const failed = (yield* a.next).params as JsonObject
        assert.strictEqual(failed.taskId, failing)
        assert.strictEqual(failed.status, "failed")
        yield* a.send(JsonRpc.request(2, "tasks/get", { taskId: failing }))
        assert.deepStrictEqual((yield* a.next).result, failed)

        yield* settle
        assert.strictEqual(yield* a.pending, 0)
      })
    ))

  it.scoped("2025-11-25/stdio/a task the host cancels is told as cancelled", () =>
    withHost(({ connect }) =>
      Effect.gen(function*() {
        const a = yield* legacyHost(connect, "stdio-a", "2025-11-25")
        const taskId = yield* legacyTask(a, 1)
        yield* a.send(JsonRpc.request(2, "tasks/cancel", { taskId }))
        const both = [yield* a.next, yield* a.next]
        const reply = both.find((m) => m.id === 2)
        const n = both.find((m) => m.method === "notifications/tasks/status")
        assert.strictEqual(((reply?.result) as JsonObject).status, "cancelled")
        assert.deepStrictEqual(n?.params, reply?.result)
        yield* settle
        assert.strictEqual(yield* a.pending, 0)
      })
    ))

  for (const version of ["2024-11-05", "2025-06-18"]) {
    it.scoped(`${version}/stdio/a host of a revision without core tasks is never told`, () =>
      withHost(({ connect, gate }) =>
        Effect.gen(function*() {
          const a = yield* legacyHost(connect, "stdio-a", version)
          // mcpx-fx runs the task all the same; only 2025-11-25 hosts hear of it.
          yield* legacyTask(a, 1)
          yield* Deferred.succeed(gate, undefined)
          yield* settle
          assert.strictEqual(yield* a.pending, 0)
        })
      ))
  }
})

describe("notifications/tasks on subscriptions/listen (2026-07-28 tasks extension)", () => {
  it.scoped("2026-07-28/stdio/a listen follows the caller's own task: its state now, then its end, tagged", () =>
    withHost(({ connect, gate }) =>
      Effect.gen(function*() {
        const c = yield* connect("stdio-m")
        const mine = yield* modernTask(c, 1, "s1")
        const theirs = yield* modernTask(c, 2, "s2")
        yield* c.send(listen("L", [mine, theirs, "nope"], "s1"))
        const ack = yield* c.next
        assert.strictEqual(ack.method, "notifications/subscriptions/acknowledged")
        // Another caller's task is left out as an unknown one.
        assert.deepStrictEqual((ack.params as JsonObject).notifications, { taskIds: [mine] })

        const now = yield* c.next
        assert.strictEqual(now.method, "notifications/tasks")
        const { _meta: tag, ...working } = now.params as JsonObject
        decodes(TasksExtension.TaskNotificationParams, working)
        assert.strictEqual(working.taskId, mine)
        assert.strictEqual(working.status, "working")
        assert.deepStrictEqual(tag, { [SubscriptionId]: "L" })

        yield* Deferred.succeed(gate, undefined)
        const end = yield* c.next
        assert.strictEqual(end.method, "notifications/tasks")
        const { _meta, ...completed } = end.params as JsonObject
        assert.deepStrictEqual(_meta, { [SubscriptionId]: "L" })
        decodes(TasksExtension.TaskNotificationParams, completed)
        assert.strictEqual(completed.status, "completed")
        assert.deepStrictEqual((completed.result as JsonObject).content, [{ type: "text", text: "held {\"id\":1}" }])
        // Exactly what tasks/get answers, but for the method's own resultType.
        yield* c.send(JsonRpc.request(3, "tasks/get", { taskId: mine, _meta: tasksMeta(true, "s1") }))
        assert.deepStrictEqual((yield* c.next).result, { ...completed, resultType: "complete" })
        // The other caller's task ended too, and nothing of it came on this listen.
        yield* settle
        assert.strictEqual(yield* c.pending, 0)
      })
    ))

  it.scoped("2026-07-28/stdio/a listen that names only another caller's task acknowledges none and hears nothing", () =>
    withHost(({ connect, gate }) =>
      Effect.gen(function*() {
        const c = yield* connect("stdio-m")
        const theirs = yield* modernTask(c, 1, "s2")
        yield* c.send(listen("L", [theirs], "s1"))
        assert.deepStrictEqual(((yield* c.next).params as JsonObject).notifications, { taskIds: [] })
        yield* Deferred.succeed(gate, undefined)
        yield* settle
        assert.strictEqual(yield* c.pending, 0)
      })
    ))

  it.scoped("2026-07-28/stdio/taskIds from a listen that did not declare the extension is -32021, and nothing follows", () =>
    withHost(({ connect, gate }) =>
      Effect.gen(function*() {
        const c = yield* connect("stdio-m")
        const mine = yield* modernTask(c, 1, "s1")
        yield* c.send(listen("L", [mine], "s1", false))
        const refused = yield* c.next
        assert.strictEqual(refused.id, "L")
        assert.strictEqual((refused.error as JsonObject).code, -32021)
        yield* Deferred.succeed(gate, undefined)
        yield* settle
        assert.strictEqual(yield* c.pending, 0)
      })
    ))
})
