/**
 * OpenTelemetry traces through the bundled daemon: with the OTLP variables pointing at a test
 * receiver, a host's trace context (a 2026-07-28 request's `_meta.traceparent`, a legacy
 * session's HTTP `traceparent` header) parents mcpx-fx's SERVER span; the upstream request gets a
 * CLIENT span under it, whose context the upstream receives in its `_meta`. The exporter's batch
 * delay is a minute, so the spans arrive only because the daemon sends them as it stops.
 * Only mcpx-fx's spans and what runs inside them leave: no span Effect code makes on its own
 * (`Config.load`, `sql.execute`, …) arrives as a root.
 */
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import { existsSync, readFileSync } from "node:fs"
import * as DaemonProcess from "./support/DaemonProcess.js"
import { type Endpoint, endpoint, modernHeaders, openSession } from "./support/HttpMcp.js"
import * as OtlpReceiver from "./support/OtlpReceiver.js"
import { firstText } from "./support/Replies.js"
import { sandbox } from "./support/Sandbox.js"
import { era, type Message } from "./support/StdioServe.js"

const ModernTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
const ModernParent = "00f067aa0ba902b7"
const LegacyTrace = "0af7651916cd43dd8448eb211c80319c"
const LegacyParent = "b7ad6b7169203331"
const FailTrace = "11111111111111111111111111111111"
const ErrorTrace = "22222222222222222222222222222222"
const AskTrace = "33333333333333333333333333333333"
const HttpTrace = "44444444444444444444444444444444"

/** mcpx-fx's own spans: the MCP ones (which name their method) and the `mcpx.*` ones. */
const isOwn = (span: OtlpReceiver.ReceivedSpan) => span.attributes["mcp.method.name"] !== undefined || span.name.startsWith("mcpx.")

interface Seen {
  readonly method: string
  readonly traceparent?: string
  readonly tracestate?: string
}

const traceLog = (file: string): ReadonlyArray<Seen> =>
  existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as Seen) : []

/** A 2026-07-28 `tools/call` of the upstream's echo, with `meta` added to its `_meta`. */
const modernCall = (http: Endpoint, id: number, message: string, meta: Message, tool = "era__echo") =>
  http.post({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: {
      name: tool,
      arguments: { message },
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { name: "trace-test", version: "1.0.0" },
        ...meta
      }
    }
  }, { headers: modernHeaders("tools/call", tool) })

describe("telemetry", () => {
  it.scoped("telemetry/traces: host trace context parents the server span, the client span is its child, the upstream sees it", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiver.start
      const sb = yield* sandbox
      const seen = sb.path("trace.log")
      const legacyHttp = yield* Effect.orDie(Fixtures.startHttpFixture("era-server", ["--mode", "legacy-32601"]))
      const config = yield* sb.writeJson("mcpx.json", {
        mcpServers: {
          era: { ...era("dual"), env: { ERA_TRACE_LOG: seen } },
          leg: era("legacy-32601"),
          lh: { transport: "http", url: legacyHttp.url }
        }
      })
      const daemon = yield* Effect.orDie(DaemonProcess.start(sb, {
        config,
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          OTEL_SERVICE_NAME: "mcpx-test",
          OTEL_BSP_SCHEDULE_DELAY: "60000"
        }
      }))
      const http = endpoint(daemon.info.mcp)

      // 2026-07-28: the trace context in `_meta`, with a tracestate that travels on.
      const modern = yield* modernCall(http, 7, "traced", { traceparent: `00-${ModernTrace}-${ModernParent}-01`, tracestate: "vendor=abc" })
      assert.strictEqual(firstText(modern.body as Message), "traced", modern.text)

      // 2025-11-25: a session, and the trace context in the HTTP header only.
      const session = yield* openSession(http, "2025-11-25")
      const legacy = yield* http.post(
        { jsonrpc: "2.0", id: "l1", method: "tools/call", params: { name: "era__echo", arguments: { message: "legacy" } } },
        { headers: { ...session.headers, traceparent: `00-${LegacyTrace}-${LegacyParent}-01` } }
      )
      assert.strictEqual(firstText(legacy.body as Message), "legacy", legacy.text)

      // A malformed trace context is no error: the call is answered, in a trace of its own.
      const malformed = yield* modernCall(http, 8, "x", { traceparent: `00-${ModernTrace.toUpperCase()}-${ModernParent}-01` })
      assert.strictEqual(firstText(malformed.body as Message), "x", malformed.text)

      // A tool's failure and a JSON-RPC error, each in a trace of its own.
      yield* modernCall(http, 9, "x", { traceparent: `00-${FailTrace}-${ModernParent}-01` }, "era__boom")
      yield* modernCall(http, 10, "x", { traceparent: `00-${ErrorTrace}-${ModernParent}-01` }, "era__nothing")
      // A legacy upstream's question to a host that declared nothing it can be asked: mcpx-fx answers it.
      yield* modernCall(http, 11, "x", { traceparent: `00-${AskTrace}-${ModernParent}-01` }, "leg__ask_name")
      // A legacy Streamable HTTP upstream: its session is named on the client span.
      const overHttp = yield* modernCall(http, 12, "over http", { traceparent: `00-${HttpTrace}-${ModernParent}-01` }, "lh__echo")
      assert.strictEqual(firstText(overHttp.body as Message), "over http", overHttp.text)

      const calls = traceLog(seen).filter((s) => s.method === "tools/call")
      assert.strictEqual(calls.length, 4, JSON.stringify(traceLog(seen)))
      const [modernSeen, legacySeen] = calls

      // A minute's batch delay: what arrives now was sent as the daemon stopped.
      assert.strictEqual(yield* daemon.stop("SIGTERM"), 0)
      const spans = yield* receiver.until((all) => all.filter((s) => s.name === "tools/call era__echo" && s.kind === 2).length >= 3)
      // The modern call: the server span under the host's span.
      const server = spans.find((s) => s.kind === 2 && s.traceId === ModernTrace)
      assert.isDefined(server)
      if (server === undefined) return
      assert.strictEqual(server.parentSpanId, ModernParent)
      assert.strictEqual(server.name, "tools/call era__echo")
      assert.strictEqual(server.serviceName, "mcpx-test")
      assert.deepInclude(server.attributes, {
        "mcp.method.name": "tools/call",
        "mcp.protocol.version": "2026-07-28",
        "gen_ai.tool.name": "era__echo",
        "gen_ai.operation.name": "execute_tool",
        "jsonrpc.request.id": "7",
        "network.transport": "tcp",
        "mcpx.era": "modern"
      })
      assert.notProperty(server.attributes, "mcp.session.id")
      assert.notProperty(server.attributes, "error.type")

      // Its client span: the upstream request, under it, named for the upstream's own tool.
      const client = spans.find((s) => s.kind === 3 && s.traceId === ModernTrace && s.attributes["mcp.method.name"] === "tools/call")
      assert.isDefined(
        client,
        JSON.stringify(spans.map((s) => [s.name, s.kind, s.traceId.slice(0, 6), s.spanId, s.parentSpanId, s.attributes["mcpx.upstream"]]))
      )
      if (client === undefined) return
      assert.strictEqual(client.parentSpanId, server.spanId, JSON.stringify(spans.map((s) => [s.name, s.kind, s.spanId, s.parentSpanId])))
      assert.strictEqual(client.name, "tools/call echo")
      assert.deepInclude(client.attributes, {
        "gen_ai.tool.name": "echo",
        "gen_ai.operation.name": "execute_tool",
        "network.transport": "pipe",
        "mcpx.upstream": "era",
        "mcpx.era": "modern"
      })
      assert.property(client.attributes, "mcpx.era.source")
      assert.property(client.attributes, "mcp.protocol.version")
      assert.property(client.attributes, "jsonrpc.request.id")
      // The pool lane it ran on; a 2026-07-28 upstream has no session to name.
      assert.strictEqual(client.attributes["mcpx.lane"], "modern")
      assert.notProperty(client.attributes, "mcp.session.id")
      assert.strictEqual(server.status.code, 1)
      // The upstream was told mcpx-fx's span, in the host's trace, with the host's tracestate.
      assert.strictEqual(modernSeen?.traceparent, `00-${ModernTrace}-${client.spanId}-01`)
      assert.strictEqual(modernSeen?.tracestate, "vendor=abc")

      // The legacy call: the header parents it, and its session is named.
      const legacyServer = spans.find((s) => s.kind === 2 && s.traceId === LegacyTrace)
      assert.isDefined(legacyServer)
      if (legacyServer === undefined) return
      assert.strictEqual(legacyServer.parentSpanId, LegacyParent)
      assert.deepInclude(legacyServer.attributes, {
        "mcp.protocol.version": "2025-11-25",
        "mcp.session.id": session.id,
        "mcpx.era": "legacy",
        "jsonrpc.request.id": "l1"
      })
      const legacyClient = spans.find((s) => s.kind === 3 && s.traceId === LegacyTrace && s.attributes["mcp.method.name"] === "tools/call")
      assert.isDefined(legacyClient)
      assert.strictEqual(legacyClient?.parentSpanId, legacyServer.spanId)
      assert.strictEqual(legacySeen?.traceparent, `00-${LegacyTrace}-${legacyClient?.spanId}-01`)

      const failed = spans.find((s) => s.kind === 2 && s.traceId === FailTrace)
      assert.strictEqual(failed?.attributes["error.type"], "tool_error")
      const failedUpstream = spans.find((s) => s.kind === 3 && s.traceId === FailTrace)
      assert.strictEqual(failedUpstream?.attributes["error.type"], "tool_error")
      const refused = spans.find((s) => s.kind === 2 && s.traceId === ErrorTrace)
      assert.deepInclude(refused?.attributes, { "error.type": "-32602", "rpc.response.status_code": "-32602" })
      // A JSON-RPC error is the span's error status too, with the error's message.
      assert.strictEqual(refused?.status.code, 2, JSON.stringify(refused?.status))
      assert.match(refused?.status.message ?? "", /nothing/)
      // A tool's own failure is a result, not an error of the request.
      assert.notStrictEqual(failed?.status.code, 2)

      // The legacy HTTP upstream's session, on its client span (and the lane it ran on).
      const overHttpClient = spans.find((s) => s.kind === 3 && s.traceId === HttpTrace && s.attributes["mcp.method.name"] === "tools/call")
      assert.isDefined(overHttpClient, JSON.stringify(spans.filter((s) => s.traceId === HttpTrace).map((s) => s.name)))
      assert.strictEqual(overHttpClient?.attributes["mcpx.era"], "legacy")
      assert.isString(overHttpClient?.attributes["mcp.session.id"])
      assert.isAbove(String(overHttpClient?.attributes["mcp.session.id"]).length, 0)
      assert.property(overHttpClient?.attributes, "mcpx.lane")

      // The question has a span of its own, under the upstream request that asked it.
      const question = spans.find((s) => s.traceId === AskTrace && s.name === "mcpx.question elicitation/create")
      assert.isDefined(question, JSON.stringify(spans.filter((s) => s.traceId === AskTrace).map((s) => s.name)))
      const asking = spans.find((s) => s.kind === 3 && s.traceId === AskTrace && s.attributes["mcp.method.name"] === "tools/call")
      assert.strictEqual(question?.parentSpanId, asking?.spanId)

      // The call without a trace context started a trace of its own.
      const own = spans.filter((s) => s.kind === 2 && s.name === "tools/call era__echo" && ![ModernTrace, LegacyTrace].includes(s.traceId))
      assert.strictEqual(own.length, 1)
      assert.isUndefined(own[0]?.parentSpanId)

      // Every root is mcpx-fx's own, and everything else hangs under a span that arrived: no span
      // of Effect code (the config's load, the state database) reaches the collector on its own.
      const ids = new Set(spans.map((s) => s.spanId))
      const hosts = new Set([ModernParent, LegacyParent])
      const strays = spans.filter((s) => !isOwn(s) && (s.parentSpanId === undefined || (!ids.has(s.parentSpanId) && !hosts.has(s.parentSpanId))))
      assert.deepStrictEqual(strays.map((s) => s.name), [])
      const roots = spans.filter((s) => s.parentSpanId === undefined || !ids.has(s.parentSpanId))
      assert.deepStrictEqual(roots.filter((s) => !isOwn(s)).map((s) => s.name), [])
      // The modern call's trace holds mcpx-fx's spans only.
      assert.deepStrictEqual(spans.filter((s) => s.traceId === ModernTrace && !isOwn(s)).map((s) => s.name), [])
    }), { timeout: 60_000 })
})
