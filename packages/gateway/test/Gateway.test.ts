import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Gateway } from "../src/Gateway.js"
import * as Names from "../src/Names.js"
import * as Settings from "@mcpx-fx/config/Settings"
import { era, layer as gatewayFor } from "@mcpx-fx/testing/gateway/TestGateway"

const names = (items: ReadonlyArray<Record<string, unknown>>) => items.map((t) => String(t.name)).sort()

describe("Gateway", () => {
  it.scopedLive("gateway/names/tools-are-namespaced-and-listing-survives-a-broken-server", () =>
    Effect.gen(function*() {
      const gateway = yield* Gateway
      const listing = yield* gateway.listTools({})
      const got = names(listing.items)
      assert.include(got, "alpha__hello")
      assert.include(got, "beta_2__echo")
      assert.deepStrictEqual(listing.failures.map((f) => f.server), ["broken"])
      assert.include(listing.failures[0]!.message, "broken")
    }).pipe(
      Effect.provide(gatewayFor({
        alpha: era("dual"),
        "beta-2": era("legacy-32601"),
        broken: { command: process.execPath, args: ["-e", "process.stderr.write('no token configured'); process.exit(4)"] }
      }))
    ))

  it.scopedLive("gateway/calls/routed-to-the-right-server-in-its-own-era", () =>
    Effect.gen(function*() {
      const gateway = yield* Gateway
      const a = yield* gateway.callTool({}, "alpha__hello", {})
      const b = yield* gateway.callTool({}, "beta__hello", {})
      assert.include(JSON.stringify(a.content), "over modern")
      assert.include(JSON.stringify(b.content), "over legacy")
      const echoed = yield* gateway.callTool({}, "beta__echo", { message: "line one\nline two" })
      assert.include(JSON.stringify(echoed.content), "line one\\nline two")
      const failed = yield* gateway.callTool({}, "alpha__boom", {})
      assert.isTrue(failed.isError === true)
    }).pipe(Effect.provide(gatewayFor({ alpha: era("dual"), beta: era("legacy-32601") }))))

  it.scopedLive("gateway/calls/a runtime change of a hot setting reaches the next call", () =>
    Effect.gen(function*() {
      const gateway = yield* Gateway
      const settings = yield* Settings.Settings
      const slept = yield* gateway.callTool({}, "alpha__slow", { ms: 300 })
      assert.include(JSON.stringify(slept.content), "slept 300ms")
      yield* settings.set("pool.callTimeout", "100ms")
      const cut = yield* Effect.flip(gateway.callTool({}, "alpha__slow", { ms: 5000 }))
      assert.strictEqual(cut._tag, "CallTimedOut")
      yield* settings.unset("pool.callTimeout")
      const again = yield* gateway.callTool({}, "alpha__slow", { ms: 300 })
      assert.include(JSON.stringify(again.content), "slept 300ms")
    }).pipe(Effect.provide(gatewayFor({ alpha: era("legacy-32601") }))))

  it.scopedLive("gateway/calls/unknown-tools-name-the-closest-ones", () =>
    Effect.gen(function*() {
      const gateway = yield* Gateway
      const e = yield* Effect.flip(gateway.callTool({}, "alpha__helo", {}))
      assert.strictEqual(e._tag, "UnknownName")
      assert.include(e.message, "alpha__hello")
      const bare = yield* Effect.flip(gateway.callTool({}, "echo", {}))
      assert.include(bare.message, "alpha__echo")
    }).pipe(Effect.provide(gatewayFor({ alpha: era("dual") }))))

  it.scopedLive("gateway/names/a-single-server-with-prefixing-off-keeps-its-names", () =>
    Effect.gen(function*() {
      const gateway = yield* Gateway
      const listing = yield* gateway.listTools({})
      assert.include(names(listing.items), "hello")
      const resources = yield* gateway.listResources({})
      assert.isTrue(resources.items.some((r) => r.uri === "era://readme"))
      const r = yield* gateway.callTool({}, "hello", {})
      assert.include(JSON.stringify(r.content), "over modern")
    }).pipe(Effect.provide(gatewayFor({ only: era("dual") }, { settings: { "names.prefix": false } }))))

  it.scopedLive("gateway/names/resources-are-rehomed-under-mcpx-and-read-back", () =>
    Effect.gen(function*() {
      const gateway = yield* Gateway
      const listing = yield* gateway.listResources({})
      const uri = listing.items.map((r) => String(r.uri)).find((u) => u.startsWith("mcpx://alpha/"))
      assert.strictEqual(uri, "mcpx://alpha/era://readme")
      const read = yield* gateway.readResource({}, uri!)
      // What a read hands back names the resource as the host knows it.
      const contents = read.contents as ReadonlyArray<Record<string, unknown>>
      assert.deepStrictEqual(contents.map((c) => c.uri), ["mcpx://alpha/era://readme"])
    }).pipe(Effect.provide(gatewayFor({ alpha: era("dual") }))))

  it.scopedLive("gateway/names/a tool's resource link is re-homed so the host can read it back", () =>
    Effect.gen(function*() {
      const gateway = yield* Gateway
      const result = yield* gateway.callTool({}, "alpha__structured", {})
      const blocks = result.content as ReadonlyArray<Record<string, unknown>>
      const link = blocks.find((b) => b.type === "resource_link")
      assert.strictEqual(link?.uri, "mcpx://alpha/era://readme")
      const read = yield* gateway.readResource({}, String(link?.uri))
      assert.include(JSON.stringify(read.contents), "text")
    }).pipe(Effect.provide(gatewayFor({ alpha: era("dual") }))))

  it("gateway/names/embedded resources and prompt messages are re-homed; unprefixed servers are left alone", () => {
    const alpha = { namespace: "alpha", prefixed: true }
    const embedded = { type: "resource", resource: { uri: "file:///a", text: "x" } }
    assert.deepStrictEqual(
      Names.qualifyResult(alpha, "prompts/get", { messages: [{ role: "user", content: embedded }] }),
      { messages: [{ role: "user", content: { type: "resource", resource: { uri: "mcpx://alpha/file:///a", text: "x" } } }] }
    )
    const plain = { namespace: "alpha", prefixed: false }
    const result = { content: [{ type: "resource_link", uri: "file:///a", name: "a" }] }
    assert.strictEqual(Names.qualifyResult(plain, "tools/call", result), result)
  })

  it.scopedLive("gateway/protocol/reports-preference-era-and-source-per-server", () =>
    Effect.gen(function*() {
      const gateway = yield* Gateway
      yield* gateway.callTool({}, "old__hello", {})
      yield* gateway.callTool({}, "new__hello", {})
      const rows = yield* gateway.protocol
      const old = rows.find((r) => r.server === "old")!
      const fresh = rows.find((r) => r.server === "new")!
      assert.strictEqual(old.preference, "force-initialize")
      assert.strictEqual(old.eraSource, "forced")
      assert.strictEqual(old.era, "legacy")
      assert.strictEqual(fresh.preference, "prefer-discover")
      assert.strictEqual(fresh.era, "modern")
      assert.strictEqual(fresh.cached?.era, "modern")
      const report = yield* gateway.probe("new")
      assert.strictEqual(report.eraSource, "probe")
      assert.isTrue(report.steps.some((s) => s.includes("server/discover")))
    }).pipe(
      Effect.provide(gatewayFor({ old: { ...era("dual"), protocol: "force-legacy" }, new: era("dual") }))
    ))
})
