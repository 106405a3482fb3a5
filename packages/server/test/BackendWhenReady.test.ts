/**
 * A Backend still being built, behind the stdio host: `initialize` is answered before it is ready,
 * every other request waits for it, its changes reach the host once it is, and a build that fails
 * answers the waiting requests with its error without ending the connection.
 */
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { Backend, type Change } from "../src/Backend.js"
import * as BackendWhenReady from "../src/BackendWhenReady.js"
import * as Server from "../src/Server.js"
import { RequestState } from "../src/RequestState.js"
import { StdioHost } from "../src/StdioHost.js"
import { initialize, makeBackend, req } from "./support.js"
import * as TestTasks from "@mcpx-fx/testing/server/TestTasks"

type BackendService = Backend["Type"]

interface Harness {
  readonly send: (body: unknown) => Effect.Effect<void>
  readonly next: Effect.Effect<JsonObject>
  readonly pending: Effect.Effect<number>
  /** Hands the host its Backend: the real one, or a build that died. */
  readonly ready: (backend: BackendService) => Effect.Effect<void>
  readonly fail: (message: string) => Effect.Effect<void>
  readonly publish: (change: Change) => Effect.Effect<void>
}

/** Lets forked fibers run (no time passes). */
const settle = Effect.repeatN(Effect.yieldNow(), 50)

const withHost = <A, E>(f: (h: Harness, real: BackendService) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const hub = yield* PubSub.unbounded<Change>()
    const real = Context.get(
      yield* Layer.build(makeBackend({ changes: { changes: PubSub.subscribe(hub) } }).layer),
      Backend
    )
    const built = yield* Deferred.make<BackendService, { readonly message: string }>()
    const deferred = Layer.succeed(Backend, BackendWhenReady.whenReady(Deferred.await(built)))
    const layer = StdioHost.layer.pipe(
      Layer.provide(Server.Server.layer),
      Layer.provide(deferred),
      Layer.provide(TestTasks.layer),
      Layer.provide(RequestState.layer)
    )
    return yield* Effect.gen(function*() {
      const host = yield* StdioHost
      const input = yield* Queue.unbounded<string>()
      const output = yield* Queue.unbounded<string>()
      yield* Effect.forkScoped(host.serve(Stream.fromQueue(input), (line) => Queue.offer(output, line), { drain: "1 hour" }))
      return yield* f({
        send: (body) => Queue.offer(input, JSON.stringify(body)),
        next: Effect.map(Queue.take(output), (l) => JSON.parse(l) as JsonObject),
        pending: Queue.size(output),
        ready: (backend) => Effect.asVoid(Deferred.succeed(built, backend)),
        fail: (message) => Effect.asVoid(Deferred.fail(built, { message })),
        publish: (change) => Effect.asVoid(PubSub.publish(hub, change))
      }, real)
    }).pipe(Effect.provide(layer))
  }).pipe(Effect.scoped)

describe("a Backend still being built", () => {
  it.effect("initialize is answered before it is ready; a listing waits for it, then is answered", () =>
    withHost((h, real) =>
      Effect.gen(function*() {
        yield* h.send(initialize("2025-11-25"))
        const init = yield* h.next
        assert.strictEqual(init.id, 0)
        assert.strictEqual(((init.result as JsonObject).serverInfo as JsonObject).name, "mcpx-fx")
        yield* h.send(JsonRpc.notification("notifications/initialized"))
        yield* h.send(req("tools/list", {}, 1))
        yield* settle
        assert.strictEqual(yield* h.pending, 0, "the listing was answered before the Backend was ready")
        yield* h.ready(real)
        const listed = yield* h.next
        assert.strictEqual(listed.id, 1)
        const names = ((listed.result as JsonObject).tools as Array<JsonObject>).map((t) => t.name)
        assert.include(names, "echo")
      })
    ))

  it.effect("its changes reach an initialized host once it is ready", () =>
    withHost((h, real) =>
      Effect.gen(function*() {
        yield* h.send(initialize("2025-11-25"))
        yield* h.next
        yield* h.send(JsonRpc.notification("notifications/initialized"))
        yield* h.ready(real)
        yield* settle
        yield* h.publish({ _tag: "ToolsListChanged" })
        assert.deepStrictEqual(yield* h.next, { jsonrpc: "2.0", method: "notifications/tools/list_changed" })
      })
    ))

  it.effect("a build that failed answers the requests waiting for it with its error; the connection goes on", () =>
    withHost((h) =>
      Effect.gen(function*() {
        yield* h.send(initialize("2025-11-25"))
        yield* h.next
        yield* h.send(req("tools/call", { name: "echo", arguments: {} }, 1))
        yield* h.send(req("tools/list", {}, 2))
        yield* settle
        yield* h.fail("names.prefix=false needs exactly one server")
        const answers = [yield* h.next, yield* h.next]
        const failed = answers.find((a) => a.id === 1)!
        assert.strictEqual((failed.error as JsonObject).code, -32603)
        assert.include((failed.error as JsonObject).message, "names.prefix=false needs exactly one server")
        const listed = answers.find((a) => a.id === 2)!
        assert.deepStrictEqual((listed.result as JsonObject).tools, [])
        yield* h.send(req("ping", {}, 3))
        assert.deepStrictEqual(yield* h.next, { jsonrpc: "2.0", id: 3, result: {} })
      })
    ))

  it.effect("without changes or watches of its own, it offers none and refuses a subscription", () =>
    withHost((h, real) =>
      Effect.gen(function*() {
        const { changes: _changes, watchResource: _watch, ...bare } = real
        yield* h.send(initialize("2025-11-25"))
        yield* h.next
        yield* h.send(JsonRpc.notification("notifications/initialized"))
        yield* h.ready(bare)
        yield* h.send(req("resources/subscribe", { uri: "file:///a.txt" }, 1))
        const refused = yield* h.next
        assert.strictEqual(refused.id, 1)
        assert.isDefined(refused.error, JSON.stringify(refused))
      })
    ))
})
