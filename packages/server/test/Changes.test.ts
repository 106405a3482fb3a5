/**
 * Change delivery over the stdio host, driven through a fake Backend whose change hub the test
 * publishes to: legacy list_changed after initialize, resources/subscribe and updates, and the
 * modern subscriptions/listen (acknowledgement first, tagging, filter, cancel, end of input).
 */
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { type Change, UnknownName } from "../src/Backend.js"
import * as Server from "../src/Server.js"
import { RequestState } from "../src/RequestState.js"
import { StdioHost } from "../src/StdioHost.js"
import { initialize, Legacy, makeBackend, meta } from "./support.js"
import * as TestTasks from "@mcpx-fx/testing/server/TestTasks"

const SubscriptionId = "io.modelcontextprotocol/subscriptionId"
const Watched = "mcpx://fx/file:///a.txt"

interface Harness {
  readonly send: (body: unknown) => Effect.Effect<void>
  readonly eof: Effect.Effect<void>
  /** The next line written, parsed as an object. */
  readonly next: Effect.Effect<JsonObject>
  readonly pending: Effect.Effect<number>
  readonly publish: (change: Change) => Effect.Effect<void>
  /** URIs the Backend was asked to watch, and those whose watch ended. */
  readonly watching: ReadonlyArray<string>
  readonly ended: ReadonlyArray<string>
  readonly served: Fiber.Fiber<void>
}

/** Lets forked fibers run until `cond` holds (no time passes). */
const until = (cond: () => boolean): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (let i = 0; i < 1000 && !cond(); i++) yield* Effect.yieldNow()
    assert.isTrue(cond(), "condition never held")
  })

/** Lets forked fibers settle. */
const settle = Effect.repeatN(Effect.yieldNow(), 50)

const stdio = <A, E>(f: (h: Harness) => Effect.Effect<A, E>, options: Server.ServerOptions = Server.DefaultOptions) =>
  Effect.gen(function*() {
    const hub = yield* PubSub.unbounded<Change>()
    const watching: Array<string> = []
    const ended: Array<string> = []
    let subscribed = 0
    const backend = makeBackend({
      changes: {
        changes: Effect.tap(PubSub.subscribe(hub), () => Effect.sync(() => void subscribed++)),
        watchResource: (_, uri) =>
          uri === Watched
            ? Effect.acquireRelease(Effect.sync(() => void watching.push(uri)), () => Effect.sync(() => void ended.push(uri)))
            : Effect.fail(new UnknownName({ kind: "resource", name: uri, suggestions: [] }))
      }
    })
    const layer = StdioHost.layer.pipe(
      Layer.provide(Server.Server.layerWith(options)),
      Layer.provide(backend.layer),
      Layer.provide(TestTasks.layer),
      Layer.provide(RequestState.layer)
    )
    return yield* Effect.gen(function*() {
      const host = yield* StdioHost
      const input = yield* Queue.unbounded<string | null>()
      const output = yield* Queue.unbounded<string>()
      const served = yield* Effect.fork(
        host.serve(
          Stream.fromQueue(input).pipe(Stream.takeWhile((l) => l !== null), Stream.map((l) => l ?? "")),
          (line) => Queue.offer(output, line),
          { drain: "1 hour", connectionId: "stdio-changes" }
        )
      )
      // The host subscribes to the hub as it starts; nothing published before that could reach it.
      yield* until(() => subscribed > 0)
      return yield* f({
        send: (body) => Queue.offer(input, JSON.stringify(body)),
        eof: Queue.offer(input, null),
        next: Effect.map(Queue.take(output), (l) => JSON.parse(l) as JsonObject),
        pending: Queue.size(output),
        publish: (change) => Effect.asVoid(PubSub.publish(hub, change)),
        watching,
        ended,
        served
      })
    }).pipe(Effect.provide(layer))
  })

const request = (id: JsonRpc.RequestId, method: string, params?: JsonObject) => JsonRpc.request(id, method, params)

/** Initializes the connection at `version` and sends `notifications/initialized`. */
const opened = (h: Harness, version: string) =>
  Effect.gen(function*() {
    yield* h.send(initialize(version, {}, 0))
    const init = yield* h.next
    yield* h.send(JsonRpc.notification("notifications/initialized"))
    return init
  })

const listen = (id: JsonRpc.RequestId, notifications: JsonObject) => request(id, "subscriptions/listen", { notifications, _meta: meta() })

describe("legacy stdio: list_changed after initialize", () => {
  for (const version of Legacy) {
    it.effect(`${version}/stdio/list_changed reaches a client told listChanged`, () =>
      stdio((h) =>
        Effect.gen(function*() {
          const init = yield* opened(h, version)
          const caps = (init.result as JsonObject).capabilities as JsonObject
          assert.deepStrictEqual(caps.tools, { listChanged: true })
          assert.deepStrictEqual(caps.prompts, { listChanged: true })
          assert.deepStrictEqual(caps.resources, { subscribe: true, listChanged: true })
          yield* h.publish({ _tag: "ToolsListChanged" })
          assert.deepStrictEqual(yield* h.next, { jsonrpc: "2.0", method: "notifications/tools/list_changed" })
          yield* h.publish({ _tag: "PromptsListChanged" })
          assert.strictEqual((yield* h.next).method, "notifications/prompts/list_changed")
          yield* h.publish({ _tag: "ResourcesListChanged" })
          assert.strictEqual((yield* h.next).method, "notifications/resources/list_changed")
        })
      ))
  }

  it.effect("2025-11-25/stdio/nothing is forwarded before notifications/initialized", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* h.send(initialize("2025-11-25", {}, 0))
        yield* h.next
        yield* h.publish({ _tag: "ToolsListChanged" })
        yield* settle
        assert.strictEqual(yield* h.pending, 0)
        yield* h.send(JsonRpc.notification("notifications/initialized"))
        yield* settle
        yield* h.publish({ _tag: "PromptsListChanged" })
        assert.strictEqual((yield* h.next).method, "notifications/prompts/list_changed")
      })
    ))

  it.effect("2025-11-25/stdio/a list not declared listChanged is not forwarded", () =>
    stdio(
      (h) =>
        Effect.gen(function*() {
          const init = yield* opened(h, "2025-11-25")
          assert.deepStrictEqual(((init.result as JsonObject).capabilities as JsonObject).prompts, {})
          yield* h.publish({ _tag: "PromptsListChanged" })
          yield* h.publish({ _tag: "ToolsListChanged" })
          assert.strictEqual((yield* h.next).method, "notifications/tools/list_changed")
        }),
      { ...Server.DefaultOptions, capabilities: { tools: { listChanged: true }, prompts: {}, resources: {} } }
    ))

  it.effect("2026-07-28/stdio/a modern client that never initialized hears no legacy list_changed", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* h.publish({ _tag: "ToolsListChanged" })
        yield* h.send(request(1, "tools/list", { _meta: meta() }))
        const reply = yield* h.next
        assert.strictEqual(reply.id, 1)
        assert.strictEqual(yield* h.pending, 0)
      })
    ))
})

describe("legacy stdio: resources/subscribe", () => {
  it.effect("2025-11-25/stdio/resources/updated only for subscribed URIs", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-11-25")
        yield* h.send(request(1, "resources/subscribe", { uri: Watched }))
        assert.deepStrictEqual(yield* h.next, { jsonrpc: "2.0", id: 1, result: {} })
        assert.deepStrictEqual(h.watching, [Watched])
        yield* h.publish({ _tag: "ResourceUpdated", uri: "mcpx://fx/file:///other.txt" })
        yield* h.publish({ _tag: "ResourceUpdated", uri: Watched })
        assert.deepStrictEqual(yield* h.next, {
          jsonrpc: "2.0",
          method: "notifications/resources/updated",
          params: { uri: Watched }
        })
      })
    ))

  it.effect("2025-06-18/stdio/subscribing twice is one subscription, and unsubscribe ends it", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-06-18")
        yield* h.send(request(1, "resources/subscribe", { uri: Watched }))
        yield* h.next
        yield* h.send(request(2, "resources/subscribe", { uri: Watched }))
        assert.strictEqual((yield* h.next).id, 2)
        assert.deepStrictEqual(h.watching, [Watched])
        yield* h.send(request(3, "resources/unsubscribe", { uri: Watched }))
        assert.deepStrictEqual(yield* h.next, { jsonrpc: "2.0", id: 3, result: {} })
        assert.deepStrictEqual(h.ended, [Watched])
        yield* h.publish({ _tag: "ResourceUpdated", uri: Watched })
        yield* h.publish({ _tag: "ToolsListChanged" })
        assert.strictEqual((yield* h.next).method, "notifications/tools/list_changed")
      })
    ))

  it.effect("2024-11-05/stdio/subscribing to a resource nobody offers is -32002", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2024-11-05")
        yield* h.send(request(1, "resources/subscribe", { uri: "mcpx://nowhere/x" }))
        const reply = yield* h.next
        assert.strictEqual((reply.error as JsonObject).code, -32002)
        assert.deepStrictEqual(h.watching, [])
      })
    ))

  it.effect("2025-11-25/stdio/subscriptions end with the connection", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* opened(h, "2025-11-25")
        yield* h.send(request(1, "resources/subscribe", { uri: Watched }))
        yield* h.next
        yield* h.eof
        yield* Fiber.join(h.served)
        assert.deepStrictEqual(h.ended, [Watched])
      })
    ))

  it.effect("2025-11-25/stdio/resources/subscribe is -32601 where subscribe is not declared", () =>
    stdio(
      (h) =>
        Effect.gen(function*() {
          yield* opened(h, "2025-11-25")
          yield* h.send(request(1, "resources/subscribe", { uri: Watched }))
          assert.strictEqual(((yield* h.next).error as JsonObject).code, -32601)
        }),
      { ...Server.DefaultOptions, capabilities: { tools: {}, resources: {} } }
    ))
})

describe("modern stdio: subscriptions/listen", () => {
  it.effect("2026-07-28/subscriptions/listen delivers tools list_changed", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* h.send(listen("listen-1", { toolsListChanged: true }))
        assert.deepStrictEqual(yield* h.next, {
          jsonrpc: "2.0",
          method: "notifications/subscriptions/acknowledged",
          params: { notifications: { toolsListChanged: true }, _meta: { [SubscriptionId]: "listen-1" } }
        })
        yield* h.publish({ _tag: "PromptsListChanged" })
        yield* h.publish({ _tag: "ToolsListChanged" })
        assert.deepStrictEqual(yield* h.next, {
          jsonrpc: "2.0",
          method: "notifications/tools/list_changed",
          params: { _meta: { [SubscriptionId]: "listen-1" } }
        })
      })
    ))

  it.effect("2026-07-28/subscriptions/listen delivers resources/updated for its resourceSubscriptions", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* h.send(listen(7, { resourceSubscriptions: [Watched, "mcpx://nowhere/x"], promptsListChanged: true }))
        const ack = yield* h.next
        // The one URI nobody can watch is left out, for the client to notice.
        assert.deepStrictEqual((ack.params as JsonObject).notifications, { promptsListChanged: true, resourceSubscriptions: [Watched] })
        assert.deepStrictEqual(h.watching, [Watched])
        yield* h.publish({ _tag: "ResourceUpdated", uri: "mcpx://fx/file:///other.txt" })
        yield* h.publish({ _tag: "ResourceUpdated", uri: Watched })
        assert.deepStrictEqual(yield* h.next, {
          jsonrpc: "2.0",
          method: "notifications/resources/updated",
          params: { uri: Watched, _meta: { [SubscriptionId]: 7 } }
        })
      })
    ))

  it.effect("2026-07-28/subscriptions/listen acknowledges only what mcpx-fx declares", () =>
    stdio(
      (h) =>
        Effect.gen(function*() {
          yield* h.send(listen("l", { toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: [Watched], taskIds: ["t"] }))
          const ack = yield* h.next
          assert.deepStrictEqual((ack.params as JsonObject).notifications, { toolsListChanged: true })
          assert.deepStrictEqual(h.watching, [])
        }),
      { ...Server.DefaultOptions, capabilities: { tools: { listChanged: true }, prompts: {}, resources: {} } }
    ))

  it.effect("2026-07-28/subscriptions/listen ends on notifications/cancelled, without a reply", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* h.send(listen("listen-1", { toolsListChanged: true, resourceSubscriptions: [Watched] }))
        yield* h.next
        yield* h.send(JsonRpc.notification("notifications/cancelled", { requestId: "listen-1" }))
        yield* until(() => h.ended.length === 1)
        assert.deepStrictEqual(h.ended, [Watched])
        yield* h.publish({ _tag: "ToolsListChanged" })
        yield* h.send(request(2, "tools/list", { _meta: meta() }))
        assert.strictEqual((yield* h.next).id, 2)
        assert.strictEqual(yield* h.pending, 0)
      })
    ))

  it.effect("2026-07-28/subscriptions/listen serves two subscriptions, each tagged with its own id", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* h.send(listen("a", { toolsListChanged: true }))
        yield* h.next
        yield* h.send(listen("b", { toolsListChanged: true, resourcesListChanged: true }))
        yield* h.next
        yield* h.publish({ _tag: "ToolsListChanged" })
        const tags = [yield* h.next, yield* h.next].map((n) => ((n.params as JsonObject)._meta as JsonObject)[SubscriptionId])
        assert.sameMembers(tags, ["a", "b"])
        yield* h.publish({ _tag: "ResourcesListChanged" })
        const only = yield* h.next
        assert.strictEqual(only.method, "notifications/resources/list_changed")
        assert.strictEqual(((only.params as JsonObject)._meta as JsonObject)[SubscriptionId], "b")
      })
    ))

  it.effect("2026-07-28/subscriptions/listen with an id in flight is refused", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* h.send(listen("x", { toolsListChanged: true }))
        yield* h.next
        yield* h.send(listen("x", { toolsListChanged: true }))
        const reply = yield* h.next
        assert.strictEqual(reply.id, "x")
        assert.strictEqual((reply.error as JsonObject).code, -32600)
      })
    ))

  it.effect("2026-07-28/stdio/end of input ends an open listen at once, not after the drain", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* h.send(listen("listen-1", { toolsListChanged: true }))
        yield* h.next
        yield* h.eof
        // The drain is an hour and no test time passes: only ending the listen lets serve return.
        let done = false
        yield* Effect.fork(Effect.zipRight(Fiber.await(h.served), Effect.sync(() => void (done = true))))
        yield* until(() => done)
        assert.strictEqual(yield* h.pending, 0)
      })
    ))

  it.effect("2026-07-28/subscriptions/listen with a malformed filter is -32602", () =>
    stdio((h) =>
      Effect.gen(function*() {
        yield* h.send(request(1, "subscriptions/listen", { notifications: { toolsListChanged: "yes" }, _meta: meta() }))
        assert.strictEqual(((yield* h.next).error as JsonObject).code, -32602)
      })
    ))
})

describe("the Server without a streaming transport", () => {
  it.effect("2026-07-28/subscriptions/listen where nothing can be streamed is -32601", () =>
    Effect.gen(function*() {
      const server = yield* Server.Server
      const connection = yield* Server.makeConnection("c")
      const reply = yield* server.handle(listen(1, { toolsListChanged: true }), { connection })
      assert.isTrue(reply !== undefined && JsonRpc.isErrorResponse(reply) && reply.error.code === -32601)
    }).pipe(Effect.provide(Server.Server.layer.pipe(Layer.provide(makeBackend().layer), Layer.provide(TestTasks.layer), Layer.provide(RequestState.layer)))))
})
