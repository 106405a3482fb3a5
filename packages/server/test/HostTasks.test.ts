/**
 * Host-side tasks of the 2026-07-28 extension, through the Server over a Backend whose tools the
 * test holds open (Deferreds), on the real engine and an in-memory store.
 */
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import { Backend, type BackendError, type Caller, type ResolvedTool, UnknownName, UpstreamError } from "@mcpx-fx/server/Backend"
import * as HostTasks from "@mcpx-fx/server/HostTasks"
import * as TaskPolicy from "@mcpx-fx/server/TaskPolicy"
import * as HostTasksWhenReady from "@mcpx-fx/server/HostTasksWhenReady"
import { TaskStoreError } from "@mcpx-fx/server/TaskStore"
import * as Server from "@mcpx-fx/server/Server"
import { RequestState } from "@mcpx-fx/server/RequestState"
import * as TestTasks from "@mcpx-fx/testing/server/TestTasks"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { C, errorOf, initialize, meta, req, resultOf } from "./support.js"

const Ext = "io.modelcontextprotocol/tasks"

interface Held {
  /** What each call of a held tool waits for. */
  readonly gate: Deferred.Deferred<void>
  /** Calls the Backend saw, with the caller each came with. */
  readonly calls: Array<{ readonly name: string; readonly caller: Caller }>
  /** Set when a call of `never` was interrupted. */
  interrupted: number
  /** The answer keys each round of `two` came with. */
  readonly answeredRounds: Array<ReadonlyArray<string>>
}

const backendOf = (held: Held) =>
  Layer.succeed(
    Backend,
    Backend.of({
      listTools: () => Effect.succeed({ items: [], failures: [] }),
      listPrompts: () => Effect.succeed({ items: [], failures: [] }),
      listResources: () => Effect.succeed({ items: [], failures: [] }),
      listResourceTemplates: () => Effect.succeed({ items: [], failures: [] }),
      callTool: (caller, name, args) =>
        Effect.suspend((): Effect.Effect<JsonObject, BackendError> => {
          held.calls.push({ name, caller })
          const text = (t: string): JsonObject => ({ content: [{ type: "text", text: t }] })
          switch (name) {
            case "quick":
              return Effect.succeed(text("quick"))
            case "held":
            case "background":
              return Effect.as(Deferred.await(held.gate), text(`${name} ${JSON.stringify(args)}`))
            case "never":
              return Effect.onInterrupt(Effect.never, () => Effect.sync(() => void held.interrupted++))
            case "ask":
              return caller.retry === undefined
                ? Effect.succeed({
                  resultType: "input_required",
                  inputRequests: { who: { method: "elicitation/create", params: { message: "who?", requestedSchema: { type: "object" } } } },
                  requestState: "upstream-state"
                })
                : Effect.succeed(text(`hello ${JSON.stringify(caller.retry.inputResponses)} ${caller.retry.requestState}`))
            case "promoted":
              // An upstream that makes the call a task of its own says so before it runs on.
              return Effect.zipRight(caller.onTask ?? Effect.void, Effect.as(Deferred.await(held.gate), text("promoted")))
            case "two": {
              const answered = Object.keys(caller.retry?.inputResponses ?? {})
              held.answeredRounds.push(answered)
              const ask = (k: string) => ({ method: "elicitation/create", params: { message: k, requestedSchema: { type: "object" } } })
              const open = ["a", "b"].filter((k) => !held.answeredRounds.flat().includes(k))
              return open.length === 0
                ? Effect.succeed(text(`answered ${held.answeredRounds.map((r) => r.join("+")).join(", ")}`))
                : Effect.succeed({ resultType: "input_required", inputRequests: Object.fromEntries(open.map((k) => [k, ask(k)])) })
            }
            case "boom":
              return Effect.fail(new UpstreamError({ server: "fx", method: "tools/call", code: -32050, rpcMessage: "upstream blew up" }))
            default:
              return Effect.fail(new UnknownName({ kind: "tool", name, suggestions: [] }))
          }
        }),
      getPrompt: () => Effect.fail(new UnknownName({ kind: "prompt", name: "", suggestions: [] })),
      readResource: () => Effect.fail(new UnknownName({ kind: "resource", name: "", suggestions: [] })),
      complete: () => Effect.succeed({ completion: { values: [] } }),
      // `held`, `quick` and `promoted` become tasks only by outlasting tasks.after (or saying so); the rest at once.
      taskSupport: (_caller, name) => Effect.succeed(name === "held" || name === "quick" || name === "promoted" ? "forbidden" : "optional")
    })
  )

type Send = (m: JsonRpc.Request) => Effect.Effect<JsonRpc.Response | undefined>

const withTasks = <A, E>(
  f: (t: {
    readonly send: Send
    /** Sends as HttpHost does a tools/call whose header check resolved its tool. */
    readonly sendResolved: (m: JsonRpc.Request, resolved: ResolvedTool) => Effect.Effect<JsonRpc.Response | undefined>
    readonly held: Held
  }) => Effect.Effect<A, E>,
  policy: TaskPolicy.TaskPolicy = TaskPolicy.DefaultPolicy
) =>
  Effect.gen(function*() {
    const held: Held = { gate: yield* Deferred.make<void>(), calls: [], interrupted: 0, answeredRounds: [] }
    return yield* Effect.gen(function*() {
      const server = yield* Server.Server
      const connection = yield* Server.makeConnection("conn-1")
      return yield* f({ send: (m) => server.handle(m, { connection }), sendResolved: (m, resolved) => server.handle(m, { connection, resolved }), held })
    }).pipe(
      Effect.provide(Server.Server.layer.pipe(Layer.provide(backendOf(held)), Layer.provide(TestTasks.layerWith(policy)), Layer.provide(RequestState.layer)))
    )
  })

/** A modern `_meta` that declares the tasks extension (or not), with a session identity. */
const tasksMeta = (declared: boolean, session = "s1"): JsonObject => meta({ [C]: declared ? { extensions: { [Ext]: {} } } : {}, "dev.mcpx/session": session })

const call = (name: string, declared = true, session = "s1", id = 1) =>
  req("tools/call", { name, arguments: { n: id }, _meta: tasksMeta(declared, session) }, id)

const taskReq = (method: string, taskId: string, extra: JsonObject = {}, session = "s1", declared = true) =>
  req(method, { taskId, ...extra, _meta: tasksMeta(declared, session) }, 99)

/** Lets the engine's fibers run until `tasks/get` reads the wanted status (no clock involved). */
const untilStatus = (send: Send, taskId: string, status: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 500; i++) {
      const got = resultOf(yield* send(taskReq("tasks/get", taskId)))
      if (got.status === status) return got
      yield* Effect.yieldNow()
    }
    return assert.fail(`task ${taskId} never reached ${status}`)
  })

describe("host tasks (2026-07-28 extension)", () => {
  it.effect("server/discover advertises the extension, and no v1 capabilities.tasks", () =>
    withTasks(({ send }) =>
      Effect.gen(function*() {
        const caps = resultOf(yield* send(req("server/discover", { _meta: meta() }))).capabilities as JsonObject
        assert.deepStrictEqual((caps.extensions as JsonObject)[Ext], {})
        assert.isUndefined(caps.tasks)
      })
    ))

  it.effect("tasks/* without the extension declared is -32021; tasks/result and tasks/list are -32601", () =>
    withTasks(({ send }) =>
      Effect.gen(function*() {
        for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
          const e = errorOf(yield* send(taskReq(method, "x", method === "tasks/update" ? { inputResponses: {} } : {}, "s1", false)))
          assert.strictEqual(e.code, -32021, method)
        }
        for (const method of ["tasks/result", "tasks/list"]) {
          assert.strictEqual(errorOf(yield* send(taskReq(method, "x"))).code, -32601, method)
        }
      })
    ))

  it("a task id never starts with - (a command line would read it as an option), and ids do not repeat", () => {
    const ids = Array.from({ length: 4_096 }, HostTasks.newTaskId)
    assert.deepStrictEqual(ids.filter((id) => !/^[A-Za-z][A-Za-z0-9_-]{22}$/.test(id)), [])
    assert.strictEqual(new Set(ids).size, ids.length)
  })

  it.effect("a task-supporting tool becomes a flat CreateTaskResult at once, and tasks/get inlines its result", () =>
    withTasks(({ held, send }) =>
      Effect.gen(function*() {
        const created = resultOf(yield* send(call("background")))
        assert.strictEqual(created.resultType, "task")
        assert.strictEqual(created.status, "working")
        assert.isString(created.taskId)
        assert.isAtLeast(Buffer.from(created.taskId as string, "base64url").length, 16)
        assert.match(created.taskId as string, /^[A-Za-z]/)
        assert.strictEqual(created.ttlMs, TaskPolicy.DefaultPolicy.ttlMs)
        assert.strictEqual(created.pollIntervalMs, TaskPolicy.DefaultPolicy.pollIntervalMs)
        for (const k of ["task", "result", "error", "inputRequests", "requestState"]) assert.isFalse(k in created, k)
        const taskId = created.taskId as string
        const working = resultOf(yield* send(taskReq("tasks/get", taskId)))
        assert.strictEqual(working.status, "working")
        assert.strictEqual(working.resultType, "complete")
        assert.isFalse("result" in working)
        yield* Deferred.succeed(held.gate, undefined)
        const done = yield* untilStatus(send, taskId, "completed")
        assert.deepStrictEqual((done.result as JsonObject).content, [{ type: "text", text: "background {\"n\":1}" }])
        assert.isFalse("requestState" in done)
      })
    ))

  it.effect("without the extension the same tool answers in its request, and the upstream never sees the declaration", () =>
    withTasks(({ held, send }) =>
      Effect.gen(function*() {
        yield* Deferred.succeed(held.gate, undefined)
        const plain = resultOf(yield* send(call("background", false)))
        assert.strictEqual(plain.resultType, "complete")
        assert.isUndefined(plain.taskId)
        assert.isArray(plain.content)
      })
    ))

  it.effect("a call that answers within tasks.after is answered in its request; one that outlasts it becomes a task", () =>
    withTasks(({ held, send }) =>
      Effect.gen(function*() {
        const quick = resultOf(yield* send(call("quick")))
        assert.strictEqual(quick.resultType, "complete")
        const pending = yield* Effect.fork(send(call("held", true, "s1", 2)))
        yield* TestClock.adjust(TaskPolicy.DefaultPolicy.afterMs)
        const created = resultOf(yield* pending.await.pipe(Effect.flatten))
        assert.strictEqual(created.resultType, "task")
        yield* Deferred.succeed(held.gate, undefined)
        const done = yield* untilStatus(send, created.taskId as string, "completed")
        assert.deepStrictEqual((done.result as JsonObject).content, [{ type: "text", text: "held {\"n\":2}" }])
      })
    ))

  it.effect("a call the upstream makes a task of its own is the host's task at once, before tasks.after", () =>
    withTasks(({ held, send }) =>
      Effect.gen(function*() {
        // No clock moves: only onTask can make this a task.
        const created = resultOf(yield* send(call("promoted")))
        assert.strictEqual(created.resultType, "task")
        yield* Deferred.succeed(held.gate, undefined)
        const done = yield* untilStatus(send, created.taskId as string, "completed")
        assert.deepStrictEqual((done.result as JsonObject).content, [{ type: "text", text: "promoted" }])
      })
    ))

  it.effect("questions answered one at a time: the task stays input_required with only the unanswered one until both are", () =>
    withTasks(({ held, send }) =>
      Effect.gen(function*() {
        const taskId = resultOf(yield* send(call("two"))).taskId as string
        assert.deepStrictEqual(Object.keys((yield* untilStatus(send, taskId, "input_required")).inputRequests as JsonObject), ["a", "b"])
        const accept = { action: "accept", content: {} }
        yield* send(taskReq("tasks/update", taskId, { inputResponses: { a: accept, stray: accept } }))
        const partly = resultOf(yield* send(taskReq("tasks/get", taskId)))
        assert.strictEqual(partly.status, "input_required")
        assert.deepStrictEqual(Object.keys(partly.inputRequests as JsonObject), ["b"])
        yield* send(taskReq("tasks/update", taskId, { inputResponses: { b: accept } }))
        const done = yield* untilStatus(send, taskId, "completed")
        assert.strictEqual(done.status, "completed")
        // One round per answer, each with only its own key: the stray one was never passed on.
        assert.deepStrictEqual(held.answeredRounds, [[], ["a"], ["b"]])
      })
    ))

  it.effect("a question inside a task makes it input_required; tasks/update runs the next round with the answers and the upstream's state", () =>
    withTasks(({ held, send }) =>
      Effect.gen(function*() {
        const taskId = resultOf(yield* send(call("ask"))).taskId as string
        const asking = yield* untilStatus(send, taskId, "input_required")
        assert.deepStrictEqual(Object.keys(asking.inputRequests as JsonObject), ["who"])
        assert.isFalse("requestState" in asking)
        const ack = resultOf(yield* send(taskReq("tasks/update", taskId, { inputResponses: { who: { action: "accept", content: { name: "Ada" } } } })))
        assert.deepStrictEqual(ack, { resultType: "complete" })
        const done = yield* untilStatus(send, taskId, "completed")
        assert.deepStrictEqual((done.result as JsonObject).content, [
          { type: "text", text: "hello {\"who\":{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}} upstream-state" }
        ])
        // The second round ran detached from the request that made the task.
        const rounds = held.calls.filter((c) => c.name === "ask")
        assert.strictEqual(rounds.length, 2)
        assert.isUndefined(rounds[1]!.caller.notify)
      })
    ))

  // The request's resolution of its tool (the header check's) is its own round's: a round the
  // task runs later, with answers, resolves the tool again, held to the filters as then in force.
  it.effect("a task's first round carries its request's resolution of the tool; a round after tasks/update carries none", () =>
    withTasks(({ held, send, sendResolved }) =>
      Effect.gen(function*() {
        const resolved: ResolvedTool = { inputSchema: { type: "object" } }
        const taskId = resultOf(yield* sendResolved(call("ask"), resolved)).taskId as string
        yield* untilStatus(send, taskId, "input_required")
        yield* send(taskReq("tasks/update", taskId, { inputResponses: { who: { action: "accept", content: { name: "Ada" } } } }))
        yield* untilStatus(send, taskId, "completed")
        const rounds = held.calls.filter((c) => c.name === "ask")
        assert.strictEqual(rounds.length, 2)
        assert.strictEqual(rounds[0]!.caller.resolved, resolved)
        assert.isUndefined(rounds[1]!.caller.resolved)
        // A call that is not a task at once runs in its request, with its resolution.
        resultOf(yield* sendResolved(call("quick", true, "s1", 2), resolved))
        assert.strictEqual(held.calls.find((c) => c.name === "quick")?.caller.resolved, resolved)
      })
    ))

  it.effect("tasks/cancel stops the call and answers an empty ack, again on a terminal task; unknown ids are -32602", () =>
    withTasks(({ held, send }) =>
      Effect.gen(function*() {
        const taskId = resultOf(yield* send(call("never"))).taskId as string
        const ack = resultOf(yield* send(taskReq("tasks/cancel", taskId)))
        for (const k of ["taskId", "status", "result", "error", "inputRequests"]) assert.isFalse(k in ack, k)
        assert.strictEqual(ack.resultType, "complete")
        const cancelled = yield* untilStatus(send, taskId, "cancelled")
        assert.isFalse("result" in cancelled)
        for (let i = 0; i < 50 && held.interrupted === 0; i++) yield* Effect.yieldNow()
        assert.strictEqual(held.interrupted, 1)
        assert.strictEqual(resultOf(yield* send(taskReq("tasks/cancel", taskId))).resultType, "complete")
        assert.strictEqual(errorOf(yield* send(taskReq("tasks/get", "no-such-task"))).code, -32602)
        assert.strictEqual(errorOf(yield* send(taskReq("tasks/cancel", "no-such-task"))).code, -32602)
      })
    ))

  it.effect("another caller's task is unknown to it", () =>
    withTasks(({ send }) =>
      Effect.gen(function*() {
        const taskId = resultOf(yield* send(call("never"))).taskId as string
        for (const method of ["tasks/get", "tasks/cancel"]) {
          assert.strictEqual(errorOf(yield* send(taskReq(method, taskId, {}, "s2"))).code, -32602, method)
        }
        assert.strictEqual(resultOf(yield* send(taskReq("tasks/get", taskId))).status, "working")
      })
    ))

  it.effect("a protocol error fails the task with the error inlined and no result", () =>
    withTasks(({ send }) =>
      Effect.gen(function*() {
        const taskId = resultOf(yield* send(call("boom"))).taskId as string
        const failed = yield* untilStatus(send, taskId, "failed")
        assert.deepStrictEqual(failed.error, { code: -32050, message: "upstream blew up" })
        assert.isFalse("result" in failed)
      })
    ))

  it.effect("past tasks.perCaller a task-only call is refused with -32603, and another caller still gets one", () =>
    withTasks(({ send }) =>
      Effect.gen(function*() {
        assert.strictEqual(resultOf(yield* send(call("never"))).resultType, "task")
        const refused = errorOf(yield* send(call("never", true, "s1", 2)))
        assert.strictEqual(refused.code, -32603)
        assert.match(refused.message, /tasks\.perCaller/)
        assert.strictEqual(resultOf(yield* send(call("never", true, "s2", 3))).resultType, "task")
      }), { ...TaskPolicy.DefaultPolicy, perCaller: 1 }))
})

describe("host tasks (2025-11-25 core tasks)", () => {
  /** A 2025-11-25 (or `version`) session on one connection; `send` goes over it. */
  const legacy = <A, E>(
    f: (
      t: { readonly send: (m: JsonRpc.Request) => Effect.Effect<JsonRpc.Response | undefined>; readonly held: Held; readonly init: JsonObject }
    ) => Effect.Effect<A, E>,
    version = "2025-11-25"
  ) =>
    withTasks(({ held, send }) =>
      Effect.gen(function*() {
        const init = resultOf(yield* send(initialize(version)))
        return yield* f({ send, held, init })
      })
    )

  const get = (method: string, params: JsonObject, id = 50) => req(method, params, id)

  /** Runs `request` to its answer, moving the clock on as tasks/result polls the store. */
  const settled = (send: (m: JsonRpc.Request) => Effect.Effect<JsonRpc.Response | undefined>, request: JsonRpc.Request) =>
    Effect.gen(function*(): Effect.fn.Return<JsonRpc.Response | undefined> {
      const fiber = yield* Effect.fork(send(request))
      for (let i = 0; i < 200; i++) {
        const done = yield* fiber.poll
        if (done._tag === "Some") return yield* done.value
        yield* TestClock.adjust(250)
      }
      return assert.fail("tasks/result never answered")
    })

  it.effect("initialize declares capabilities.tasks to 2025-11-25 only, and tools/list says every tool may be a task", () =>
    Effect.gen(function*() {
      yield* legacy(({ init, send }) =>
        Effect.gen(function*() {
          assert.deepStrictEqual((init.capabilities as JsonObject).tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } })
          assert.deepStrictEqual((init.capabilities as JsonObject).extensions, undefined)
          const tools = resultOf(yield* send(get("tools/list", {}))).tools as ReadonlyArray<JsonObject>
          assert.isTrue(tools.every((t) => (t.execution as JsonObject).taskSupport === "optional"))
        })
      )
      yield* legacy(({ init, send }) =>
        Effect.gen(function*() {
          assert.isUndefined((init.capabilities as JsonObject).tasks)
          assert.strictEqual(errorOf(yield* send(get("tasks/get", { taskId: "x" }))).code, -32601)
        }), "2025-06-18")
    }))

  it.effect("params.task makes any call a task: the nested handle, tasks/get, then tasks/result with the result tied to its task", () =>
    legacy(({ held, send }) =>
      Effect.gen(function*() {
        const created = resultOf(yield* send(get("tools/call", { name: "held", arguments: { n: 7 }, task: { ttl: 60_000 } })))
        const task = created.task as JsonObject
        assert.strictEqual(task.status, "working")
        assert.strictEqual(task.ttl, 60_000)
        assert.strictEqual(task.pollInterval, TaskPolicy.DefaultPolicy.pollIntervalMs)
        assert.isUndefined(task.ttlMs)
        const taskId = String(task.taskId)
        const got = resultOf(yield* send(get("tasks/get", { taskId })))
        assert.strictEqual(got.status, "working")
        assert.isFalse("result" in got)
        yield* Deferred.succeed(held.gate, undefined)
        const result = resultOf(yield* settled(send, get("tasks/result", { taskId })))
        assert.deepStrictEqual(result.content, [{ type: "text", text: "held {\"n\":7}" }])
        assert.deepStrictEqual((result._meta as JsonObject)["io.modelcontextprotocol/related-task"], { taskId })
        const listed = resultOf(yield* send(get("tasks/list", {})))
        assert.deepStrictEqual((listed.tasks as ReadonlyArray<JsonObject>).map((t) => [t.taskId, t.status]), [[taskId, "completed"]])
        assert.strictEqual(errorOf(yield* send(get("tasks/list", { cursor: "nope" }))).code, -32602)
      })
    ))

  it.effect("a failed task's tasks/result is the call's error; tasks/cancel answers the cancelled task, and a finished one is -32602", () =>
    legacy(({ send }) =>
      Effect.gen(function*() {
        const failing = String((resultOf(yield* send(get("tools/call", { name: "boom", arguments: {}, task: {} }))).task as JsonObject).taskId)
        const failed = errorOf(yield* settled(send, get("tasks/result", { taskId: failing })))
        assert.strictEqual(failed.code, -32050)
        assert.strictEqual(failed.message, "upstream blew up")
        const running = String((resultOf(yield* send(get("tools/call", { name: "never", arguments: {}, task: {} }))).task as JsonObject).taskId)
        const cancelled = resultOf(yield* send(get("tasks/cancel", { taskId: running })))
        assert.strictEqual(cancelled.status, "cancelled")
        assert.strictEqual(cancelled.taskId, running)
        assert.strictEqual(errorOf(yield* send(get("tasks/cancel", { taskId: running }))).code, -32602)
        assert.strictEqual(errorOf(yield* settled(send, get("tasks/result", { taskId: running }))).code, -32603)
      })
    ))

  it.effect("another connection's task is unknown to it", () =>
    Effect.gen(function*() {
      const held: Held = { gate: yield* Deferred.make<void>(), calls: [], interrupted: 0, answeredRounds: [] }
      yield* Effect.gen(function*() {
        const server = yield* Server.Server
        const a = yield* Server.makeConnection("conn-a")
        const b = yield* Server.makeConnection("conn-b")
        for (const c of [a, b]) resultOf(yield* server.handle(initialize("2025-11-25"), { connection: c }))
        const created = resultOf(yield* server.handle(get("tools/call", { name: "never", arguments: {}, task: {} }), { connection: a }))
        const taskId = String((created.task as JsonObject).taskId)
        assert.strictEqual(errorOf(yield* server.handle(get("tasks/get", { taskId }), { connection: b })).code, -32602)
        assert.strictEqual(resultOf(yield* server.handle(get("tasks/get", { taskId }), { connection: a })).status, "working")
      }).pipe(Effect.provide(Server.Server.layer.pipe(Layer.provide(backendOf(held)), Layer.provide(TestTasks.layer), Layer.provide(RequestState.layer))))
    }))
})

describe("host tasks whose store could not open (HostTasksWhenReady)", () => {
  it.effect("a modern call still answers in its request; task requests and a 2025-11-25 task say why they cannot be", () =>
    Effect.gen(function*() {
      const held: Held = { gate: yield* Deferred.make<void>(), calls: [], interrupted: 0, answeredRounds: [] }
      const broken = HostTasksWhenReady.whenReady(Effect.fail(new TaskStoreError({ operation: "open tasks.db", reason: "disk full" })))
      yield* Effect.gen(function*() {
        const server = yield* Server.Server
        const connection = yield* Server.makeConnection("conn-1")
        const send = (m: JsonRpc.Request) => server.handle(m, { connection })
        const plain = resultOf(yield* send(call("quick")))
        assert.strictEqual(plain.resultType, "complete")
        assert.deepStrictEqual(plain.content, [{ type: "text", text: "quick" }])
        const refused = errorOf(yield* send(taskReq("tasks/get", "any")))
        assert.strictEqual(refused.code, -32603)
        assert.match(refused.message, /disk full/)
        const legacyConnection = yield* Server.makeConnection("conn-2")
        resultOf(yield* server.handle(initialize("2025-11-25"), { connection: legacyConnection }))
        const noTask = errorOf(yield* server.handle(req("tools/call", { name: "quick", arguments: {}, task: {} }, 3), { connection: legacyConnection }))
        assert.strictEqual(noTask.code, -32603)
        assert.match(noTask.message, /disk full/)
      }).pipe(
        Effect.provide(
          Server.Server.layer.pipe(Layer.provide(backendOf(held)), Layer.provide(Layer.succeed(HostTasks.HostTasks, broken)), Layer.provide(RequestState.layer))
        )
      )
    }))
})
