import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { startHttpFixture } from "../src/Fixtures.js"
import * as Http from "../src/era/client/HttpPeer.js"
import { errorOf, resultOf, textOf } from "../src/era/client/Replies.js"
import * as Rq from "../src/era/client/Requests.js"
import { spawnStdio } from "../src/era/client/StdioPeer.js"

const start = (mode: string, ...args: ReadonlyArray<string>) => startHttpFixture("era-server", ["--mode", mode, ...args])

const modernCall = (url: string, id: string, name: string, args: Record<string, string>, extra: Record<string, string> = {}) =>
  Http.post(url, Rq.rpc(id, "tools/call", Rq.modern(Rq.call(name, args))), { ...Rq.modernHeaders("tools/call", name), ...extra })

const control = (url: string, body: unknown) => Http.send(url.replace(/\/mcp$/, "/control"), { body })

describe("era-server, servers that change or lag", () => {
  it.scoped("--start-delay reads nothing until the delay is over, then answers what waited in order", () =>
    Effect.gen(function*() {
      const peer = yield* spawnStdio("era-server", ["--mode", "dual", "--start-delay", "400"])
      const began = Date.now()
      const [d, i] = yield* Effect.all(
        [peer.request("server/discover", Rq.modern()), peer.request("initialize", Rq.initialize())],
        { concurrency: "unbounded" }
      )
      assert.isAtLeast(Date.now() - began, 400)
      assert.deepStrictEqual(resultOf(d)["supportedVersions"], ["2026-07-28"])
      assert.strictEqual(resultOf(i)["protocolVersion"], "2025-11-25")
    }))

  it.scoped("--late-refusal answers the discover read before initialize first, then refuses initialize with -32022", () =>
    Effect.gen(function*() {
      const peer = yield* spawnStdio("era-server", ["--mode", "modern-only", "--start-delay", "300", "--late-refusal"])
      const [d, i] = yield* Effect.all(
        [peer.request("server/discover", Rq.modern()), peer.request("initialize", Rq.initialize())],
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(resultOf(d)["supportedVersions"], ["2026-07-28"])
      assert.deepStrictEqual(errorOf(i).data, { supported: ["2026-07-28"], requested: "2025-11-25" })
      const answered = peer.frames().flatMap((m) => ("id" in m && (m.id === d.id || m.id === i.id) ? [m.id === d.id ? "discover" : "initialize"] : []))
      assert.deepStrictEqual(answered, ["discover", "initialize"])
    }))

  it.scoped("POST /control moves a running server to another mode: a modern request then gets a bare 404", () =>
    Effect.gen(function*() {
      const { url } = yield* start("dual")
      const before = yield* modernCall(url, "a", "hello", {})
      assert.strictEqual(textOf(resultOf(before.messages[0])), "hello from dual over modern 2026-07-28")
      const changed = yield* control(url, { mode: "legacy-exit" })
      assert.strictEqual(changed.status, 200)
      const after = yield* modernCall(url, "b", "hello", {})
      assert.deepStrictEqual([after.status, after.messages.length], [404, 0])
      const refused = yield* control(url, { mode: "no-such-mode" })
      assert.strictEqual(refused.status, 400)
    }))

  it.scoped("--header-tools is strict over modern HTTP: Mcp-Param-Region must be there and match", () =>
    Effect.gen(function*() {
      const { url } = yield* start("modern-only", "--header-tools")
      const listed = yield* Http.post(url, Rq.rpc("l", "tools/list", Rq.modern()), Rq.modernHeaders("tools/list"))
      const tools = resultOf(listed.messages[0])["tools"] as ReadonlyArray<Record<string, unknown>>
      const weather = tools.find((t) => t["name"] === "weather")
      assert.deepStrictEqual(
        (weather?.["inputSchema"] as { properties: Record<string, unknown> }).properties["region"],
        { type: "string", "x-mcp-header": "Region" }
      )
      const missing = yield* modernCall(url, "m", "weather", { region: "north" })
      assert.strictEqual(missing.status, 400)
      assert.strictEqual(errorOf(missing.messages[0]).code, ErrorCode.HeaderMismatch)
      const wrong = yield* modernCall(url, "w", "weather", { region: "north" }, { "mcp-param-region": "south" })
      assert.strictEqual(errorOf(wrong.messages[0]).code, ErrorCode.HeaderMismatch)
      const right = yield* modernCall(url, "r", "weather", { region: "north" }, { "mcp-param-region": "north" })
      assert.strictEqual(textOf(resultOf(right.messages[0])), "weather for north over modern 2026-07-28")
      // Renamed while running: the old header no longer satisfies it.
      yield* control(url, { headerName: "Area" })
      const old = yield* modernCall(url, "o", "weather", { region: "north" }, { "mcp-param-region": "north" })
      assert.strictEqual(errorOf(old.messages[0]).code, ErrorCode.HeaderMismatch)
      const renamed = yield* modernCall(url, "n", "weather", { region: "north" }, { "mcp-param-area": "north" })
      assert.strictEqual(renamed.status, 200)
    }))
})
