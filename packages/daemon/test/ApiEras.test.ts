/**
 * `/v1` against upstreams whose era matters: the caller's revision on `/v1/call` picks the
 * `follow` lane, `/v1/probe/{server}` probes afresh, an HTTP upstream that changes era under a
 * running gateway (either way) is probed again, and a strict modern HTTP upstream gets its Mcp-Param-* headers
 * on the very first call. Real child processes and real HTTP upstreams; the API is served through
 * `HttpApiBuilder.toWebHandler`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import { dependencies, webHandler } from "./support/ApiHarness.js"
import * as TestGateway from "@mcpx-fx/testing/gateway/TestGateway"

const era = TestGateway.era

type Body = Record<string, unknown>

/** One request to the API, JSON in and out. */
const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  Effect.flatMap(webHandler, (web) =>
    Effect.promise(async () => {
      const response = await web.handler(
        new Request(`http://mcpx.test${path}`, {
          method,
          // `/v1` takes a POST only declared JSON, a body-less one too.
          headers: { ...(method === "GET" ? {} : { "content-type": "application/json" }), ...headers },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
      )
      return { status: response.status, body: (await response.json()) as Body }
    }))

const textOf = (body: Body): string => JSON.stringify((body.result as Body | undefined)?.content)

/** Moves a running HTTP fixture to another mode (its `POST /control`). */
const switchTo = (url: string, mode: string) =>
  Effect.promise(() => fetch(url.replace(/\/mcp$/, "/control"), { method: "POST", body: JSON.stringify({ mode }) }).then((r) => r.text()))

describe("/v1/call and the caller's revision", () => {
  it.scopedLive("v1/call: under follow, X-Mcpx-Caller-Protocol 2025-11-25 is served by the legacy lane, none by the modern one", () =>
    Effect.gen(function*() {
      const legacy = yield* api("POST", "/v1/call", { tool: "alpha.hello" }, { "x-mcpx-caller-protocol": "2025-11-25" })
      assert.strictEqual(legacy.status, 200, JSON.stringify(legacy.body))
      assert.include(textOf(legacy.body), "over legacy 2025-11-25")
      const modern = yield* api("POST", "/v1/call", { tool: "alpha.hello" })
      assert.include(textOf(modern.body), "over modern 2026-07-28")
      const named = yield* api("POST", "/v1/call", { tool: "alpha.hello" }, { "x-mcpx-caller-protocol": "2026-07-28" })
      assert.include(textOf(named.body), "over modern 2026-07-28")
      const servers = yield* api("GET", "/v1/servers")
      const pool = ((servers.body.servers as ReadonlyArray<Body>)[0]?.pool ?? {}) as Body
      const lanes = (pool.instances as ReadonlyArray<Body>).map((i) => [i.lane, i.era]).sort()
      assert.deepStrictEqual(lanes, [["legacy", "legacy"], ["modern", "modern"]])
    }).pipe(Effect.provide(dependencies({ alpha: era("dual", { protocol: "follow" }) }))))

  it.scopedLive("v1/ask: X-Mcpx-Caller-Protocol picks the follow lane as on /v1/call", () =>
    Effect.gen(function*() {
      const legacy = yield* api("POST", "/v1/ask", { tool: "alpha.hello" }, { "x-mcpx-caller-protocol": "2025-11-25" })
      assert.strictEqual(legacy.status, 200, JSON.stringify(legacy.body))
      assert.strictEqual(legacy.body.status, "complete")
      assert.include(textOf(legacy.body), "over legacy 2025-11-25")
      const modern = yield* api("POST", "/v1/ask", { tool: "alpha.hello" })
      assert.include(textOf(modern.body), "over modern 2026-07-28")
      const bad = yield* api("POST", "/v1/ask", { tool: "alpha.hello" }, { "x-mcpx-caller-protocol": "yesterday" })
      assert.strictEqual(bad.status, 400)
    }).pipe(Effect.provide(dependencies({ alpha: era("dual", { protocol: "follow" }) }))))

  it.scopedLive("v1/call: a caller revision is only a lane under follow; other preferences serve every caller alike", () =>
    Effect.gen(function*() {
      const legacy = yield* api("POST", "/v1/call", { tool: "alpha.hello" }, { "x-mcpx-caller-protocol": "2025-06-18" })
      assert.include(textOf(legacy.body), "over modern 2026-07-28")
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))

  it.scopedLive("v1/call: an X-Mcpx-Caller-Protocol that names no revision mcpx-fx speaks is 400", () =>
    Effect.gen(function*() {
      const bad = yield* api("POST", "/v1/call", { tool: "alpha.hello" }, { "x-mcpx-caller-protocol": "yesterday" })
      assert.strictEqual(bad.status, 400)
      assert.include(JSON.stringify(bad.body), "x-mcpx-caller-protocol")
    }).pipe(Effect.provide(dependencies({ alpha: era("dual", { protocol: "follow" }) }))))
})

describe("/v1/call to a slow stdio upstream", () => {
  it.scopedLive("v1/call: a modern-only server that answers discover after the probe timeout, then refuses initialize, is served modern", () => {
    // Reads nothing for a second (npx fetching it), then answers in order: discover, then the
    // refusal of the initialize sent beside it after the probe timeout.
    const slow = era("modern-only")
    const server = { ...slow, args: [...slow.args, "--start-delay", "1000", "--late-refusal"] }
    return Effect.gen(function*() {
      const { body, status } = yield* api("POST", "/v1/call", { tool: "slow.hello" })
      assert.strictEqual(status, 200, JSON.stringify(body))
      assert.include(textOf(body), "over modern 2026-07-28")
    }).pipe(Effect.provide(dependencies({ slow: server }, { settings: { "upstream.probeTimeout": "300ms" } })))
  })
})

describe("/v1/probe/{server}", () => {
  it.scopedLive("v1/probe probes the server afresh, the era cache ignored, and reports every step", () =>
    Effect.gen(function*() {
      yield* api("POST", "/v1/call", { tool: "old.hello" })
      const { body, status } = yield* api("POST", "/v1/probe/old")
      assert.strictEqual(status, 200, JSON.stringify(body))
      assert.deepInclude(body, { server: "old", era: "legacy", negotiated: "2025-11-25", eraSource: "probe", wire: "stdio" })
      const steps = body.steps as ReadonlyArray<string>
      assert.isTrue(steps.some((s) => s.includes("sent server/discover")), steps.join("\n"))
      assert.deepInclude(body.cached as Body, { era: "legacy", version: "2025-11-25" })
      const missing = yield* api("POST", "/v1/probe/olde")
      assert.strictEqual(missing.status, 404)
      assert.deepInclude(missing.body, { _tag: "UnknownName", kind: "server", name: "olde" })
    }).pipe(Effect.provide(dependencies({ old: era("legacy-32601") }))))
})

describe("/v1/openapi.json", () => {
  it.scopedLive("v1/openapi.json describes /v1/probe/{server} and the X-Mcpx-Caller-Protocol header of /v1/call", () =>
    Effect.gen(function*() {
      const { body } = yield* api("GET", "/v1/openapi.json")
      const paths = body.paths as Record<string, Record<string, { parameters?: ReadonlyArray<Body>; responses: Body }>>
      assert.includeMembers(Object.keys(paths["/v1/probe/{server}"]!.post!.responses), ["200", "404", "502"])
      const parameters = paths["/v1/call"]!.post!.parameters ?? []
      assert.deepInclude(parameters.map((p) => [p.name, p.in]), ["x-mcpx-caller-protocol", "header"])
    }).pipe(Effect.provide(dependencies({ alpha: era("dual") }))))
})

describe("/v1 over HTTP upstreams", () => {
  it.scopedLive("v1/call: an HTTP upstream that turns legacy under a running gateway is probed again and served legacy", () =>
    Effect.gen(function*() {
      const { url } = yield* Fixtures.startHttpFixture("era-server", ["--mode", "dual"])
      yield* Effect.gen(function*() {
        const first = yield* api("POST", "/v1/call", { tool: "remote.hello" })
        assert.include(textOf(first.body), "over modern 2026-07-28")
        yield* switchTo(url, "legacy-exit")
        const second = yield* api("POST", "/v1/call", { tool: "remote.hello" })
        assert.strictEqual(second.status, 200, JSON.stringify(second.body))
        assert.include(textOf(second.body), "over legacy 2025-11-25")
        const protocol = yield* api("GET", "/v1/protocol")
        const row = ((protocol.body.asClient as Body).servers as ReadonlyArray<Body>)[0]!
        assert.deepInclude(row, { era: "legacy", negotiated: "2025-11-25" })
        assert.deepInclude(row.cached as Body, { era: "legacy" })
      }).pipe(Effect.provide(dependencies({ remote: { url } })))
    }))

  it.scopedLive("v1/call: an HTTP upstream that turns modern-only under a running gateway is probed again and served modern", () =>
    Effect.gen(function*() {
      const { url } = yield* Fixtures.startHttpFixture("era-server", ["--mode", "legacy-32602"])
      yield* Effect.gen(function*() {
        const first = yield* api("POST", "/v1/call", { tool: "remote.hello" })
        assert.include(textOf(first.body), "over legacy 2025-11-25")
        yield* switchTo(url, "modern-only")
        const second = yield* api("POST", "/v1/call", { tool: "remote.hello" })
        assert.strictEqual(second.status, 200, JSON.stringify(second.body))
        assert.include(textOf(second.body), "over modern 2026-07-28")
        const protocol = yield* api("GET", "/v1/protocol")
        const row = ((protocol.body.asClient as Body).servers as ReadonlyArray<Body>)[0]!
        assert.deepInclude(row, { era: "modern", negotiated: "2026-07-28" })
        assert.deepInclude(row.cached as Body, { era: "modern" })
      }).pipe(Effect.provide(dependencies({ remote: { url } })))
    }))

  it.scopedLive("v1/call: the first call on a fresh gateway carries Mcp-Param-* to a strict modern HTTP upstream", () =>
    Effect.gen(function*() {
      const { url } = yield* Fixtures.startHttpFixture("era-server", ["--mode", "modern-only", "--header-tools"])
      yield* Effect.gen(function*() {
        const { body, status } = yield* api("POST", "/v1/call", { tool: "strict.weather", arguments: { region: "north" } })
        assert.strictEqual(status, 200, JSON.stringify(body))
        assert.include(textOf(body), "weather for north over modern 2026-07-28")
      }).pipe(Effect.provide(dependencies({ strict: { url } })))
    }))
})
