import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { parseLog } from "../src/era/MethodLog.js"
import { errorOf, objectAt, resultOf, textOf } from "../src/era/client/Replies.js"
import * as Rq from "../src/era/client/Requests.js"
import { spawnStdio } from "../src/era/client/StdioPeer.js"
import type { JsonObject } from "../src/era/Wire.js"

const start = (mode: string, ...args: ReadonlyArray<string>) => spawnStdio("era-server", ["--mode", mode, ...args])
const ServerInfo = "io.modelcontextprotocol/serverInfo"
const elicitation = { elicitation: {} }

const tempLog = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "era-log-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => join(dir, "methods.log")))

const indexOfReply = (frames: ReadonlyArray<unknown>, id: string) =>
  frames.findIndex((m) => typeof m === "object" && m !== null && "id" in m && m.id === id && !("method" in m))

describe("era-server over stdio, modern modes", () => {
  it.scoped("modern-only serves server/discover with versions, capabilities and cache hints", () =>
    Effect.gen(function*() {
      const peer = yield* start("modern-only")
      const d = resultOf(yield* peer.request("server/discover", Rq.modern()))
      assert.deepStrictEqual(d["supportedVersions"], ["2026-07-28"])
      assert.isTrue(typeof d["capabilities"] === "object" && d["capabilities"] !== null)
      assert.strictEqual(d["resultType"], "complete")
      assert.isNumber(d["ttlMs"])
      assert.strictEqual(d["cacheScope"], "public")
      assert.strictEqual(objectAt(objectAt(d, "_meta"), ServerInfo)["name"], "era-server")
      const list = resultOf(yield* peer.request("tools/list", Rq.modern()))
      assert.strictEqual(list["resultType"], "complete")
      assert.isNumber(list["ttlMs"])
      const hello = resultOf(yield* peer.request("tools/call", Rq.modern(Rq.call("hello"))))
      assert.strictEqual(textOf(hello), "hello from modern-only over modern 2026-07-28")
      assert.strictEqual(hello["resultType"], "complete")
      assert.isDefined(objectAt(hello, "_meta")[ServerInfo])
    }))

  it.scoped("modern-only refuses initialize with -32022 naming its versions", () =>
    Effect.gen(function*() {
      const peer = yield* start("modern-only")
      const e = errorOf(yield* peer.request("initialize", Rq.initialize("2025-11-25")))
      assert.strictEqual(e.code, ErrorCode.UnsupportedProtocolVersion)
      assert.deepStrictEqual(e.data, { supported: ["2026-07-28"], requested: "2025-11-25" })
    }))

  it.scoped("validates _meta: missing fields are -32602, an unsupported version -32022, legacy methods -32601", () =>
    Effect.gen(function*() {
      const peer = yield* start("modern-only")
      assert.strictEqual(errorOf(yield* peer.request("tools/list")).code, ErrorCode.InvalidParams)
      const noCaps: JsonObject = { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } }
      assert.strictEqual(errorOf(yield* peer.request("tools/list", noCaps)).code, ErrorCode.InvalidParams)
      const future = errorOf(yield* peer.request("server/discover", Rq.modern({}, {}, "2099-01-01")))
      assert.strictEqual(future.code, ErrorCode.UnsupportedProtocolVersion)
      assert.deepStrictEqual(future.data, { supported: ["2026-07-28"], requested: "2099-01-01" })
      assert.strictEqual(errorOf(yield* peer.request("ping", Rq.modern())).code, ErrorCode.MethodNotFound)
    }))

  it.scoped("ask_name without declared elicitation is -32021 naming the capability", () =>
    Effect.gen(function*() {
      const peer = yield* start("modern-only")
      const e = errorOf(yield* peer.request("tools/call", Rq.modern(Rq.call("ask_name"))))
      assert.strictEqual(e.code, ErrorCode.MissingRequiredClientCapability)
      assert.deepStrictEqual(e.data, { requiredCapabilities: { elicitation: {} } })
    }))

  it.scoped("ask_name answers input_required, then the retry with inputResponses", () =>
    Effect.gen(function*() {
      const peer = yield* start("modern-only")
      const first = resultOf(yield* peer.request("tools/call", Rq.modern(Rq.call("ask_name"), elicitation)))
      assert.strictEqual(first["resultType"], "input_required")
      const ask = objectAt(objectAt(first, "inputRequests"), "name")
      assert.strictEqual(ask["method"], "elicitation/create")
      assert.strictEqual(objectAt(ask, "params")["mode"], "form")
      assert.isDefined(objectAt(objectAt(ask, "params"), "requestedSchema"))
      const requestState = first["requestState"]
      if (typeof requestState !== "string") throw new Error("input_required needs a requestState here")
      const retry = (inputResponses: JsonObject, state: string) =>
        peer.request("tools/call", Rq.modern({ ...Rq.call("ask_name"), inputResponses, requestState: state }, elicitation))
      const accepted = resultOf(yield* retry({ name: { action: "accept", content: { name: "Ada" } } }, requestState))
      assert.strictEqual(accepted["resultType"], "complete")
      assert.strictEqual(textOf(accepted), "hello, Ada")
      assert.strictEqual(textOf(resultOf(yield* retry({ name: { action: "cancel" } }, requestState))), "no name (cancel)")
      // Without the answer it needs, the server asks again rather than failing.
      assert.strictEqual(resultOf(yield* retry({ other: { action: "accept" } }, requestState))["resultType"], "input_required")
      const tampered = errorOf(yield* retry({ name: { action: "accept", content: { name: "Eve" } } }, `x${requestState}`))
      assert.strictEqual(tampered.code, ErrorCode.InvalidParams)
    }))

  it.scoped("dual serves both eras on one connection, each request by its own _meta", () =>
    Effect.gen(function*() {
      const log = yield* tempLog
      const peer = yield* start("dual", "--log", log)
      assert.deepStrictEqual(resultOf(yield* peer.request("server/discover", Rq.modern()))["supportedVersions"], ["2026-07-28"])
      assert.strictEqual(errorOf(yield* peer.request("tools/list")).code, ErrorCode.InvalidParams, "no _meta and no session")
      resultOf(yield* peer.request("initialize", Rq.initialize("2025-06-18")))
      yield* peer.send(Rq.notification("notifications/initialized"))
      assert.strictEqual(textOf(resultOf(yield* peer.request("tools/call", Rq.call("hello")))), "hello from dual over legacy 2025-06-18")
      assert.strictEqual(
        textOf(resultOf(yield* peer.request("tools/call", Rq.modern(Rq.call("hello"))))),
        "hello from dual over modern 2026-07-28"
      )
      assert.deepStrictEqual(parseLog(readFileSync(log, "utf8")).map((l) => `${l.era} ${l.method}`), [
        "modern server/discover",
        "legacy tools/list",
        "legacy initialize",
        "legacy notifications/initialized",
        "legacy tools/call",
        "modern tools/call"
      ])
    }))

  it.scoped("dual -32022 lists legacy versions too, so a legacy-only supported list can be tested", () =>
    Effect.gen(function*() {
      const peer = yield* start("dual", "--versions", "2025-06-18,2025-11-25")
      const e = errorOf(yield* peer.request("server/discover", Rq.modern()))
      assert.strictEqual(e.code, ErrorCode.UnsupportedProtocolVersion)
      assert.deepStrictEqual(e.data, { supported: ["2025-11-25", "2025-06-18"], requested: "2026-07-28" })
    }))

  it.scoped("a modern slow call stops on notifications/cancelled", () =>
    Effect.gen(function*() {
      const peer = yield* start("dual")
      yield* peer.send(Rq.rpc("doomed", "tools/call", Rq.modern(Rq.call("slow", { ms: 150 }))))
      yield* peer.send(Rq.notification("notifications/cancelled", { requestId: "doomed" }))
      assert.strictEqual(textOf(resultOf(yield* peer.request("tools/call", Rq.modern(Rq.call("slow", { ms: 300 }))))), "slept 300ms")
      assert.strictEqual(indexOfReply(peer.frames(), "doomed"), -1)
    }))

  it.scoped("slow-discover answers initialize while a discover is still pending", () =>
    Effect.gen(function*() {
      const peer = yield* start("slow-discover", "--discover-delay", "1000")
      yield* peer.send(Rq.rpc("probe", "server/discover", Rq.modern()))
      const init = resultOf(yield* peer.request("initialize", Rq.initialize()))
      assert.strictEqual(init["protocolVersion"], "2025-11-25")
      const d = resultOf(yield* peer.reply("probe"))
      assert.deepStrictEqual(d["supportedVersions"], ["2026-07-28"])
      const frames = peer.frames()
      assert.isBelow(frames.findIndex((m) => "result" in m && "protocolVersion" in m.result), indexOfReply(frames, "probe"))
    }))
})
