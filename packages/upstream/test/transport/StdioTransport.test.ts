import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { StdioDefinition } from "../../src/ServerDefinition.js"
import { openStdio, UnsolicitedBacklog } from "../../src/transport/StdioTransport.js"
import type { Connection } from "../../src/transport/Transport.js"
import * as Processes from "@mcpx-fx/testing/Processes"

const eraServer = (mode: string, extra: ReadonlyArray<string> = []) => {
  const { command, args } = Fixtures.stdioCommand("era-server", ["--mode", mode, ...extra])
  return new StdioDefinition({ transport: "stdio", name: `era-${mode}`, command, args })
}

const script = (name: string, source: string) => new StdioDefinition({ transport: "stdio", name, command: process.execPath, args: ["-e", source] })

const initialize = (id: number) =>
  JsonRpc.request(id, "initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "stdio-transport-test", version: "0" }
  })

/** Sends a request and returns its final message (the response). */
const call = (conn: Connection, req: JsonRpc.Request) => conn.request(req).pipe(Stream.runCollect, Effect.map((c) => Chunk.unsafeLast(c).message))

const resultOf = (m: JsonRpc.Message): Record<string, unknown> => {
  assert.isTrue(JsonRpc.isSuccess(m), `expected a success, got ${JSON.stringify(m)}`)
  return (m as JsonRpc.SuccessResponse).result
}

const handshake = (conn: Connection) =>
  Effect.gen(function*() {
    const init = resultOf(yield* call(conn, initialize(1)))
    yield* conn.notify(JsonRpc.notification("notifications/initialized"))
    return init
  })

/**
 * A server that sends `n` pings of its own at once, then answers `status` once `expected` of them
 * have an answer (a result or an error), with how many were errors.
 */
const pinger = (n: number, expected: number) => `
const rl = require("node:readline").createInterface({ input: process.stdin })
let answered = 0, refused = 0, status
const done = () => { if (status !== undefined && answered === ${expected}) process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: status, result: { refused } }) + "\\n") }
rl.on("line", (line) => {
  const m = JSON.parse(line)
  if (m.method === "status") { status = m.id; return done() }
  if (typeof m.id === "string" && m.id.startsWith("ping-")) { answered++; if (m.error) refused++; done() }
})
let out = ""
for (let i = 0; i < ${n}; i++) out += JSON.stringify({ jsonrpc: "2.0", id: "ping-" + i, method: "ping" }) + "\\n"
process.stdout.write(out)
`

describe("StdioTransport", () => {
  it.scopedLive(
    "stdio/transport/a server that does not read its stdin: past the bound a new request is answered at once with an error naming it",
    () =>
      Effect.gen(function*() {
        // It never reads: everything sent waits in the pipe and in mcpx-fx.
        const conn = yield* openStdio(script("deaf", "setInterval(() => {}, 1000)"), { maxStdinBytes: 64 * 1024 })
        const big = (id: number) => JsonRpc.request(id, "tools/call", { name: "x", arguments: { blob: "x".repeat(100 * 1024) } })
        // The first is queued (nothing waited before it); it is never answered, so it runs on.
        const first = yield* Effect.fork(conn.call(big(1), () => Effect.void))
        yield* Effect.yieldNow()
        const second = yield* conn.call(big(2), () => Effect.void)
        assert.isTrue(second !== undefined && JsonRpc.isErrorResponse(second), JSON.stringify(second))
        if (second !== undefined && JsonRpc.isErrorResponse(second)) {
          assert.strictEqual(second.id, 2)
          assert.include(second.error.message, "upstream.stdinBuffer")
          assert.include(second.error.message, "deaf")
        }
        // The stream path is held to it too.
        const third = yield* call(conn, big(3))
        assert.isTrue(JsonRpc.isErrorResponse(third))
        assert.isUndefined(yield* Fiber.poll(first).pipe(Effect.map((o) => (o._tag === "Some" ? "ended" : undefined))))
        yield* Fiber.interrupt(first)
      }),
    { timeout: 30_000 }
  )

  it.scopedLive("stdio/transport/a flood of the server's own requests past the backlog is refused, never left unanswered", () =>
    Effect.gen(function*() {
      const n = UnsolicitedBacklog * 3
      // Nobody takes the server's requests: the backlog holds the first ones, every later one is refused.
      const conn = yield* openStdio(script("pinger", pinger(n, n - UnsolicitedBacklog)))
      const refused = (resultOf(yield* call(conn, JsonRpc.request("s", "status", {}))) as { refused: number }).refused
      assert.strictEqual(refused, n - UnsolicitedBacklog)
      const queued = yield* conn.unsolicited.pipe(Stream.take(UnsolicitedBacklog), Stream.runCollect)
      assert.strictEqual(queued.length, UnsolicitedBacklog)
    }), { timeout: 30_000 })

  it.scopedLive("stdio/transport/round-trip: requests are answered by id", () =>
    Effect.gen(function*() {
      const conn = yield* openStdio(eraServer("dual"))
      const init = yield* handshake(conn)
      assert.strictEqual(init.protocolVersion, "2025-11-25")
      const [a, b] = yield* Effect.all(
        [
          call(conn, JsonRpc.request("a", "tools/call", { name: "echo", arguments: { message: "first" } })),
          call(conn, JsonRpc.request(2, "tools/call", { name: "echo", arguments: { message: "second" } }))
        ],
        { concurrency: 2 }
      )
      assert.strictEqual(JsonRpc.idOf(a), "a")
      assert.include(JSON.stringify(resultOf(a)), "first")
      assert.strictEqual(JsonRpc.idOf(b), 2)
      assert.include(JSON.stringify(resultOf(b)), "second")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("stdio/transport/banner: non-JSON lines before the first frame are skipped", () =>
    Effect.gen(function*() {
      const conn = yield* openStdio(eraServer("legacy-banner"))
      const init = yield* handshake(conn)
      assert.strictEqual(init.protocolVersion, "2025-11-25")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("stdio/transport/exit: a process that exits fails pending requests with its exit code", () =>
    Effect.gen(function*() {
      const conn = yield* openStdio(eraServer("legacy-exit"))
      const exit = yield* call(conn, JsonRpc.request(1, "server/discover", { _meta: {} })).pipe(Effect.exit)
      assert.isTrue(Exit.isFailure(exit))
      const closed = yield* conn.closed
      assert.strictEqual(closed._tag, "TransportClosed")
      assert.isNumber(closed.exitCode)
      assert.include(closed.message, "exited")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("stdio/transport/stderr-tail: the reason a process died carries what it said on stderr", () =>
    Effect.gen(function*() {
      const conn = yield* openStdio(
        script("noisy", "process.stderr.write('x'.repeat(20000) + 'fatal: no API key configured\\n'); process.exit(3)"),
        { stderrTailBytes: 64 }
      )
      const closed = yield* conn.closed
      assert.strictEqual(closed.exitCode, 3)
      assert.include(closed.message, "fatal: no API key configured")
      assert.isAtMost((closed.stderrTail ?? "").length, 64)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("stdio/transport/spawn: a command that cannot start says why, in the config's words", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "mcpx-spawn-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const plain = join(dir, "not-executable")
      writeFileSync(plain, "#!/bin/sh\necho hi\n")
      chmodSync(plain, 0o644)
      const reason = (def: StdioDefinition) => Effect.map(Effect.flip(openStdio(def)), (e) => (e._tag === "TransportClosed" ? e.reason : e._tag))
      const def = (command: string, cwd?: string) =>
        new StdioDefinition({ transport: "stdio", name: "broken", command, args: [], ...(cwd === undefined ? {} : { cwd }) })
      assert.strictEqual(
        yield* reason(def("mcpx-no-such-command")),
        `command "mcpx-no-such-command" was not found on PATH; install it, or give its full path as the server's "command"`
      )
      assert.strictEqual(yield* reason(def(join(dir, "absent"))), `command ${JSON.stringify(join(dir, "absent"))} does not exist`)
      assert.strictEqual(yield* reason(def(plain)), `command ${JSON.stringify(plain)} is not executable (permission denied)`)
      assert.strictEqual(
        yield* reason(def(process.execPath, join(dir, "no/such/dir"))),
        `its working directory ${JSON.stringify(join(dir, "no/such/dir"))} does not exist`
      )
    }))

  it.scopedLive("stdio/transport/line-cap: a line over the cap closes the connection instead of growing memory", () =>
    Effect.gen(function*() {
      const conn = yield* openStdio(
        script("flood", "process.stdout.write('{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"s\":\"' + 'a'.repeat(100000)); setInterval(() => {}, 1000)"),
        { maxLineBytes: 1024, killGrace: "100 millis" }
      )
      const closed = yield* conn.closed
      assert.include(closed.message, "larger than 1024 bytes")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("stdio/transport/cancel: interrupting a request sends notifications/cancelled", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "mcpx-stdio-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const log = join(dir, "methods.log")
      const conn = yield* openStdio(eraServer("dual", ["--log", log]))
      yield* handshake(conn)
      const slow = yield* call(conn, JsonRpc.request(7, "tools/call", { name: "slow", arguments: { ms: 60000 } })).pipe(
        Effect.fork
      )
      // The echo's answer proves the slow call was received before we interrupt it.
      yield* call(conn, JsonRpc.request(8, "tools/call", { name: "echo", arguments: { message: "after" } }))
      yield* Fiber.interrupt(slow)
      // stdio is ordered: once this ping is answered, the cancellation sent before it was read.
      yield* call(conn, JsonRpc.request(9, "ping"))
      const methods = readFileSync(log, "utf8")
      assert.include(methods, "notifications/cancelled")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("stdio/transport/cancel: an initialize given up on is not cancelled (clients must not cancel it)", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "mcpx-stdio-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const log = join(dir, "methods.log")
      // Reads nothing for a while, so the initialize is still unanswered when it is given up on.
      const conn = yield* openStdio(eraServer("dual", ["--log", log, "--start-delay", "300"]))
      const init = JsonRpc.request(1, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } })
      const pending = yield* call(conn, init).pipe(Effect.fork)
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(pending)
      // stdio is ordered: once this ping is answered, anything sent before it was read.
      yield* call(conn, JsonRpc.request(2, "ping"))
      const methods = readFileSync(log, "utf8")
      assert.include(methods, "initialize")
      assert.notInclude(methods, "notifications/cancelled")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("stdio/transport/progress: progress for a request's token and log messages tied by it arrive on that request's stream; an untied log message is unsolicited", () =>
    Effect.gen(function*() {
      const conn = yield* openStdio(
        script(
          "progress",
          `require('readline').createInterface({ input: process.stdin }).on('line', (l) => {
             const m = JSON.parse(l)
             const out = (x) => process.stdout.write(JSON.stringify(x) + '\\n')
             const progressToken = m.params._meta.progressToken
             out({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress: 1 } })
             out({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'while calling', _meta: { progressToken } } })
             out({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'whose?' } })
             out({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })
             out({ jsonrpc: '2.0', id: m.id, result: { done: true } })
           })`
        )
      )
      const messages = yield* conn.request(JsonRpc.request(1, "tools/call", { name: "x", _meta: { progressToken: "tok" } })).pipe(
        Stream.runCollect
      )
      const methods = Chunk.toReadonlyArray(messages).map((p) => JsonRpc.isNotification(p.message) ? p.message.method : "response")
      assert.deepStrictEqual(methods, ["notifications/progress", "notifications/message", "response"])
      const untied = Chunk.toReadonlyArray(yield* Stream.runCollect(Stream.take(conn.unsolicited, 2))).map((p) => p.message)
      assert.deepStrictEqual(untied.map((m) => (JsonRpc.isNotification(m) ? m.method : "other")), ["notifications/message", "notifications/tools/list_changed"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("stdio/transport/call: tied messages reach onMessage in order before the response is returned", () =>
    Effect.gen(function*() {
      const conn = yield* openStdio(
        script(
          "progress-call",
          `require('readline').createInterface({ input: process.stdin }).on('line', (l) => {
             const m = JSON.parse(l)
             const out = (x) => process.stdout.write(JSON.stringify(x) + '\\n')
             out({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: m.params._meta.progressToken, progress: 1 } })
             out({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'while calling', _meta: { progressToken: m.params._meta.progressToken } } })
             out({ jsonrpc: '2.0', id: m.id, result: { done: m.id } })
           })`
        )
      )
      const seen: Array<string> = []
      const response = yield* conn.call(
        JsonRpc.request(4, "tools/call", { name: "x", _meta: { progressToken: 4 } }),
        (parsed) => Effect.sync(() => void seen.push(JsonRpc.isNotification(parsed.message) ? parsed.message.method : "other"))
      )
      assert.deepStrictEqual(seen, ["notifications/progress", "notifications/message"])
      assert.isDefined(response)
      assert.deepStrictEqual(resultOf(response!), { done: 4 })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("stdio/transport/call-cancel: interrupting a call sends notifications/cancelled", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "mcpx-stdio-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const log = join(dir, "methods.log")
      const conn = yield* openStdio(eraServer("dual", ["--log", log]))
      yield* handshake(conn)
      const slow = yield* conn.call(
        JsonRpc.request(7, "tools/call", { name: "slow", arguments: { ms: 60000 } }),
        () => Effect.void
      ).pipe(Effect.fork)
      // The echo's answer proves the slow call was received before we interrupt it.
      yield* call(conn, JsonRpc.request(8, "tools/call", { name: "echo", arguments: { message: "after" } }))
      yield* Fiber.interrupt(slow)
      // stdio is ordered: once this ping is answered, the cancellation sent before it was read.
      yield* call(conn, JsonRpc.request(9, "ping"))
      assert.include(readFileSync(log, "utf8"), "notifications/cancelled")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("stdio/transport/call-exit: a process that exits fails a pending call with TransportClosed", () =>
    Effect.gen(function*() {
      const conn = yield* openStdio(eraServer("legacy-exit"))
      const exit = yield* conn.call(JsonRpc.request(1, "server/discover", { _meta: {} }), () => Effect.void).pipe(Effect.exit)
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
      assert.strictEqual(error?._tag, "TransportClosed")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.live("stdio/transport/kill: closing the scope kills a process that ignores EOF and SIGTERM, with its group", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const conn = yield* openStdio(
        script(
          "stubborn",
          `process.on('SIGTERM', () => {})
           process.stdin.on('end', () => {})
           const child = require('child_process').spawn(process.execPath, ['-e', 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1000)'], { stdio: 'ignore' })
           process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'pids', params: { pid: process.pid, child: child.pid } }) + '\\n')
           setInterval(() => {}, 1000)`
        ),
        { killGrace: "200 millis" }
      ).pipe(Scope.extend(scope))
      const first = Option.getOrThrow(yield* Stream.runHead(conn.unsolicited))
      const { pid, child } = (first.message as JsonRpc.Notification).params as { pid: number; child: number }
      assert.isTrue(Processes.alive(pid) && Processes.alive(child))
      yield* Scope.close(scope, Exit.void)
      assert.isFalse(Processes.alive(pid), "the server process survived")
      yield* Processes.gone(child)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.live("stdio/transport/group: a grandchild that ignores SIGTERM goes with the group, even when the process itself leaves on EOF", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const conn = yield* openStdio(
        script(
          "polite-parent",
          `const child = require('child_process').spawn(process.execPath, ['-e', 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1000)'], { stdio: 'ignore' })
           child.unref()
           process.stdin.on('end', () => process.exit(0))
           process.stdin.resume()
           process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'pids', params: { pid: process.pid, child: child.pid } }) + '\\n')`
        ),
        { killGrace: "200 millis" }
      ).pipe(Scope.extend(scope))
      const first = Option.getOrThrow(yield* Stream.runHead(conn.unsolicited))
      const { child } = (first.message as JsonRpc.Notification).params as { pid: number; child: number }
      assert.isTrue(Processes.alive(child))
      yield* Scope.close(scope, Exit.void)
      yield* Processes.gone(child)
    }).pipe(Effect.provide(NodeContext.layer)))
})
