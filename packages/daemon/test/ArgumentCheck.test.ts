import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Effect from "effect/Effect"
import * as ArgumentCheck from "../src/ArgumentCheck.js"
import type { Gateway } from "@mcpx-fx/gateway/Gateway"
import * as CallResolution from "@mcpx-fx/gateway/CallResolution"
import { type GatewayServer, UnknownName } from "@mcpx-fx/gateway/GatewayModel"

// The check reads only the tool's definition: a gateway that knows a few tools by name, in place.
const server = { name: "t", namespace: "t", prefixed: false } as GatewayServer
const gatewayOf = (tools: Record<string, JsonObject>) => {
  const resolution = (name: string) => {
    const tool = tools[name]
    return tool === undefined ? undefined : CallResolution.resolved([server], name, { server, name }, tool)
  }
  const stub: Pick<Gateway["Type"], "peekTool" | "resolveTool"> = {
    peekTool: resolution,
    resolveTool: (_caller, name) => Effect.fail(new UnknownName({ kind: "tool", name, suggestions: Object.keys(tools) }))
  }
  return stub as Gateway["Type"]
}

const gateway = gatewayOf({
  search: {
    name: "search",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $id: "shared",
      type: "object",
      properties: { query: { type: "string" }, filter: { type: "object", properties: { state: { enum: ["open", "closed"] } } } },
      required: ["query"],
      additionalProperties: false
    }
  },
  count: {
    name: "count",
    inputSchema: { $schema: "http://json-schema.org/draft-07/schema#", $id: "shared", type: "object", properties: { n: { type: "integer" } } }
  },
  third: { name: "third", inputSchema: { $id: "shared", type: "object", properties: { flag: { type: "boolean" } } } },
  remote: { name: "remote", inputSchema: { type: "object", properties: { x: { $ref: "https://example.com/x.json" } } } }
})

const refusal = (tool: string, args: unknown) =>
  Effect.flip(ArgumentCheck.check(gateway, {}, tool, args)).pipe(
    Effect.map((e) => (e._tag === "BadArguments" ? { field: e.field, detail: e.detail } : { tag: e._tag }))
  )

describe("ArgumentCheck", () => {
  it.effect("names the first argument that does not fit, nested ones by their path", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* refusal("search", { query: 1 }), { field: "query", detail: "query must be string" })
      assert.deepStrictEqual(yield* refusal("search", {}), { field: "query", detail: "query is required" })
      assert.deepStrictEqual(yield* refusal("search", { query: "x", limit: 2 }), { field: "limit", detail: "limit is not an argument of this tool" })
      assert.deepStrictEqual(
        yield* refusal("search", { query: "x", filter: { state: "shut" } }),
        { field: "filter.state", detail: "filter.state must be equal to one of the allowed values" }
      )
      assert.deepStrictEqual(yield* refusal("search", ["x"]), { field: undefined, detail: "arguments must be a JSON object, got an array" })
    }))

  it.effect("reads 2020-12 and draft-07 schemas, any number with the same $id alike", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* refusal("count", { n: 1.5 }), { field: "n", detail: "n must be integer" })
      assert.deepStrictEqual(yield* refusal("third", { flag: "yes" }), { field: "flag", detail: "flag must be boolean" })
      assert.deepStrictEqual((yield* ArgumentCheck.check(gateway, {}, "count", { n: 2 })).args, { n: 2 })
      assert.deepStrictEqual((yield* ArgumentCheck.check(gateway, {}, "search", { query: "x" })).args, { query: "x" })
    }))

  it.effect("a schema it cannot compile checks nothing; an unknown tool fails as the call would", () =>
    Effect.gen(function*() {
      const remote = yield* ArgumentCheck.check(gateway, {}, "remote", { x: 1 })
      assert.deepStrictEqual(remote.args, { x: 1 })
      // The resolution the check made is handed on for the call, not made again by it.
      assert.strictEqual(remote.resolution.asked, "remote")
      assert.strictEqual(remote.resolution.tool, gateway.peekTool("remote")?.tool)
      assert.deepStrictEqual(yield* refusal("serch", {}), { tag: "UnknownName" })
    }))
})
