/**
 * A fake Backend with fixed tools, prompts and resources, recording every call it receives, and
 * helpers for driving the Server one message at a time.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import {
  Backend,
  type BackendError,
  BackendUnavailable,
  type Caller,
  CallTimedOut,
  CapabilityRequired,
  type Listing,
  UnknownName,
  UpstreamError
} from "../src/Backend.js"
import * as RequestState from "../src/RequestState.js"
import * as Server from "../src/Server.js"
import * as TestTasks from "@mcpx-fx/testing/server/TestTasks"

/** What the fake Backend was asked. */
export interface Received {
  readonly op: string
  readonly caller: Caller
  readonly name?: string
  readonly args?: JsonObject
  readonly meta?: JsonObject
}

export const V = "io.modelcontextprotocol/protocolVersion"
export const C = "io.modelcontextprotocol/clientCapabilities"
export const I = "io.modelcontextprotocol/clientInfo"
export const S = "io.modelcontextprotocol/serverInfo"

export const Modern = "2026-07-28"
export const Legacy = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] as const

/** A complete modern `_meta`, with extra keys. */
export const meta = (extra: JsonObject = {}, version: string = Modern): JsonObject => ({
  [V]: version,
  [C]: {},
  [I]: { name: "test-client", version: "1.0.0" },
  ...extra
})

export const tool: JsonObject = {
  name: "echo",
  title: "Echo",
  description: "says it back",
  inputSchema: { type: "object" },
  outputSchema: { type: "object" },
  annotations: { readOnlyHint: true },
  icons: [{ src: "https://example.com/echo.png" }],
  execution: { taskSupport: "forbidden" }
}

const names = ["echo", "echo_twice", "audio", "slow", "boom", "needs_elicitation", "ask", "crash"]

const listing = (items: ReadonlyArray<JsonObject>, failures: Listing["failures"] = []): Listing => ({ items, failures })

/** A fake Backend and the log of what it received. */
export const makeBackend = (
  options: { readonly failingServer?: string; readonly changes?: Pick<typeof Backend.Service, "changes" | "watchResource"> } = {}
) => {
  const received: Array<Received> = []
  const log = (r: Received) => Effect.sync(() => void received.push(r))
  const failures = options.failingServer === undefined ? [] : [{ server: options.failingServer, message: "did not start" }]
  const layer = Layer.succeed(
    Backend,
    Backend.of({
      listTools: (caller) => Effect.as(log({ op: "listTools", caller }), listing([tool, { name: "echo_twice", inputSchema: { type: "object" } }], failures)),
      listPrompts: (caller) =>
        Effect.as(
          log({ op: "listPrompts", caller }),
          listing([{ name: "greet", title: "Greet", arguments: [{ name: "who", title: "Who", required: true }] }])
        ),
      listResources: (caller) =>
        Effect.as(
          log({ op: "listResources", caller }),
          listing([{ uri: "file:///a.txt", name: "a", title: "A", annotations: { lastModified: "2025-01-01T00:00:00Z" } }])
        ),
      listResourceTemplates: (caller) => Effect.as(log({ op: "listResourceTemplates", caller }), listing([{ uriTemplate: "file:///{path}", name: "files" }])),
      callTool: (caller, name, args, m) =>
        Effect.zipRight(
          log({ op: "callTool", caller, name, args, ...(m !== undefined ? { meta: m } : {}) }),
          Effect.suspend((): Effect.Effect<JsonObject, BackendError> => {
            switch (name) {
              case "echo":
                return Effect.succeed({
                  content: [{ type: "text", text: `echo ${JSON.stringify(args)}` }],
                  structuredContent: { said: args }
                })
              case "audio":
                return Effect.succeed({ content: [{ type: "audio", data: "AAAA", mimeType: "audio/wav" }] })
              case "slow":
                return Effect.fail(new CallTimedOut({ server: "fx", method: "tools/call", timeoutMs: 5000 }))
              case "boom":
                return Effect.fail(
                  new UpstreamError({ server: "fx", method: "tools/call", code: -32050, rpcMessage: "upstream blew up", data: { why: "x" } })
                )
              case "needs_elicitation":
                return Effect.fail(new CapabilityRequired({ requiredCapabilities: { elicitation: {} } }))
              case "ask":
                return Effect.succeed({
                  resultType: "input_required",
                  inputRequests: { q1: { method: "elicitation/create", params: { message: "name?", requestedSchema: { type: "object", properties: {} } } } },
                  requestState: "opaque"
                })
              case "crash":
                return Effect.die(new Error("bug"))
              case "down":
                return Effect.fail(new BackendUnavailable({ server: "fx", reason: "could not start" }))
              default:
                return Effect.fail(new UnknownName({ kind: "tool", name, suggestions: names.filter((n) => n.startsWith(name.slice(0, 3))) }))
            }
          })
        ),
      getPrompt: (caller, name, args, m) =>
        Effect.zipRight(
          log({ op: "getPrompt", caller, name, args, ...(m !== undefined ? { meta: m } : {}) }),
          name === "greet"
            ? Effect.succeed({
              description: "a greeting",
              messages: [
                { role: "user", content: { type: "text", text: `hello ${String(args.who)}` } },
                { role: "user", content: { type: "resource_link", uri: "file:///a.txt", name: "a" } }
              ]
            })
            : Effect.fail(new UnknownName({ kind: "prompt", name, suggestions: ["greet"] }))
        ),
      readResource: (caller, uri, m) =>
        Effect.zipRight(
          log({ op: "readResource", caller, name: uri, ...(m !== undefined ? { meta: m } : {}) }),
          Effect.suspend((): Effect.Effect<JsonObject, BackendError> =>
            uri === "file:///a.txt"
              ? Effect.succeed({ contents: [{ uri, text: "A", _meta: { k: 1 } }] })
              : uri === "file:///gone.txt"
              ? Effect.fail(new UpstreamError({ server: "fx", method: "resources/read", code: -32002, rpcMessage: "Resource not found" }))
              : Effect.fail(new UnknownName({ kind: "resource", name: uri, suggestions: ["file:///a.txt"] }))
          )
        ),
      complete: (caller, params, m) =>
        Effect.as(
          log({ op: "complete", caller, args: params, ...(m !== undefined ? { meta: m } : {}) }),
          { completion: { values: ["alice", "bob"], total: 2, hasMore: false } }
        ),
      ...options.changes
    })
  )
  return { layer, received }
}

/** A request message. */
export const req = (method: string, params?: JsonObject, id: JsonRpc.RequestId = 1): JsonRpc.Request => JsonRpc.request(id, method, params)

/** A legacy `initialize` for `version`. */
export const initialize = (version: string, capabilities: JsonObject = {}, id: JsonRpc.RequestId = 0): JsonRpc.Request =>
  req("initialize", {
    protocolVersion: version,
    capabilities,
    clientInfo: { name: "legacy-client", version: "1.0.0" }
  }, id)

/** The result of a success response, failing the test otherwise. */
export const resultOf = (r: JsonRpc.Response | undefined): JsonObject => {
  if (r === undefined || !JsonRpc.isSuccess(r)) throw new Error(`expected a result, got ${JSON.stringify(r)}`)
  return r.result
}

/** The error of an error response, failing the test otherwise. */
export const errorOf = (r: JsonRpc.Response | undefined): JsonRpc.ErrorObject => {
  if (r === undefined || !JsonRpc.isErrorResponse(r)) throw new Error(`expected an error, got ${JSON.stringify(r)}`)
  return r.error
}

/**
 * Runs `f` against a Server over the fake Backend, on a fresh connection; its requestStates are
 * keyed by `options.requestState` (else a fresh key).
 */
export const withServer = <A, E>(
  f: (tools: {
    readonly handle: (m: JsonRpc.Message, extra?: Partial<Omit<Server.RequestContext, "connection">>) => Effect.Effect<JsonRpc.Response | undefined>
    readonly connection: Server.Connection
    readonly received: ReadonlyArray<Received>
  }) => Effect.Effect<A, E>,
  options: {
    readonly server?: Server.ServerOptions
    readonly failingServer?: string
    readonly requestState?: Layer.Layer<RequestState.RequestState>
  } = {}
): Effect.Effect<A, E> => {
  const backend = makeBackend(options.failingServer === undefined ? {} : { failingServer: options.failingServer })
  const layer = (options.server === undefined ? Server.Server.layer : Server.Server.layerWith(options.server)).pipe(
    Layer.provide(backend.layer),
    Layer.provide(TestTasks.layer),
    Layer.provide(options.requestState ?? RequestState.RequestState.layer)
  )
  return Effect.gen(function*() {
    const server = yield* Server.Server
    const connection = yield* Server.makeConnection("conn-1")
    return yield* f({
      handle: (m, extra) => server.handle(m, { connection, ...extra }),
      connection,
      received: backend.received
    })
  }).pipe(Effect.provide(layer))
}

/** Initializes a connection at `version` and returns the tools for further requests. */
export const legacySession = <A, E>(
  version: string,
  f: Parameters<typeof withServer<A, E>>[0],
  capabilities: JsonObject = {}
): Effect.Effect<A, E> =>
  withServer((t) =>
    Effect.gen(function*() {
      resultOf(yield* t.handle(initialize(version, capabilities)))
      yield* t.handle(JsonRpc.notification("notifications/initialized"))
      return yield* f(t)
    })
  )
