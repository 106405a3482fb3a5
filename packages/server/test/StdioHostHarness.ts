/**
 * Drives the StdioHost over in-memory lines, over a Server and a Backend whose tools take time
 * (`sleep`, on the test's clock), ask the host (`ask`), and record who called and what was interrupted.
 */
import { assert } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { Backend, type Caller, UnknownName } from "../src/Backend.js"
import { Server } from "../src/Server.js"
import { RequestState } from "../src/RequestState.js"
import { StdioHost, type StdioOptions } from "../src/StdioHost.js"
import * as TestTasks from "@mcpx-fx/testing/server/TestTasks"

/** A Backend whose tools take time (`sleep`), ask the host (`ask`), and record interruption. */
const makeBackend = () => {
  const interrupted: Array<string> = []
  const callers: Array<Caller> = []
  const empty = { items: [], failures: [] }
  const layer = Layer.succeed(
    Backend,
    Backend.of({
      listTools: () => Effect.succeed({ items: [{ name: "sleep", inputSchema: { type: "object" } }], failures: [] }),
      listPrompts: () => Effect.succeed(empty),
      listResources: () => Effect.succeed(empty),
      listResourceTemplates: () => Effect.succeed(empty),
      callTool: (caller, name, args) =>
        Effect.suspend(() => {
          callers.push(caller)
          const label = typeof args.label === "string" ? args.label : name
          if (name === "sleep") {
            const ms = typeof args.ms === "number" ? args.ms : 0
            return Effect.sleep(ms).pipe(
              Effect.as({ content: [{ type: "text", text: `slept ${ms}\nline two` }], structuredContent: { ms } }),
              Effect.onInterrupt(() => Effect.sync(() => void interrupted.push(label)))
            )
          }
          if (name === "ask" && caller.questions !== undefined) {
            return caller.questions({ method: "elicitation/create", params: { message: "name?", requestedSchema: { type: "object" } } }).pipe(
              Effect.map((answer): JsonObject => ({ content: [{ type: "text", text: JSON.stringify(answer) }] })),
              Effect.catchAll((e) => Effect.succeed({ content: [{ type: "text", text: `refused ${e.code}` }], isError: true }))
            )
          }
          return Effect.fail(new UnknownName({ kind: "tool", name, suggestions: [] }))
        }),
      getPrompt: (_, name) => Effect.fail(new UnknownName({ kind: "prompt", name, suggestions: [] })),
      readResource: (_, uri) => Effect.fail(new UnknownName({ kind: "resource", name: uri, suggestions: [] })),
      complete: () => Effect.succeed({ completion: { values: [] } })
    })
  )
  return { layer, interrupted, callers }
}

export interface Harness {
  readonly send: (body: unknown) => Effect.Effect<void>
  readonly sendLine: (line: string) => Effect.Effect<void>
  readonly eof: Effect.Effect<void>
  /** The next line written, parsed. */
  readonly next: Effect.Effect<unknown>
  /** How many written lines nobody has read yet. */
  readonly pending: Effect.Effect<number>
  readonly lines: ReadonlyArray<string>
  readonly served: Fiber.Fiber<void>
  readonly interrupted: ReadonlyArray<string>
  readonly callers: ReadonlyArray<Caller>
}

/** Lets forked fibers run until `cond` holds (no real time passes). */
export const until = (cond: () => boolean): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (let i = 0; i < 1000 && !cond(); i++) yield* Effect.yieldNow()
    assert.isTrue(cond(), "condition never held")
  })

/** Lets forked fibers settle. */
export const settle = Effect.repeatN(Effect.yieldNow(), 50)

export const stdio = <A, E>(
  f: (h: Harness) => Effect.Effect<A, E>,
  drain: Duration.DurationInput = "1 second",
  options: Omit<StdioOptions, "drain"> = {}
): Effect.Effect<A, E> => {
  const backend = makeBackend()
  const layer = StdioHost.layer.pipe(
    Layer.provide(Server.layer),
    Layer.provide(backend.layer),
    Layer.provide(TestTasks.layer),
    Layer.provide(RequestState.layer)
  )
  return Effect.gen(function*() {
    const host = yield* StdioHost
    const input = yield* Queue.unbounded<string | null>()
    const output = yield* Queue.unbounded<string>()
    const lines: Array<string> = []
    const served = yield* Effect.fork(
      host.serve(
        Stream.fromQueue(input).pipe(Stream.takeWhile((l) => l !== null), Stream.map((l) => l ?? "")),
        (line) => Effect.zipRight(Effect.sync(() => void lines.push(line)), Queue.offer(output, line)),
        { connectionId: "stdio-1", ...options, drain }
      )
    )
    return yield* f({
      send: (body) => Queue.offer(input, JSON.stringify(body)),
      sendLine: (line) => Queue.offer(input, line),
      eof: Queue.offer(input, null),
      next: Effect.map(Queue.take(output), (l): unknown => JSON.parse(l)),
      pending: Queue.size(output),
      lines,
      served,
      interrupted: backend.interrupted,
      callers: backend.callers
    })
  }).pipe(Effect.provide(layer))
}

export const request = (id: JsonRpc.RequestId, method: string, params?: JsonObject) => JsonRpc.request(id, method, params)
export const init = (version: string, id: JsonRpc.RequestId = 0) =>
  request(id, "initialize", { protocolVersion: version, capabilities: { elicitation: {} }, clientInfo: { name: "h", version: "1" } })
export const sleep = (id: JsonRpc.RequestId, ms: number, label = String(id)) => request(id, "tools/call", { name: "sleep", arguments: { ms, label } })

export const asObject = (u: unknown): JsonObject => {
  assert.isTrue(typeof u === "object" && u !== null && !Array.isArray(u), `expected an object, got ${JSON.stringify(u)}`)
  return u as JsonObject
}

export const opened = (h: Harness, version: string) =>
  Effect.gen(function*() {
    yield* h.send(init(version))
    const r = asObject(yield* h.next)
    assert.strictEqual(asObject(r.result).protocolVersion, version)
    yield* h.send(JsonRpc.notification("notifications/initialized"))
  })
