/**
 * A modern HTTP session mirrors a tool's x-mcp-header arguments as Mcp-Param-* on every call,
 * including the first one, made before anyone listed the tools; -32020 re-lists once and retries;
 * a request refused the way only a server that is not modern refuses it puts the era in doubt.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { makeSession } from "../../src/session/Session.js"
import type { Established } from "../../src/session/SessionModel.js"
import { type Connection, HTTPStatusError, type RequestHints, type TransportError } from "../../src/transport/Transport.js"
import { testConnection } from "../util/TestConnection.js"

const modern: Established = {
  era: "modern",
  negotiated: "2026-07-28",
  eraSource: "probe",
  serverInfo: undefined,
  capabilities: { tools: { listChanged: true } },
  instructions: undefined
}
const options = { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} }

const weather = (header: string) => ({
  name: "weather",
  inputSchema: { type: "object", properties: { region: { type: "string", "x-mcp-header": header } } }
})

interface Sent {
  readonly method: string
  readonly headers: Readonly<Record<string, string>>
}

/**
 * A strict modern HTTP server: it lists `weather` with its region mirrored in `Mcp-Param-<header>`
 * (the header name can change between listings) and answers -32020 to a call without it.
 */
const strictServer = (state: { header: string; pages?: boolean }) =>
  Effect.gen(function*() {
    const sent: Array<Sent> = []
    const untied = yield* Queue.unbounded<JsonRpc.Parsed>()
    const answer = (req: JsonRpc.Request, hints: RequestHints | undefined): JsonRpc.Response => {
      const headers = hints?.headers ?? {}
      sent.push({ method: req.method, headers })
      if (req.method === "tools/list") {
        // With `pages`, the listing comes in two pages and `weather` is on the second.
        if (state.pages === true && req.params?.cursor === undefined) {
          return JsonRpc.success(req.id, { tools: [{ name: "hello", inputSchema: { type: "object" } }], nextCursor: "2" })
        }
        return JsonRpc.success(req.id, { tools: [weather(state.header)] })
      }
      if (req.method === "tools/call") {
        const region = (req.params?.arguments as { region?: string } | undefined)?.region
        if (headers[`Mcp-Param-${state.header}`] !== region) {
          return JsonRpc.failure(req.id, ErrorCode.HeaderMismatch, `Mcp-Param-${state.header} is missing or wrong`)
        }
        return JsonRpc.success(req.id, { content: [{ type: "text", text: `weather for ${region}` }] })
      }
      return JsonRpc.failure(req.id, ErrorCode.MethodNotFound, "no")
    }
    const request: Connection["request"] = (req, hints) => Stream.make({ message: answer(req, hints), raw: {} })
    const conn = testConnection(request, { unsolicited: Stream.fromQueue(untied) })
    const listChanged = Queue.offer(untied, {
      message: JsonRpc.notification("notifications/tools/list_changed"),
      raw: {}
    })
    return { conn, sent, listChanged }
  })

const callWeather = (session: Effect.Effect.Success<ReturnType<typeof makeSession>>) =>
  session.request("tools/call", { name: "weather", arguments: { region: "north" } })

const methods = (sent: ReadonlyArray<Sent>) => sent.map((s) => s.method)

describe("Session, modern over HTTP: Mcp-Param-* headers", () => {
  it.scoped("the first tools/call lists the tools first and carries the header", () =>
    Effect.gen(function*() {
      const { conn, sent } = yield* strictServer({ header: "Region" })
      const session = yield* makeSession("strict", conn, modern, options)
      const result = yield* callWeather(session)
      assert.deepStrictEqual(result.content, [{ type: "text", text: "weather for north" }])
      assert.deepStrictEqual(methods(sent), ["tools/list", "tools/call"])
      assert.strictEqual(sent[1]?.headers["Mcp-Param-Region"], "north")
      // The listing is kept: later calls send no tools/list.
      yield* callWeather(session)
      assert.deepStrictEqual(methods(sent), ["tools/list", "tools/call", "tools/call"])
    }))

  it.scoped("concurrent first calls share one listing, and every page of it is read", () =>
    Effect.gen(function*() {
      const { conn, sent } = yield* strictServer({ header: "Region", pages: true })
      const session = yield* makeSession("strict", conn, modern, options)
      yield* Effect.all([callWeather(session), callWeather(session), callWeather(session)], { concurrency: "unbounded" })
      assert.deepStrictEqual(methods(sent), ["tools/list", "tools/list", "tools/call", "tools/call", "tools/call"])
    }))

  it.scoped("a listing that went through the session is used: no second tools/list", () =>
    Effect.gen(function*() {
      const { conn, sent } = yield* strictServer({ header: "Region" })
      const session = yield* makeSession("strict", conn, modern, options)
      yield* session.request("tools/list")
      yield* callWeather(session)
      assert.deepStrictEqual(methods(sent), ["tools/list", "tools/call"])
    }))

  it.scoped("-32020 lists the tools again once and sends the call again", () =>
    Effect.gen(function*() {
      const state = { header: "Region" }
      const { conn, sent } = yield* strictServer(state)
      const session = yield* makeSession("strict", conn, modern, options)
      yield* callWeather(session)
      // The server now wants another header; nothing told the session.
      state.header = "Area"
      const result = yield* callWeather(session)
      assert.deepStrictEqual(result.content, [{ type: "text", text: "weather for north" }])
      assert.deepStrictEqual(methods(sent), ["tools/list", "tools/call", "tools/call", "tools/list", "tools/call"])
      assert.strictEqual(sent[4]?.headers["Mcp-Param-Area"], "north")
    }))

  it.scoped("a second -32020 is the caller's: the call is not retried forever", () =>
    Effect.gen(function*() {
      const { conn, sent } = yield* strictServer({ header: "Region" })
      const session = yield* makeSession("strict", conn, modern, options)
      // A tool the listing does not have gets no header, so this server refuses it every time.
      const e = yield* Effect.flip(session.request("tools/call", { name: "unlisted", arguments: { region: "north" } }))
      assert.deepStrictEqual([e._tag, e._tag === "UpstreamRpcError" ? e.code : 0], ["UpstreamRpcError", ErrorCode.HeaderMismatch])
      assert.deepStrictEqual(methods(sent), ["tools/list", "tools/call", "tools/list", "tools/call"])
    }))

  it.scoped("a tools list_changed makes the next call list again", () =>
    Effect.gen(function*() {
      const state = { header: "Region" }
      const { conn, sent, listChanged } = yield* strictServer(state)
      const session = yield* makeSession("strict", conn, modern, options)
      const events = yield* session.subscribe
      yield* callWeather(session)
      state.header = "Area"
      yield* listChanged
      yield* Queue.take(events)
      yield* callWeather(session)
      assert.deepStrictEqual(methods(sent), ["tools/list", "tools/call", "tools/list", "tools/call"])
    }))
})

/** A modern HTTP connection whose every request fails with `error` (or succeeds when it is undefined). */
const refusing = (error: TransportError | undefined) => {
  const request: Connection["request"] = (req) =>
    error === undefined ? Stream.make({ message: JsonRpc.success(req.id, { tools: [] }), raw: {} }) : Stream.fail(error)
  return testConnection(request)
}

describe("Session, modern over HTTP: an era in doubt", () => {
  const doubtAfter = (error: TransportError | undefined) =>
    Effect.gen(function*() {
      const session = yield* makeSession("changed", refusing(error), modern, options)
      yield* Effect.ignore(session.request("resources/list"))
      return yield* session.eraDoubt
    })

  it.scoped("a bare 404 or 400, or a 400 with a non-modern error (-32600, -32000), puts the era in doubt", () =>
    Effect.gen(function*() {
      for (
        const e of [
          new HTTPStatusError({ status: 404, body: "Not Found" }),
          new HTTPStatusError({ status: 400, body: "" }),
          new HTTPStatusError({ status: 400, body: "{}", rpcError: { code: ErrorCode.InvalidRequest, message: "Bad Request" } }),
          new HTTPStatusError({ status: 400, body: "{}", rpcError: { code: -32000, message: "Bad Request: No valid session ID" } }),
          new HTTPStatusError({ status: 405, body: "" })
        ]
      ) {
        const doubt = yield* doubtAfter(e)
        assert.isTrue(Option.isSome(doubt), e.message)
        assert.include(Option.getOrThrow(doubt), `HTTP ${e.status}`)
      }
    }))

  it.scoped("a modern error, a 5xx, an auth refusal or a success leaves the era alone", () =>
    Effect.gen(function*() {
      for (
        const e of [
          new HTTPStatusError({ status: 400, body: "{}", rpcError: { code: ErrorCode.HeaderMismatch, message: "header" } }),
          new HTTPStatusError({ status: 503, body: "" }),
          new HTTPStatusError({ status: 401, body: "" }),
          undefined
        ]
      ) {
        assert.isTrue(Option.isNone(yield* doubtAfter(e)), e?.message ?? "success")
      }
    }))
})
