/**
 * Upstream changes through the gateway, against the era-server fixture over stdio: its unlisted
 * `notify_changes` tool sends `notifications/tools/list_changed` and `notifications/resources/updated`
 * for what the session subscribed to. First the Gateway's own change stream and resource watches,
 * then the whole way to a host: StdioHost → Server → GatewayBackend → Gateway → Pool → upstream.
 */
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Server from "@mcpx-fx/server/Server"
import { RequestState } from "@mcpx-fx/server/RequestState"
import { StdioHost } from "@mcpx-fx/server/StdioHost"
import { Fixtures } from "@mcpx-fx/testing"
import { Pool } from "@mcpx-fx/upstream/pool/Pool"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Gateway } from "../src/Gateway.js"
import type { GatewayChange } from "../src/GatewayModel.js"
import * as GatewayBackend from "../src/GatewayBackend.js"
import * as TestGateway from "@mcpx-fx/testing/gateway/TestGateway"
import * as TestTasks from "@mcpx-fx/testing/server/TestTasks"

const Readme = "mcpx://beta/era://readme"
const SubscriptionId = "io.modelcontextprotocol/subscriptionId"

/** A gateway over one era-server, `beta` (legacy unless told otherwise); its Pool is provided too. */
const gateway = (args: ReadonlyArray<string> = ["--mode", "legacy-32601"]) => TestGateway.layer({ beta: Fixtures.stdioCommand("era-server", args) })

/** The next change that is not a tools list_changed, skipping those. */
const nextOther = (changes: Queue.Dequeue<GatewayChange>) =>
  Effect.iterate(undefined as GatewayChange | undefined, {
    while: (c) => c === undefined || c._tag === "ToolsListChanged",
    body: () => Queue.take(changes)
  })

describe("Gateway changes", () => {
  it.scopedLive("gateway/changes/an upstream's list_changed reaches the change stream", () =>
    Effect.gen(function*() {
      const g = yield* Gateway
      const changes = yield* g.changes
      const result = yield* g.callTool({}, "beta__notify_changes", {})
      assert.include(JSON.stringify(result.content), "0 update(s)")
      assert.deepStrictEqual(yield* Queue.take(changes), { _tag: "ToolsListChanged", server: "beta" })
    }).pipe(Effect.provide(gateway())))

  it.scopedLive("gateway/changes/a watched resource's updates arrive under its namespaced uri", () =>
    Effect.gen(function*() {
      const g = yield* Gateway
      const changes = yield* g.changes
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      yield* Scope.extend(g.watchResource({}, Readme), first)
      yield* Scope.extend(g.watchResource({}, Readme), second)
      yield* g.callTool({}, "beta__notify_changes", {})
      assert.deepStrictEqual(yield* nextOther(changes), { _tag: "ResourceUpdated", server: "beta", uri: Readme })
      // One watch left: the upstream subscription stays.
      yield* Scope.close(first, Exit.void)
      yield* g.callTool({}, "beta__notify_changes", {})
      assert.deepStrictEqual(yield* nextOther(changes), { _tag: "ResourceUpdated", server: "beta", uri: Readme })
      // The last watch gone: the upstream was told to unsubscribe, and only list_changed comes.
      yield* Scope.close(second, Exit.void)
      const told = yield* g.callTool({}, "beta__notify_changes", {})
      assert.include(JSON.stringify(told.content), "0 update(s)")
    }).pipe(Effect.provide(gateway())))

  it.scopedLive("gateway/changes/a modern upstream's list_changed arrives on the listen the pool holds for it", () =>
    Effect.gen(function*() {
      const g = yield* Gateway
      const pool = yield* Pool
      const untied = yield* pool.notifications
      const changes = yield* g.changes
      // Listing starts the instance; its listen is acknowledged once the upstream has it.
      yield* g.listTools({})
      const ack = yield* Effect.iterate(undefined as string | undefined, {
        while: (m) => m !== "notifications/subscriptions/acknowledged",
        body: () => Effect.map(Queue.take(untied), (n) => n.notification.method)
      })
      assert.strictEqual(ack, "notifications/subscriptions/acknowledged")
      const told = yield* g.callTool({}, "beta__notify_changes", {})
      assert.include(JSON.stringify(told.content), "1 listen(s)")
      assert.deepStrictEqual(yield* Queue.take(changes), { _tag: "ToolsListChanged", server: "beta" })
    }).pipe(Effect.provide(gateway(["--mode", "modern-only", "--list-changed"]))))

  it.scopedLive("2026-07-28/changes/a modern upstream's resource is watched with a listen of its own while anyone watches", () =>
    Effect.gen(function*() {
      const g = yield* Gateway
      const changes = yield* g.changes
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      yield* Scope.extend(g.watchResource({}, Readme), first)
      yield* Scope.extend(g.watchResource({}, Readme), second)
      // The listen is held in a fiber; the upstream counts it once it has acknowledged.
      const counted = g.callTool({}, "beta__notify_changes", {}).pipe(
        Effect.map((r) => JSON.stringify(r.content)),
        Effect.repeat({ until: (text) => text.includes("1 update(s)") })
      )
      yield* counted
      assert.deepStrictEqual(yield* nextOther(changes), { _tag: "ResourceUpdated", server: "beta", uri: Readme })
      // The first watcher leaving keeps the listen: it belongs to the count, not to that watcher.
      yield* Scope.close(first, Exit.void)
      assert.include(JSON.stringify((yield* g.callTool({}, "beta__notify_changes", {})).content), "1 update(s)")
      yield* Scope.close(second, Exit.void)
      const gone = g.callTool({}, "beta__notify_changes", {}).pipe(
        Effect.map((r) => JSON.stringify(r.content)),
        Effect.repeat({ until: (text) => text.includes("0 update(s)") })
      )
      assert.include(yield* gone, "0 update(s)")
    }).pipe(Effect.provide(gateway(["--mode", "modern-only"]))))

  it.scopedLive("gateway/changes/watching a resource under no known namespace names the closest ones", () =>
    Effect.gen(function*() {
      const g = yield* Gateway
      const e = yield* Effect.flip(g.watchResource({}, "mcpx://betta/era://readme"))
      assert.strictEqual(e._tag, "UnknownName")
      assert.deepStrictEqual(e._tag === "UnknownName" && e.suggestions, [Readme])
    }).pipe(Effect.provide(gateway())))
})

interface Host {
  readonly send: (m: JsonRpc.Message) => Effect.Effect<void>
  readonly next: Effect.Effect<JsonObject>
}

/** A stdio host connection over the real gateway, its lines in a queue. */
const host = <A, E>(f: (h: Host) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const stdio = yield* StdioHost
    const input = yield* Queue.unbounded<string>()
    const output = yield* Queue.unbounded<string>()
    yield* Effect.forkScoped(stdio.serve(Stream.fromQueue(input), (line) => Queue.offer(output, line), { drain: "1 second" }))
    return yield* f({
      send: (m) => Queue.offer(input, JSON.stringify(m)),
      next: Effect.map(Queue.take(output), (l) => JSON.parse(l) as JsonObject)
    })
  }).pipe(
    Effect.provide(
      StdioHost.layer.pipe(
        Layer.provide(Server.Server.layer),
        Layer.provide(RequestState.layer),
        Layer.provideMerge(GatewayBackend.layer),
        Layer.provide(gateway()),
        Layer.provide(TestTasks.layer)
      )
    )
  )

/**
 * Reads lines until the reply to `id` and a notification of each of `methods` have come, in
 * whatever order the reply and the notifications race; answers them by method.
 */
const gather = (h: Host, id: JsonRpc.RequestId, methods: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const seen = new Map<string, JsonObject>()
    let reply: JsonObject | undefined
    while (reply === undefined || methods.some((m) => !seen.has(m))) {
      const line = yield* h.next
      if (line.id === id) reply = line
      else if (typeof line.method === "string" && !seen.has(line.method)) seen.set(line.method, line)
    }
    return { reply, seen }
  })

const initialize = (version: string) =>
  JsonRpc.request(0, "initialize", { protocolVersion: version, capabilities: {}, clientInfo: { name: "h", version: "1" } })

const modernMeta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "h", version: "1" }
}

describe("changes end to end over stdio", () => {
  it.scopedLive("2025-11-25/stdio/list_changed from a legacy upstream reaches a host told listChanged", () =>
    host((h) =>
      Effect.gen(function*() {
        yield* h.send(initialize("2025-11-25"))
        const init = yield* h.next
        assert.deepStrictEqual(((init.result as JsonObject).capabilities as JsonObject).tools, { listChanged: true })
        yield* h.send(JsonRpc.notification("notifications/initialized"))
        yield* h.send(JsonRpc.request(1, "tools/call", { name: "beta__notify_changes", arguments: {} }))
        const { reply, seen } = yield* gather(h, 1, ["notifications/tools/list_changed"])
        assert.isDefined(reply.result)
        assert.deepStrictEqual(seen.get("notifications/tools/list_changed"), { jsonrpc: "2.0", method: "notifications/tools/list_changed" })
      })
    ))

  it.scopedLive("2025-06-18/stdio/resources/subscribe delivers the upstream's resources/updated, namespaced", () =>
    host((h) =>
      Effect.gen(function*() {
        yield* h.send(initialize("2025-06-18"))
        yield* h.next
        yield* h.send(JsonRpc.notification("notifications/initialized"))
        yield* h.send(JsonRpc.request(1, "resources/subscribe", { uri: Readme }))
        assert.deepStrictEqual(yield* h.next, { jsonrpc: "2.0", id: 1, result: {} })
        yield* h.send(JsonRpc.request(2, "tools/call", { name: "beta__notify_changes", arguments: {} }))
        const { seen } = yield* gather(h, 2, ["notifications/resources/updated"])
        assert.deepStrictEqual(seen.get("notifications/resources/updated")?.params, { uri: Readme })
      })
    ))

  it.scopedLive("2026-07-28/subscriptions/listen delivers tools list_changed from a legacy upstream", () =>
    host((h) =>
      Effect.gen(function*() {
        yield* h.send(
          JsonRpc.request("listen-1", "subscriptions/listen", {
            notifications: { toolsListChanged: true, resourceSubscriptions: [Readme] },
            _meta: modernMeta
          })
        )
        const ack = yield* h.next
        assert.strictEqual(ack.method, "notifications/subscriptions/acknowledged")
        assert.deepStrictEqual((ack.params as JsonObject).notifications, { toolsListChanged: true, resourceSubscriptions: [Readme] })
        yield* h.send(JsonRpc.request(1, "tools/call", { name: "beta__notify_changes", arguments: {}, _meta: modernMeta }))
        const { seen } = yield* gather(h, 1, ["notifications/tools/list_changed", "notifications/resources/updated"])
        assert.deepStrictEqual(seen.get("notifications/tools/list_changed")?.params, { _meta: { [SubscriptionId]: "listen-1" } })
        assert.deepStrictEqual(seen.get("notifications/resources/updated")?.params, { uri: Readme, _meta: { [SubscriptionId]: "listen-1" } })
      })
    ))
})
