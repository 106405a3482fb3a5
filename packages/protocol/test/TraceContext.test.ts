import { assert, describe, it } from "@effect/vitest"
import * as TraceContext from "@mcpx-fx/protocol/TraceContext"
import * as Tracing from "@mcpx-fx/protocol/Tracing"
import * as Effect from "effect/Effect"

const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
const span = "00f067aa0ba902b7"

describe("TraceContext", () => {
  it("reads a version-00 traceparent and its sampled flag", () => {
    assert.deepStrictEqual(TraceContext.parseTraceparent(`00-${trace}-${span}-01`), { traceId: trace, spanId: span, sampled: true })
    assert.deepStrictEqual(TraceContext.parseTraceparent(`00-${trace}-${span}-00`), { traceId: trace, spanId: span, sampled: false })
    assert.strictEqual(TraceContext.formatTraceparent({ traceId: trace, spanId: span, sampled: true }), `00-${trace}-${span}-01`)
  })

  it("reads a later version's first four fields, ignoring what it appends", () => {
    assert.deepStrictEqual(TraceContext.parseTraceparent(`cc-${trace}-${span}-03-what-comes-next`), { traceId: trace, spanId: span, sampled: true })
  })

  it("ignores every malformed traceparent", () => {
    const malformed: ReadonlyArray<unknown> = [
      undefined,
      null,
      42,
      { traceId: trace },
      "",
      `00-${trace}-${span}`,
      `00-${trace.toUpperCase()}-${span}-01`,
      `00-${trace}-${span.toUpperCase()}-01`,
      `00-${"0".repeat(32)}-${span}-01`,
      `00-${trace}-${"0".repeat(16)}-01`,
      `ff-${trace}-${span}-01`,
      `00-${trace}-${span}-01-extra`,
      `00-${trace}-${span}-1`,
      `00-${trace}0-${span}-01`,
      ` 00-${trace}-${span}-01`,
      `00_${trace}_${span}_01`,
      `0g-${trace}-${span}-01`
    ]
    for (const value of malformed) assert.isUndefined(TraceContext.parseTraceparent(value), JSON.stringify(value))
  })

  it("keeps a valid tracestate and drops a malformed one", () => {
    assert.strictEqual(TraceContext.parseTracestate("vendor=abc"), "vendor=abc")
    assert.strictEqual(
      TraceContext.parseTracestate("rojo=00f067aa0ba902b7, congo=t61rcWkgMzE,tenant@sys=x"),
      "rojo=00f067aa0ba902b7, congo=t61rcWkgMzE,tenant@sys=x"
    )
    for (
      const value of [
        undefined,
        1,
        "",
        ",",
        "Upper=x",
        "novalue",
        "k=v=w",
        "k=a,b",
        "x".repeat(513),
        Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(",")
      ]
    ) {
      assert.isUndefined(TraceContext.parseTracestate(value), JSON.stringify(value))
    }
  })
})

describe("Tracing", () => {
  it("names a span after its method and target, the resource URI kept out of the name", () => {
    assert.deepStrictEqual(Tracing.requestSpan("tools/call", { name: "echo" }, 3), {
      name: "tools/call echo",
      attributes: { "mcp.method.name": "tools/call", "jsonrpc.request.id": "3", "gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool" }
    })
    assert.strictEqual(Tracing.requestSpan("prompts/get", { name: "p" }).name, "prompts/get p")
    const read = Tracing.requestSpan("resources/read", { uri: "file:///a" })
    assert.strictEqual(read.name, "resources/read")
    assert.strictEqual(read.attributes["mcp.resource.uri"], "file:///a")
  })

  it("parents nothing on a malformed traceparent, and drops a malformed tracestate", () => {
    assert.isUndefined(Tracing.parentSpan("00-nope", "vendor=abc"))
    const parent = Tracing.parentSpan(`00-${trace}-${span}-01`, "Bad State")
    assert.isDefined(parent)
    if (parent !== undefined) assert.isUndefined(Tracing.traceStateOf(parent))
  })

  it.effect("puts a span's own context, and the host's tracestate, in a request's _meta", () =>
    Effect.gen(function*() {
      const parent = Tracing.parentSpan(`00-${trace}-${span}-01`, "vendor=abc")
      assert.isDefined(parent)
      if (parent === undefined) return
      const params = yield* Effect.useSpan("child", { parent }, (child) =>
        Effect.succeed({ params: Tracing.propagate({ name: "x", _meta: { progressToken: 1, tracestate: "old=1" } }, child), id: child.spanId }))
      assert.deepStrictEqual(params.params, {
        name: "x",
        _meta: { progressToken: 1, traceparent: `00-${trace}-${params.id}-01`, tracestate: "vendor=abc" }
      })
    }))

  it.effect("leaves a request as it is under a span that is not recorded", () =>
    Effect.gen(function*() {
      const sent = { name: "x", _meta: { traceparent: `00-${trace}-${span}-00` } }
      const out = yield* Effect.useSpan("child", (child) => Effect.succeed(Tracing.propagate(sent, child))).pipe(Effect.withTracerEnabled(false))
      assert.strictEqual(out, sent)
    }))
})
