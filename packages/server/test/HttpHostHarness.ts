/**
 * Drives the HttpHost's `/mcp` app without sockets, through the web handler the platform builds
 * from it, over a Server and the fake Backend of `support.ts` with two more tools: `block` (runs
 * until interrupted, reporting both), `question` (asks the host an elicitation and returns the
 * answer), `say_first` (sends a progress notification, then answers) and `flood` (sends `count`
 * progress notifications, then answers).
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import { Backend } from "../src/Backend.js"
import * as ClientDetach from "../src/ClientDetach.js"
import { HttpHost, type HttpHostOptions } from "../src/HttpHost.js"
import * as Server from "../src/Server.js"
import { RequestState } from "../src/RequestState.js"
import { makeBackend, meta } from "./support.js"
import * as TestTasks from "@mcpx-fx/testing/server/TestTasks"

export const Url = "http://127.0.0.1:7717/mcp"

/** What the extra tools report. */
export interface Events {
  readonly started: Queue.Queue<string>
  readonly interrupted: Queue.Queue<string>
  /** What `ask_twice` ended with. */
  readonly outcomes: Queue.Queue<string>
}

const tagOf = (args: JsonObject): string => (typeof args.tag === "string" ? args.tag : "untagged")

const extendedBackend = (events: Events) => {
  const base = makeBackend()
  return Layer.effect(
    Backend,
    Effect.map(Backend, (b) =>
      Backend.of({
        ...b,
        callTool: (caller, name, args, m) => {
          if (name === "block") {
            return Effect.zipRight(
              Queue.offer(events.started, tagOf(args)),
              Effect.never.pipe(Effect.onInterrupt(() => Queue.offer(events.interrupted, tagOf(args))))
            )
          }
          if (name === "say_first") {
            // Says something before its result, whether or not the request asked to hear it.
            const said = caller.notify?.({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "said", progress: 1 } })
            return Effect.as(said ?? Effect.void, { content: [{ type: "text", text: "done" }] })
          }
          if (name === "flood") {
            // Says `count` things before its result, as an upstream that logs without end.
            const count = typeof args.count === "number" ? args.count : 0
            const say = (i: number) =>
              caller.notify?.({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "flood", progress: i } }) ?? Effect.void
            return Effect.forEach(Array.from({ length: count }, (_, i) => i), say, { discard: true }).pipe(
              Effect.zipRight(Queue.offer(events.outcomes, "flooded")),
              Effect.as({ content: [{ type: "text", text: "done" }] })
            )
          }
          if (name === "question") {
            const ask = caller.questions
            if (ask === undefined) return Effect.succeed({ content: [{ type: "text", text: "nobody to ask" }] })
            return ask({ method: "elicitation/create", params: { message: "name?", requestedSchema: { type: "object", properties: {} } } }).pipe(
              Effect.map((answer): JsonObject => ({ content: [{ type: "text", text: JSON.stringify(answer) }] })),
              Effect.catchTag("QuestionRefused", (e) => Effect.succeed({ content: [{ type: "text", text: `refused ${e.code}` }] }))
            )
          }
          if (name === "ask_twice") {
            const ask = caller.questions
            if (ask === undefined) return Effect.succeed({ content: [] })
            const question = (message: string) =>
              ask({ method: "elicitation/create", params: { message, requestedSchema: { type: "object", properties: {} } } })
            return Effect.zipRight(question("first?"), question("second?")).pipe(
              Effect.as("answered"),
              Effect.catchTag("QuestionRefused", (e) => Effect.succeed(`refused ${e.code}`)),
              Effect.tap((outcome) => Queue.offer(events.outcomes, outcome)),
              Effect.map((outcome): JsonObject => ({ content: [{ type: "text", text: outcome }] }))
            )
          }
          return b.callTool(caller, name, args, m)
        }
      }))
  ).pipe(Layer.provide(base.layer))
}

/** A running host and ways to call it. */
export interface Harness {
  readonly host: Context.Tag.Service<HttpHost>
  readonly events: Events
  readonly fetch: (request: Request) => Effect.Effect<Response>
  /** A POST with a JSON content type and the Accept a conformant client sends, unless overridden. */
  readonly post: (
    body: unknown,
    headers?: Record<string, string>,
    init?: { readonly signal?: AbortSignal }
  ) => Effect.Effect<Response>
  readonly get: (headers?: Record<string, string>) => Effect.Effect<Response>
  readonly del: (headers?: Record<string, string>) => Effect.Effect<Response>
}

/**
 * Requests an adapter could detach from their clients (ClientDetach), as the daemon's can; each
 * detach is counted. The web handler still interrupts a request whose client aborts, so a
 * dropped connection is the daemon's tests' to check (cli/test/host-http/cancellation.test.ts).
 */
export interface Detaching {
  readonly detached: { count: number }
}

const detachable = (request: HttpServerRequest.HttpServerRequest, detaching: Detaching): HttpServerRequest.HttpServerRequest =>
  Object.assign(Object.create(request) as HttpServerRequest.HttpServerRequest, {
    [ClientDetach.Detach]: () => void detaching.detached.count++
  })

export const harness = (options: HttpHostOptions = {}, detaching?: Detaching): Effect.Effect<Harness, never, Scope.Scope> =>
  Effect.gen(function*() {
    const events: Events = {
      started: yield* Queue.unbounded<string>(),
      interrupted: yield* Queue.unbounded<string>(),
      outcomes: yield* Queue.unbounded<string>()
    }
    const layer = HttpHost.layer(options).pipe(
      Layer.provide(Server.Server.layer),
      Layer.provide(extendedBackend(events)),
      Layer.provide(TestTasks.layer),
      Layer.provide(RequestState.layer)
    )
    const host = Context.get(yield* Layer.build(layer), HttpHost)
    // The test's own runtime, so the host's streams run on its TestClock.
    const app = detaching === undefined
      ? host.app
      : Effect.updateService(host.app, HttpServerRequest.HttpServerRequest, (r) => detachable(r, detaching))
    const handler = HttpApp.toWebHandlerRuntime(yield* Effect.runtime<never>())(app)
    const fetch = (request: Request) => Effect.promise(() => handler(request))
    return {
      host,
      events,
      fetch,
      post: (body, headers = {}, init = {}) =>
        fetch(
          new Request(Url, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
            body: typeof body === "string" ? body : JSON.stringify(body),
            ...(init.signal !== undefined ? { signal: init.signal } : {})
          })
        ),
      get: (headers = {}) => fetch(new Request(Url, { method: "GET", headers: { accept: "text/event-stream", ...headers } })),
      del: (headers = {}) => fetch(new Request(Url, { method: "DELETE", headers }))
    }
  })

/** The mirrored headers of a modern request. */
export const modernHeaders = (method: string, name?: string, version = "2026-07-28"): Record<string, string> => ({
  "mcp-protocol-version": version,
  "mcp-method": method,
  ...(name !== undefined ? { "mcp-name": name } : {})
})

/** A modern request body with a complete `_meta`. */
export const modernRequest = (method: string, params: JsonObject = {}, id: number | string = 1): JsonObject => ({
  jsonrpc: "2.0",
  id,
  method,
  params: { ...params, _meta: meta() }
})

/** The body as JSON. */
export const bodyOf = (response: Response): Effect.Effect<unknown> => Effect.promise(() => response.json())

/** The body as a JSON object, failing the test otherwise. */
export const objectOf = (response: Response): Effect.Effect<JsonObject> =>
  Effect.flatMap(bodyOf(response), (b) =>
    typeof b === "object" && b !== null && !Array.isArray(b)
      ? Effect.succeed(b as JsonObject)
      : Effect.die(new Error(`expected a JSON object, got ${JSON.stringify(b)}`)))

/** The error member of a JSON-RPC error body. */
export const errorIn = (body: JsonObject): { readonly code: unknown; readonly message: unknown } => {
  const e = body.error
  if (typeof e !== "object" || e === null) throw new Error(`expected an error body, got ${JSON.stringify(body)}`)
  return e as { readonly code: unknown; readonly message: unknown }
}

/**
 * Reads an SSE body event by event: `next` is the next event's data parsed as JSON, or the comment
 * text for a comment line; `end` is true once the stream has ended.
 */
export const sse = (response: Response) => {
  const body = response.body
  if (body === null) throw new Error("expected a streamed body")
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  const read = async (): Promise<{ readonly comment?: string; readonly data?: unknown } | undefined> => {
    for (;;) {
      const cut = buffer.indexOf("\n\n")
      if (cut >= 0) {
        const block = buffer.slice(0, cut)
        buffer = buffer.slice(cut + 2)
        if (block.startsWith(":")) return { comment: block.slice(1).trim() }
        const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n")
        return { data: JSON.parse(data) }
      }
      const chunk = await reader.read()
      if (chunk.done) return undefined
      buffer += decoder.decode(chunk.value, { stream: true })
    }
  }
  return {
    /** The next event, or undefined at the end of the stream. */
    next: Effect.promise(read),
    cancel: Effect.promise(() => reader.cancel())
  }
}
