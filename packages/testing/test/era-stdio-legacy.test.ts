import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as Revision from "@mcpx-fx/protocol/Revision"
import { parseLog } from "../src/era/MethodLog.js"
import { errorOf, objectAt, resultOf, textOf } from "../src/era/client/Replies.js"
import * as Rq from "../src/era/client/Requests.js"
import { spawnStdio, type StdioPeer } from "../src/era/client/StdioPeer.js"
import { banner } from "../src/era/Stdio.js"

const start = (mode: string, ...args: ReadonlyArray<string>) => spawnStdio("era-server", ["--mode", mode, ...args])

const tempLog = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "era-log-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => join(dir, "methods.log")))

/** initialize + notifications/initialized, returning the negotiated version. */
const handshake = (peer: StdioPeer, version: string = Revision.LatestLegacyRevision, capabilities = {}) =>
  Effect.gen(function*() {
    const init = resultOf(yield* peer.request("initialize", Rq.initialize(version, capabilities)))
    yield* peer.send(Rq.notification("notifications/initialized"))
    return init
  })

describe("era-server over stdio, legacy modes", () => {
  it.scoped("legacy-32601 refuses a pre-initialize discover with -32601, then serves a legacy session", () =>
    Effect.gen(function*() {
      const log = yield* tempLog
      const peer = yield* start("legacy-32601", "--log", log)
      const probe = yield* peer.request("server/discover", Rq.modern())
      assert.strictEqual(errorOf(probe).code, ErrorCode.MethodNotFound)
      const init = yield* handshake(peer)
      assert.strictEqual(init["protocolVersion"], "2025-11-25")
      assert.strictEqual(objectAt(init, "serverInfo")["name"], "era-server")
      const list = resultOf(yield* peer.request("tools/list"))
      assert.isUndefined(list["resultType"], "legacy results carry no resultType")
      assert.isUndefined(list["ttlMs"])
      const names = (list["tools"] as ReadonlyArray<{ name: string }>).map((t) => t.name)
      assert.deepStrictEqual(names, ["hello", "echo", "slow", "boom", "ask_name", "structured", "notify_changes"])
      const hello = resultOf(yield* peer.request("tools/call", Rq.call("hello")))
      assert.strictEqual(textOf(hello), "hello from legacy-32601 over legacy 2025-11-25")
      // After initialize a modern method is just an unknown one.
      assert.strictEqual(errorOf(yield* peer.request("server/discover", Rq.modern())).code, ErrorCode.MethodNotFound)
      assert.deepStrictEqual(parseLog(readFileSync(log, "utf8")), [
        { era: "legacy", method: "server/discover" },
        { era: "legacy", method: "initialize" },
        { era: "legacy", method: "notifications/initialized" },
        { era: "legacy", method: "tools/list" },
        { era: "legacy", method: "tools/call" },
        { era: "legacy", method: "server/discover" }
      ])
    }))

  it.scoped("legacy-32602 refuses a pre-initialize request with -32602 but answers ping", () =>
    Effect.gen(function*() {
      const peer = yield* start("legacy-32602")
      assert.strictEqual(errorOf(yield* peer.request("server/discover", Rq.modern())).code, ErrorCode.InvalidParams)
      assert.strictEqual(errorOf(yield* peer.request("tools/list")).code, ErrorCode.InvalidParams)
      assert.deepStrictEqual(resultOf(yield* peer.request("ping")), {})
      yield* handshake(peer)
      assert.isArray(resultOf(yield* peer.request("tools/list"))["tools"])
    }))

  it.scoped("legacy-silent never answers a pre-initialize request", () =>
    Effect.gen(function*() {
      const peer = yield* start("legacy-silent")
      yield* peer.send(Rq.rpc("probe", "server/discover", Rq.modern()))
      yield* handshake(peer)
      yield* peer.request("ping")
      // Frames are answered in arrival order here, so by the ping's reply the probe's would have come.
      assert.isFalse(peer.frames().some((m) => "id" in m && m.id === "probe"))
    }))

  it.scoped("legacy-exit exits on a pre-initialize request without answering", () =>
    Effect.gen(function*() {
      const log = yield* tempLog
      const peer = yield* start("legacy-exit", "--log", log)
      yield* peer.send(Rq.rpc("probe", "server/discover", Rq.modern()))
      const exit = yield* peer.exit
      assert.strictEqual(exit.code, 1)
      assert.lengthOf(peer.frames(), 0)
      assert.deepStrictEqual(parseLog(readFileSync(log, "utf8")), [{ era: "legacy", method: "server/discover" }])
    }))

  it.scoped("legacy-exit serves normally once initialized", () =>
    Effect.gen(function*() {
      const peer = yield* start("legacy-exit")
      yield* handshake(peer)
      assert.strictEqual(errorOf(yield* peer.request("server/discover", Rq.modern())).code, ErrorCode.MethodNotFound)
      assert.strictEqual(textOf(resultOf(yield* peer.request("tools/call", Rq.call("echo", { message: "still here" })))), "still here")
    }))

  it.scoped("legacy-banner prints non-JSON lines before any frame, then behaves like legacy-32601", () =>
    Effect.gen(function*() {
      const peer = yield* start("legacy-banner")
      assert.strictEqual(errorOf(yield* peer.request("server/discover", Rq.modern())).code, ErrorCode.MethodNotFound)
      assert.deepStrictEqual(peer.noise(), banner)
      yield* handshake(peer)
      assert.include(textOf(resultOf(yield* peer.request("tools/call", Rq.call("hello")))), "legacy-banner over legacy")
    }))

  it.scoped("initialize echoes a known version and counter-offers the newest for an unknown one", () =>
    Effect.gen(function*() {
      // The fixture renegotiates on every initialize, so one process can answer all three offers.
      const peer = yield* start("legacy-32601")
      const offer = (version: string) => peer.request("initialize", Rq.initialize(version)).pipe(Effect.map((r) => resultOf(r)["protocolVersion"]))
      assert.strictEqual(yield* offer("2024-11-05"), "2024-11-05")
      assert.strictEqual(yield* offer("2099-01-01"), "2025-11-25")
      assert.strictEqual(yield* offer("2026-07-28"), "2025-11-25", "a modern version is never accepted by initialize")
    }))

  it.scoped("--versions restricts the versions served", () =>
    Effect.gen(function*() {
      const peer = yield* start("legacy-32601", "--versions", "2024-11-05,2025-03-26")
      const init = resultOf(yield* peer.request("initialize", Rq.initialize("2025-11-25")))
      assert.strictEqual(init["protocolVersion"], "2025-03-26")
      assert.strictEqual(
        textOf(resultOf(yield* peer.request("tools/call", Rq.call("hello")))),
        "hello from legacy-32601 over legacy 2025-03-26"
      )
    }))

  it.scoped("exits on stdin EOF", () =>
    Effect.gen(function*() {
      const peer = yield* start("legacy-32601")
      yield* handshake(peer)
      yield* peer.closeStdin
      assert.strictEqual((yield* peer.exit).code, 0)
    }))
})
