import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Capabilities from "../src/Capabilities.js"
import * as Completion from "../src/Completion.js"
import * as Content from "../src/Content.js"
import * as Elicitation from "../src/Elicitation.js"
import * as ErrorData from "../src/ErrorData.js"
import * as InputRequired from "../src/InputRequired.js"
import * as Lifecycle from "../src/Lifecycle.js"
import * as Method from "../src/Method.js"
import * as Notifications from "../src/Notifications.js"
import * as Prompts from "../src/Prompts.js"
import * as Resources from "../src/Resources.js"
import * as Roots from "../src/Roots.js"
import * as Sampling from "../src/Sampling.js"
import * as Subscriptions from "../src/Subscriptions.js"
import * as Tools from "../src/Tools.js"

const accepts = <A, I>(schema: Schema.Schema<A, I>, value: unknown): A => {
  const r = Schema.decodeUnknownEither(schema)(value)
  if (Either.isLeft(r)) throw new Error(`expected ${JSON.stringify(value)} to decode: ${r.left.message}`)
  return r.right
}
const rejects = <A, I>(schema: Schema.Schema<A, I>, value: unknown): void => {
  assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(schema)(value)), `expected ${JSON.stringify(value)} to be rejected`)
}

describe("Lifecycle", () => {
  it("decodes the spec's discover result, identity in _meta", () => {
    const r = accepts(Lifecycle.DiscoverResult, {
      resultType: "complete",
      supportedVersions: ["2026-07-28"],
      capabilities: { tools: {}, resources: {} },
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "ExampleServer", version: "1.0.0" } },
      instructions: "hi",
      ttlMs: 3600000,
      cacheScope: "public"
    })
    assert.deepStrictEqual(r.supportedVersions, ["2026-07-28"])
    assert.deepStrictEqual(Lifecycle.serverInfoOf(r), { name: "ExampleServer", version: "1.0.0" })
  })

  it("requires resultType, ttlMs and cacheScope on discover, and supportedVersions (not protocolVersions)", () => {
    const base: Record<string, unknown> = { resultType: "complete", supportedVersions: ["2026-07-28"], capabilities: {}, ttlMs: 0, cacheScope: "private" }
    accepts(Lifecycle.DiscoverResult, base)
    for (const k of ["resultType", "ttlMs", "cacheScope", "supportedVersions"]) {
      const { [k]: _, ...without } = base
      rejects(Lifecycle.DiscoverResult, without)
    }
    const { supportedVersions: _, ...noVersions } = base
    rejects(Lifecycle.DiscoverResult, { ...noVersions, protocolVersions: ["2026-07-28"] })
  })

  it("builds a discover result that decodes", () => {
    const built = Lifecycle.discoverResult({
      supportedVersions: ["2026-07-28"],
      capabilities: { tools: { listChanged: true } },
      serverInfo: { name: "mcpx-fx", version: "0.1.0" },
      ttlMs: 0,
      cacheScope: "private"
    })
    accepts(Lifecycle.DiscoverResult, built)
    assert.isFalse("serverInfo" in built)
    assert.deepStrictEqual(Lifecycle.serverInfoOf(built), { name: "mcpx-fx", version: "0.1.0" })
  })

  it("decodes initialize params and result, and reads a legacy serverInfo", () => {
    accepts(Lifecycle.InitializeParams, {
      protocolVersion: "2025-11-25",
      capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: { form: {}, url: {} }, tasks: { list: {} } },
      clientInfo: { name: "c", version: "1" }
    })
    const r = accepts(Lifecycle.InitializeResult, {
      protocolVersion: "2024-11-05",
      capabilities: { logging: {}, tools: { listChanged: false } },
      serverInfo: { name: "s", version: "2" }
    })
    assert.deepStrictEqual(Lifecycle.serverInfoOf(r), { name: "s", version: "2" })
    rejects(Lifecycle.InitializeParams, { protocolVersion: "2025-11-25", capabilities: {} })
  })
})

describe("Capabilities", () => {
  it("projects client capabilities onto each revision", () => {
    const modern = { roots: {}, sampling: { tools: {} }, elicitation: { form: {}, url: {} }, extensions: { "io.modelcontextprotocol/tasks": {} } }
    assert.deepStrictEqual(Capabilities.clientCapabilitiesFor("2024-11-05", modern), { roots: {}, sampling: {} })
    assert.deepStrictEqual(Capabilities.clientCapabilitiesFor("2025-06-18", modern), { roots: {}, sampling: {}, elicitation: {} })
    assert.deepStrictEqual(Capabilities.clientCapabilitiesFor("2025-11-25", modern), {
      roots: {},
      sampling: { tools: {} },
      elicitation: { form: {}, url: {} }
    })
    const legacy = { roots: { listChanged: true }, tasks: { list: {} }, experimental: { x: {} } }
    assert.deepStrictEqual(Capabilities.clientCapabilitiesFor("2026-07-28", legacy), { experimental: { x: {} }, roots: {} })
    assert.deepStrictEqual(Capabilities.clientCapabilitiesFor("2025-11-25", legacy), legacy)
  })

  it("does not turn URL-only elicitation into form elicitation for revisions without modes", () => {
    assert.deepStrictEqual(Capabilities.clientCapabilitiesFor("2025-06-18", { elicitation: { url: {} } }), {})
    assert.deepStrictEqual(Capabilities.clientCapabilitiesFor("2025-06-18", { elicitation: {} }), { elicitation: {} })
  })

  it("projects server capabilities onto each revision", () => {
    const caps = { tools: {}, completions: {}, logging: {}, tasks: { list: {} }, extensions: { e: {} } }
    assert.deepStrictEqual(Capabilities.serverCapabilitiesFor("2024-11-05", caps), { tools: {}, logging: {} })
    assert.deepStrictEqual(Capabilities.serverCapabilitiesFor("2025-03-26", caps), { tools: {}, logging: {}, completions: {} })
    assert.deepStrictEqual(Capabilities.serverCapabilitiesFor("2025-11-25", caps), { tools: {}, logging: {}, completions: {}, tasks: { list: {} } })
    assert.deepStrictEqual(Capabilities.serverCapabilitiesFor("2026-07-28", caps), { tools: {}, logging: {}, completions: {}, extensions: { e: {} } })
  })

  it("has no tasks key in the modern schemas and no listChanged on modern roots", () => {
    assert.isFalse("tasks" in Capabilities.ModernClientCapabilities.fields)
    assert.isFalse("tasks" in Capabilities.ModernServerCapabilities.fields)
    assert.isTrue("tasks" in Capabilities.LegacyClientCapabilities.fields)
    assert.isTrue("extensions" in Capabilities.ModernServerCapabilities.fields)
  })
})

describe("Content", () => {
  it("decodes every block type and keeps unknown keys", () => {
    const blocks = [
      { type: "text", text: "hi", annotations: { audience: ["user"], priority: 0.5 }, "x-extra": 1 },
      { type: "image", data: "AAAA", mimeType: "image/png" },
      { type: "audio", data: "AAAA", mimeType: "audio/wav" },
      { type: "resource", resource: { uri: "file:///a", text: "t" } },
      { type: "resource", resource: { uri: "file:///b", blob: "AAAA", mimeType: "application/octet-stream" } },
      { type: "resource_link", uri: "file:///c", name: "c", mimeType: "text/plain" }
    ]
    const decoded = accepts(Schema.Array(Content.ContentBlock), blocks)
    assert.deepStrictEqual<unknown>(decoded, blocks)
  })

  it("rejects unknown block types and missing fields", () => {
    rejects(Content.ContentBlock, { type: "video", data: "x" })
    rejects(Content.ContentBlock, { type: "image", data: "x" })
    rejects(Content.ContentBlock, { type: "resource_link", uri: "u" })
  })
})

describe("Tools", () => {
  const tool = {
    name: "get_weather",
    title: "Weather",
    inputSchema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
    outputSchema: { type: "object" },
    annotations: { readOnlyHint: true }
  }

  it("decodes a tool listing", () => {
    const r = accepts(Tools.ListToolsResult, { tools: [tool], nextCursor: "n", ttlMs: 10, cacheScope: "public", resultType: "complete" })
    assert.strictEqual(r.tools[0]?.inputSchema.properties !== undefined, true)
    rejects(Tools.Tool, { name: "x", inputSchema: { type: "array" } })
  })

  it("decodes call params with MRTR retry fields", () => {
    const p = accepts(Tools.CallToolParams, {
      name: "get_weather",
      arguments: { location: "New York" },
      inputResponses: { github_login: { action: "accept", content: { name: "octocat" } } },
      requestState: "opaque"
    })
    assert.strictEqual(p.requestState, "opaque")
  })

  it("allows any JSON structured content only in the modern result", () => {
    const arrayResult = { content: [], structuredContent: [1, 2] }
    accepts(Tools.ModernCallToolResult, arrayResult)
    rejects(Tools.LegacyCallToolResult, arrayResult)
    accepts(Tools.LegacyCallToolResult, { content: [], structuredContent: { a: 1 } })
    assert.strictEqual(Tools.callToolResultFor("2026-07-28"), Tools.ModernCallToolResult)
    assert.strictEqual(Tools.callToolResultFor("2025-06-18"), Tools.LegacyCallToolResult)
  })
})

describe("Resources, prompts, completion, roots", () => {
  it("decodes resources, templates and reads", () => {
    accepts(Resources.ListResourcesResult, { resources: [{ uri: "file:///a", name: "a", size: 3 }] })
    accepts(Resources.ListResourceTemplatesResult, { resourceTemplates: [{ uriTemplate: "file:///{p}", name: "t" }] })
    accepts(Resources.ReadResourceParams, { uri: "file:///a", requestState: "s" })
    accepts(Resources.ReadResourceResult, { contents: [{ uri: "file:///a", text: "x" }] })
    accepts(Resources.SubscribeParams, { uri: "file:///a" })
    accepts(Resources.ResourceUpdatedParams, { uri: "file:///a" })
    rejects(Resources.Resource, { uri: "file:///a" })
  })

  it("decodes prompts", () => {
    accepts(Prompts.ListPromptsResult, { prompts: [{ name: "p", arguments: [{ name: "a", required: true }] }] })
    accepts(Prompts.GetPromptParams, { name: "p", arguments: { a: "1" } })
    rejects(Prompts.GetPromptParams, { name: "p", arguments: { a: 1 } })
    accepts(Prompts.GetPromptResult, { messages: [{ role: "user", content: { type: "text", text: "x" } }] })
  })

  it("decodes completion", () => {
    accepts(Completion.CompleteParams, { ref: { type: "ref/prompt", name: "p" }, argument: { name: "a", value: "v" }, context: { arguments: { b: "c" } } })
    accepts(Completion.CompleteParams, { ref: { type: "ref/resource", uri: "file:///{x}" }, argument: { name: "x", value: "" } })
    rejects(Completion.CompleteParams, { ref: { type: "ref/tool", name: "p" }, argument: { name: "a", value: "v" } })
    accepts(Completion.CompleteResult, { completion: { values: ["a"], hasMore: false } })
  })

  it("decodes roots", () => {
    accepts(Roots.ListRootsResult, { roots: [{ uri: "file:///home", name: "home" }] })
  })
})

describe("Elicitation and sampling", () => {
  it("tells form from URL mode", () => {
    const form = accepts(Elicitation.ElicitParams, {
      message: "Please provide your GitHub username",
      requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] }
    })
    assert.strictEqual(Elicitation.modeOf(form), "form")
    const url = accepts(Elicitation.ElicitParams, { mode: "url", message: "Sign in", url: "https://example.com/auth" })
    assert.strictEqual(Elicitation.modeOf(url), "url")
    rejects(Elicitation.ElicitParams, { mode: "url", message: "no url" })
    rejects(Elicitation.ElicitParams, { mode: "carrier-pigeon", message: "m", requestedSchema: { type: "object", properties: {} } })
  })

  it("decodes elicitation results and the 2025-11-25 completion notification", () => {
    accepts(Elicitation.ElicitResult, { action: "accept", content: { name: "octocat", n: 1, ok: true, tags: ["a"] } })
    accepts(Elicitation.ElicitResult, Elicitation.cancelled)
    rejects(Elicitation.ElicitResult, { action: "maybe" })
    accepts(Elicitation.ElicitationCompleteParams, { elicitationId: "e1" })
  })

  it("decodes sampling requests and results, single or array content", () => {
    accepts(Sampling.CreateMessageParams, {
      messages: [{ role: "user", content: { type: "text", text: "What is the capital of France?" } }],
      maxTokens: 100
    })
    accepts(Sampling.CreateMessageParams, {
      messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "w", input: {} }] }, {
        role: "user",
        content: [{ type: "tool_result", toolUseId: "t1", content: [{ type: "text", text: "sunny" }] }]
      }],
      maxTokens: 10,
      tools: [{ name: "w", inputSchema: { type: "object" } }],
      toolChoice: { mode: "auto" }
    })
    rejects(Sampling.CreateMessageParams, { messages: [] })
    accepts(Sampling.CreateMessageResult, { role: "assistant", content: { type: "text", text: "Paris" }, model: "m", stopReason: "endTurn" })
  })
})

describe("InputRequired (MRTR)", () => {
  const spec = {
    resultType: "input_required",
    inputRequests: {
      github_login: {
        method: "elicitation/create",
        params: {
          mode: "form",
          message: "Please provide your GitHub username",
          requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] }
        }
      },
      capital_of_france: {
        method: "sampling/createMessage",
        params: { messages: [{ role: "user", content: { type: "text", text: "What is the capital of France?" } }], maxTokens: 100 }
      },
      where: { method: "roots/list" }
    },
    requestState: "opaque"
  }

  it("decodes the spec's input_required result", () => {
    const r = accepts(InputRequired.InputRequiredResult, spec)
    assert.deepStrictEqual(Object.keys(r.inputRequests ?? {}), ["github_login", "capital_of_france", "where"])
    assert.isTrue(InputRequired.isInputRequired(spec))
  })

  it("needs inputRequests or requestState, and allows requestState alone", () => {
    accepts(InputRequired.InputRequiredResult, { resultType: "input_required", requestState: "s" })
    rejects(InputRequired.InputRequiredResult, { resultType: "input_required" })
    rejects(InputRequired.InputRequiredResult, { resultType: "complete", requestState: "s" })
  })

  it("rejects input requests other than elicitation, sampling and roots", () => {
    rejects(InputRequired.InputRequiredResult, { resultType: "input_required", inputRequests: { k: { method: "ping" } } })
  })

  it("decodes retry params and recognises a retry", () => {
    const p = {
      inputResponses: {
        github_login: { action: "accept", content: { name: "octocat" } },
        capital_of_france: { role: "assistant", content: { type: "text", text: "Paris" }, model: "m" },
        where: { roots: [] }
      },
      requestState: "opaque"
    }
    accepts(InputRequired.RetryParams, p)
    assert.isTrue(InputRequired.isRetry(p))
    assert.isFalse(InputRequired.isRetry({ name: "x" }))
  })

  it("builds input_required results that decode", () => {
    const built = InputRequired.inputRequired({ requestState: "s" })
    assert.deepStrictEqual(built, { resultType: "input_required", requestState: "s" })
    accepts(InputRequired.InputRequiredResult, built)
  })
})

describe("Subscriptions", () => {
  it("builds the acknowledgement, tags notifications and closes the stream", () => {
    assert.deepStrictEqual(Subscriptions.acknowledged("listen-1", { toolsListChanged: true }), {
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: { toolsListChanged: true }, _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" } }
    })
    accepts(Subscriptions.AcknowledgedParams, Subscriptions.acknowledged("listen-1", {}).params)
    const tagged = Subscriptions.tag({ jsonrpc: "2.0", method: "notifications/tools/list_changed", params: { _meta: { a: 1 } } }, 7)
    assert.deepStrictEqual(tagged.params, { _meta: { a: 1, "io.modelcontextprotocol/subscriptionId": 7 } })
    assert.strictEqual(Subscriptions.subscriptionIdOf(tagged.params), 7)
    assert.deepStrictEqual(Subscriptions.closed("listen-1").result, {
      resultType: "complete",
      _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" }
    })
    accepts(Subscriptions.ListenResult, Subscriptions.closed("listen-1").result)
  })

  it("decodes listen params and honours only what was asked", () => {
    const p = accepts(Subscriptions.ListenParams, { notifications: { toolsListChanged: true, resourceSubscriptions: ["file:///a"] }, _meta: {} })
    assert.isTrue(Subscriptions.wants(p.notifications, Method.NotificationsToolsListChanged))
    assert.isFalse(Subscriptions.wants(p.notifications, Method.NotificationsPromptsListChanged))
    assert.isTrue(Subscriptions.wants(p.notifications, Method.NotificationsResourcesUpdated, { uri: "file:///a" }))
    assert.isFalse(Subscriptions.wants(p.notifications, Method.NotificationsResourcesUpdated, { uri: "file:///b" }))
    assert.isFalse(Subscriptions.wants(p.notifications, Method.NotificationsProgress))
    rejects(Subscriptions.ListenParams, { _meta: {} })
  })
})

describe("Notifications", () => {
  it("decodes the notification params", () => {
    accepts(Notifications.CancelledParams, { requestId: 3, reason: "user" })
    accepts(Notifications.ProgressParams, { progressToken: "t", progress: 1, total: 2, message: "half" })
    rejects(Notifications.ProgressParams, { progress: 1 })
    accepts(Notifications.LoggingMessageParams, { level: "error", data: { m: 1 } })
    rejects(Notifications.LoggingMessageParams, { level: "fatal", data: 1 })
    accepts(Notifications.EmptyNotificationParams, {})
  })

  it("builds notifications", () => {
    assert.deepStrictEqual(Notifications.cancelled(4, "timeout"), {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 4, reason: "timeout" }
    })
    assert.deepStrictEqual(Notifications.initialized, { jsonrpc: "2.0", method: "notifications/initialized" })
  })
})

describe("ErrorData", () => {
  it("builds the three modern errors", () => {
    assert.deepStrictEqual(ErrorData.unsupportedProtocolVersion(1, ["2026-07-28"], "v999.0.0"), {
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32022, message: "Unsupported protocol version: v999.0.0", data: { supported: ["2026-07-28"], requested: "v999.0.0" } }
    })
    assert.deepStrictEqual(ErrorData.missingRequiredClientCapability("a", { elicitation: {} }).error.data, {
      requiredCapabilities: { elicitation: {} }
    })
    const hm = ErrorData.headerMismatch(2, "Mcp-Name header value 'foo' does not match body value 'bar'", "Mcp-Name")
    assert.strictEqual(hm.error.code, -32020)
    accepts(ErrorData.HeaderMismatchData, hm.error.data)
  })

  it("reads -32022 and -32021 data only when well formed", () => {
    const e = ErrorData.unsupportedProtocolVersion(1, ["2026-07-28", "2025-11-25"], "x").error
    assert.deepStrictEqual(Option.getOrThrow(ErrorData.readUnsupportedProtocolVersion(e)).supported, ["2026-07-28", "2025-11-25"])
    assert.isTrue(Option.isNone(ErrorData.readUnsupportedProtocolVersion({ code: -32022, message: "m", data: { requested: "" } })))
    assert.isTrue(Option.isNone(ErrorData.readUnsupportedProtocolVersion({ code: -32602, message: "m", data: e.data })))
    assert.isTrue(
      Option.isSome(ErrorData.readMissingRequiredClientCapability({ code: -32021, message: "m", data: { requiredCapabilities: { sampling: {} } } }))
    )
    assert.isTrue(Option.isNone(ErrorData.readMissingRequiredClientCapability({ code: -32021, message: "m", data: { requiredCapabilities: ["sampling"] } })))
  })
})

describe("Method", () => {
  it("knows which methods each revision has", () => {
    assert.isTrue(Method.isClientRequestIn("2024-11-05", "initialize"))
    assert.isFalse(Method.isClientRequestIn("2026-07-28", "initialize"))
    assert.isFalse(Method.isClientRequestIn("2026-07-28", "ping"))
    assert.isTrue(Method.isClientRequestIn("2026-07-28", "server/discover"))
    assert.isFalse(Method.isClientRequestIn("2025-11-25", "server/discover"))
    assert.isTrue(Method.isClientRequestIn("2025-11-25", "tasks/result"))
    assert.isFalse(Method.isClientRequestIn("2025-06-18", "tasks/get"))
    assert.isFalse(Method.isClientRequestIn("2026-07-28", "tasks/get"))
    assert.isFalse(Method.isClientRequestIn("2025-11-25", "subscriptions/listen"))
  })

  it("lists the cacheable and MRTR-capable methods", () => {
    assert.deepStrictEqual([...Method.CacheableMethods].sort(), [
      "prompts/list",
      "resources/list",
      "resources/read",
      "resources/templates/list",
      "server/discover",
      "tools/list"
    ])
    assert.isFalse(Method.isCacheable("tools/call"))
    assert.deepStrictEqual([...Method.InputRequiredMethods].sort(), ["prompts/get", "resources/read", "tools/call"])
    assert.isFalse(Method.allowsInputRequired("tools/list"))
  })
})
