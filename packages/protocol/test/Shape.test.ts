import { assert, describe, it } from "@effect/vitest"
import * as Shape from "../src/Shape.js"

const serverInfo = { name: "mcpx-fx", version: "0.1.0" }

describe("Shape.toModern", () => {
  it("adds resultType complete when absent and keeps a present one", () => {
    assert.strictEqual(Shape.toModern({ content: [] }, "tools/call").resultType, "complete")
    assert.strictEqual(Shape.toModern({ resultType: "task", taskId: "t" }, "tools/call").resultType, "task")
    // One that is not a string is not a result type: the result reads as complete.
    assert.strictEqual(Shape.toModern({ content: [], resultType: 5 }, "tools/call").resultType, "complete")
  })

  it("adds caching hints to cacheable complete results only", () => {
    for (const method of ["server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"]) {
      const r = Shape.toModern({}, method, { ttlMs: 5000, cacheScope: "public" })
      assert.strictEqual(r.ttlMs, 5000, method)
      assert.strictEqual(r.cacheScope, "public", method)
    }
    const call = Shape.toModern({ content: [] }, "tools/call", { ttlMs: 5000 })
    assert.isFalse("ttlMs" in call)
    assert.isFalse("cacheScope" in call)
  })

  it("defaults to immediately stale and private, and keeps the result's own hints", () => {
    assert.deepStrictEqual(Shape.toModern({ tools: [] }, "tools/list"), { tools: [], resultType: "complete", ttlMs: 0, cacheScope: "private" })
    const own = Shape.toModern({ tools: [], ttlMs: 60000, cacheScope: "public" }, "tools/list", { ttlMs: 1, cacheScope: "private" })
    assert.strictEqual(own.ttlMs, 60000)
    assert.strictEqual(own.cacheScope, "public")
    assert.strictEqual(Shape.toModern({ tools: [], ttlMs: -5 }, "tools/list").ttlMs, 0)
  })

  it("never puts caching hints on input_required", () => {
    const r = Shape.toModern({ resultType: "input_required", requestState: "s", ttlMs: 5, cacheScope: "public" }, "resources/read", { ttlMs: 9 })
    assert.deepStrictEqual(r, { resultType: "input_required", requestState: "s" })
  })

  it("2026-07-28/shaping/server identity in _meta is mcpx-fx's, beside other keys, replacing an upstream's", () => {
    const r = Shape.toModern({ content: [], _meta: { a: 1 } }, "tools/call", { serverInfo })
    assert.deepStrictEqual(r._meta, { a: 1, "io.modelcontextprotocol/serverInfo": serverInfo })
    const upstream = { name: "up", version: "1" }
    const replaced = Shape.toModern({ content: [], _meta: { "io.modelcontextprotocol/serverInfo": upstream } }, "tools/call", { serverInfo })
    assert.deepStrictEqual(replaced._meta, { "io.modelcontextprotocol/serverInfo": serverInfo })
  })

  it("does not mutate its input", () => {
    const input = { tools: [] }
    Shape.toModern(input, "tools/list", { serverInfo })
    assert.deepStrictEqual(input, { tools: [] })
  })
})

describe("Shape: reading legacy results as modern", () => {
  it("reads absent resultType as complete and absent or negative ttlMs as 0", () => {
    assert.strictEqual(Shape.resultTypeOf({}), "complete")
    assert.strictEqual(Shape.resultTypeOf({ resultType: "input_required" }), "input_required")
    assert.strictEqual(Shape.ttlMsOf({}), 0)
    assert.strictEqual(Shape.ttlMsOf({ ttlMs: -1 }), 0)
    assert.strictEqual(Shape.ttlMsOf({ ttlMs: "10" }), 0)
    assert.strictEqual(Shape.ttlMsOf({ ttlMs: 10 }), 10)
  })

  it("upgrades a legacy tools/list result", () => {
    assert.deepStrictEqual(Shape.upgrade({ tools: [{ name: "t", inputSchema: { type: "object" } }] }, "tools/list"), {
      tools: [{ name: "t", inputSchema: { type: "object" } }],
      resultType: "complete",
      ttlMs: 0,
      cacheScope: "private"
    })
  })

  it("moves legacy resource-not-found to -32602", () => {
    assert.strictEqual(Shape.upgradeErrorCode(-32002), -32602)
    assert.strictEqual(Shape.upgradeErrorCode(-32601), -32601)
  })
})

describe("Shape.downgrade", () => {
  it("strips resultType, ttlMs and cacheScope for every legacy caller", () => {
    for (const rev of ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] as const) {
      const r = Shape.downgrade({ tools: [], resultType: "complete", ttlMs: 1, cacheScope: "public", nextCursor: "c" }, "tools/list", rev)
      assert.deepStrictEqual(r, { tools: [], nextCursor: "c" }, rev)
    }
  })

  it("2025-11-25/shaping/an-upstream-serverInfo-in-result-meta-is-not-passed-to-a-legacy-caller", () => {
    const upstream = { "io.modelcontextprotocol/serverInfo": { name: "upstream", version: "9" } }
    for (const rev of ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] as const) {
      const only = Shape.downgrade({ content: [], _meta: upstream }, "tools/call", rev)
      assert.deepStrictEqual(only, { content: [] }, rev)
      const mixed = Shape.downgrade({ tools: [], _meta: { ...upstream, "com.example/trace": "t-1" } }, "tools/list", rev)
      assert.deepStrictEqual(mixed, { tools: [], _meta: { "com.example/trace": "t-1" } }, rev)
    }
  })

  it("turns structured content into appended text before 2025-06-18 and drops it", () => {
    const r = Shape.downgrade({ content: [{ type: "text", text: "Weather:" }], structuredContent: { temp: 21 } }, "tools/call", "2025-03-26")
    assert.deepStrictEqual(r, { content: [{ type: "text", text: "Weather:" }, { type: "text", text: "{\"temp\":21}" }] })
  })

  it("does not duplicate structured content a text block already carries", () => {
    const r = Shape.downgrade({ content: [{ type: "text", text: "{ \"temp\": 21 }" }], structuredContent: { temp: 21 } }, "tools/call", "2024-11-05")
    assert.deepStrictEqual(r, { content: [{ type: "text", text: "{ \"temp\": 21 }" }] })
  })

  it("keeps object structured content from 2025-06-18 on, and turns other JSON into text", () => {
    const obj = { content: [], structuredContent: { a: 1 } }
    assert.deepStrictEqual(Shape.downgrade(obj, "tools/call", "2025-06-18"), obj)
    assert.deepStrictEqual(Shape.downgrade({ content: [], structuredContent: [1, 2] }, "tools/call", "2025-11-25"), {
      content: [{ type: "text", text: "[1,2]" }]
    })
    assert.deepStrictEqual(Shape.downgrade({ content: [], structuredContent: null }, "tools/call", "2025-11-25"), {
      content: [{ type: "text", text: "null" }]
    })
  })

  it("turns resource links into text before 2025-06-18 and keeps them after", () => {
    const link = { type: "resource_link", uri: "file:///notes.md", name: "notes", description: "My notes", mimeType: "text/markdown" }
    const old = Shape.downgrade({ content: [link] }, "tools/call", "2025-03-26")
    assert.deepStrictEqual(old, { content: [{ type: "text", text: "notes: file:///notes.md\nMy notes" }] })
    assert.deepStrictEqual(Shape.downgrade({ content: [link] }, "tools/call", "2025-06-18"), { content: [link] })
  })

  it("turns audio into text for 2024-11-05 only", () => {
    const audio = { type: "audio", data: "UklGRg==", mimeType: "audio/wav" }
    const r = Shape.downgrade({ content: [audio] }, "tools/call", "2024-11-05")
    assert.deepStrictEqual(r, { content: [{ type: "text", text: "[audio/wav audio omitted: MCP 2024-11-05 cannot carry audio]" }] })
    assert.deepStrictEqual(Shape.downgrade({ content: [audio] }, "tools/call", "2025-03-26"), { content: [audio] })
  })

  it("drops annotation and _meta fields content blocks lacked before 2025-06-18", () => {
    const block = { type: "text", text: "x", annotations: { priority: 1, lastModified: "2025-01-01T00:00:00Z" }, _meta: { a: 1 } }
    assert.deepStrictEqual(Shape.downgrade({ content: [block] }, "tools/call", "2025-03-26"), {
      content: [{ type: "text", text: "x", annotations: { priority: 1 } }]
    })
    assert.deepStrictEqual(Shape.downgrade({ content: [block] }, "tools/call", "2025-06-18"), { content: [block] })
  })

  const tool = {
    name: "t",
    title: "T",
    description: "d",
    inputSchema: { type: "object" },
    outputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true },
    icons: [{ src: "data:," }],
    execution: { taskSupport: "optional" },
    _meta: { a: 1 }
  }

  it("strips tool fields per revision", () => {
    const at = (rev: "2024-11-05" | "2025-03-26" | "2025-06-18" | "2025-11-25") =>
      Object.keys((Shape.downgrade({ tools: [tool] }, "tools/list", rev).tools as ReadonlyArray<Record<string, unknown>>)[0] ?? {}).sort()
    assert.deepStrictEqual(at("2024-11-05"), ["description", "inputSchema", "name"])
    assert.deepStrictEqual(at("2025-03-26"), ["annotations", "description", "inputSchema", "name"])
    assert.deepStrictEqual(at("2025-06-18"), ["_meta", "annotations", "description", "inputSchema", "name", "outputSchema", "title"])
    assert.deepStrictEqual(at("2025-11-25"), Object.keys(tool).sort())
  })

  it("drops a non-object output schema for legacy callers", () => {
    const t = { name: "t", inputSchema: { type: "object" }, outputSchema: { type: "array" } }
    assert.deepStrictEqual(Shape.downgrade({ tools: [t] }, "tools/list", "2025-11-25"), { tools: [{ name: "t", inputSchema: { type: "object" } }] })
  })

  it("strips prompt, resource and template fields per revision", () => {
    const prompt = { name: "p", title: "P", icons: [], arguments: [{ name: "a", title: "A", required: true }] }
    assert.deepStrictEqual(Shape.downgrade({ prompts: [prompt] }, "prompts/list", "2025-03-26"), {
      prompts: [{ name: "p", arguments: [{ name: "a", required: true }] }]
    })
    assert.deepStrictEqual(Shape.downgrade({ prompts: [prompt] }, "prompts/list", "2025-06-18"), {
      prompts: [{ name: "p", title: "P", arguments: [{ name: "a", title: "A", required: true }] }]
    })
    const resource = { uri: "file:///a", name: "a", title: "A", icons: [], annotations: { lastModified: "x", priority: 0 } }
    assert.deepStrictEqual(Shape.downgrade({ resources: [resource] }, "resources/list", "2024-11-05"), {
      resources: [{ uri: "file:///a", name: "a", annotations: { priority: 0 } }]
    })
    const template = { uriTemplate: "file:///{x}", name: "t", title: "T", icons: [] }
    assert.deepStrictEqual(Shape.downgrade({ resourceTemplates: [template] }, "resources/templates/list", "2025-11-25"), { resourceTemplates: [template] })
    assert.deepStrictEqual(Shape.downgrade({ resourceTemplates: [template] }, "resources/templates/list", "2025-06-18"), {
      resourceTemplates: [{ uriTemplate: "file:///{x}", name: "t", title: "T" }]
    })
  })

  it("downgrades prompt message content", () => {
    const r = Shape.downgrade({ messages: [{ role: "user", content: { type: "audio", data: "", mimeType: "audio/ogg" } }] }, "prompts/get", "2024-11-05")
    assert.deepStrictEqual(r, { messages: [{ role: "user", content: { type: "text", text: "[audio/ogg audio omitted: MCP 2024-11-05 cannot carry audio]" } }] })
  })

  it("downgrades an initialize result's identity and capabilities", () => {
    const r = Shape.downgrade(
      {
        protocolVersion: "2024-11-05",
        serverInfo: { name: "s", version: "1", title: "S", icons: [], websiteUrl: "https://x" },
        capabilities: { tools: {}, completions: {}, tasks: {} }
      },
      "initialize",
      "2024-11-05"
    )
    assert.deepStrictEqual(r, { protocolVersion: "2024-11-05", serverInfo: { name: "s", version: "1" }, capabilities: { tools: {} } })
  })

  it("leaves other results alone apart from the modern-only fields, and unknown fields everywhere", () => {
    assert.deepStrictEqual(Shape.downgrade({ completion: { values: [] }, resultType: "complete", x: 1 }, "completion/complete", "2025-03-26"), {
      completion: { values: [] },
      x: 1
    })
    assert.deepStrictEqual(Shape.downgrade({ content: [{ type: "text", text: "t", vendor: true }], extra: 2 }, "tools/call", "2024-11-05"), {
      content: [{ type: "text", text: "t", vendor: true }],
      extra: 2
    })
  })

  it("does not mutate its input", () => {
    const input = { content: [{ type: "resource_link", uri: "u", name: "n" }], structuredContent: { a: 1 }, resultType: "complete" }
    const copy = JSON.parse(JSON.stringify(input))
    Shape.downgrade(input, "tools/call", "2024-11-05")
    assert.deepStrictEqual(input, copy)
  })
})
