/**
 * `mcpx-fx serve` through the bundle over its real stdin and stdout, with era-server fixtures as
 * the upstreams: each revision's handshake and calls, stdout carrying nothing but JSON-RPC, and
 * the drain at end of input.
 */
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import { bundle, type Sandbox, sandbox } from "./support/Sandbox.js"

type Message = Record<string, unknown>

const era = (mode: string) => ({ command: process.execPath, args: [Fixtures.fixtureScript("era-server"), "--mode", mode] })

/** A running `mcpx-fx serve` as a host sees it. */
interface Serve {
  readonly send: (message: Message) => Effect.Effect<void>
  /** The reply with this id, waiting for it if it has not come yet. */
  readonly reply: (id: number | string) => Effect.Effect<Message>
  /** Closes stdin, as a host does when it is done. */
  readonly end: Effect.Effect<void>
  /** The exit code, and every stdout line as written. */
  readonly exited: Effect.Effect<{ readonly code: number | null; readonly lines: ReadonlyArray<string>; readonly stderr: string }>
}

const serve = (sb: Sandbox): Effect.Effect<Serve, never, Scope.Scope> =>
  Effect.gen(function*() {
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, [bundle, "serve"], {
          cwd: sb.root,
          env: { PATH: process.env.PATH ?? "", HOME: sb.home, XDG_CONFIG_HOME: `${sb.home}/.config` },
          stdio: ["pipe", "pipe", "pipe"]
        })
      ),
      (c) => Effect.sync(() => c.kill("SIGKILL"))
    )
    const lines: Array<string> = []
    const replies = new Map<string, Message>()
    const waiters = new Set<() => void>()
    let buffered = ""
    let stderr = ""
    const wake = () => waiters.forEach((w) => w())
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk
      let at = buffered.indexOf("\n")
      while (at >= 0) {
        const line = buffered.slice(0, at)
        buffered = buffered.slice(at + 1)
        lines.push(line)
        try {
          const parsed: unknown = JSON.parse(line)
          if (typeof parsed === "object" && parsed !== null && "id" in parsed) replies.set(String(parsed.id), parsed as Message)
        } catch {
          // Kept in `lines`; the test that reads them says what was wrong.
        }
        at = buffered.indexOf("\n")
      }
      wake()
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
    })
    const exit = new Promise<number | null>((resolve) =>
      child.on("exit", (code) => {
        resolve(code)
        wake()
      })
    )
    const until = <A>(ready: () => A | undefined, what: string): Effect.Effect<A> =>
      Effect.async<A>((resume) => {
        const check = () => {
          const value = ready()
          if (value !== undefined) {
            waiters.delete(check)
            resume(Effect.succeed(value))
          } else if (child.exitCode !== null) {
            waiters.delete(check)
            resume(Effect.dieMessage(`mcpx-fx serve exited before ${what}; stderr:\n${stderr}`))
          }
        }
        waiters.add(check)
        check()
        return Effect.sync(() => waiters.delete(check))
      })
    return {
      send: (message) =>
        Effect.async<void>((resume) => {
          child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`, () => resume(Effect.void))
        }),
      reply: (id) => until(() => replies.get(String(id)), `replying to ${JSON.stringify(id)}`),
      end: Effect.sync(() => {
        child.stdin.end()
      }),
      exited: Effect.map(Effect.promise(() => exit), (code) => ({ code, lines: [...lines], stderr }))
    }
  })

const withServers = (servers: Record<string, unknown>) =>
  Effect.gen(function*() {
    const sb = yield* sandbox
    yield* sb.writeJson(".mcpx.json", {
      mcpServers: servers,
      settings: { "upstream.probeTimeout": "20s", "transport.stdioDrain": "20s" }
    })
    return yield* serve(sb)
  })

const initialize = (host: Serve, protocolVersion: string) =>
  Effect.gen(function*() {
    yield* host.send({
      id: "init",
      method: "initialize",
      params: { protocolVersion, capabilities: {}, clientInfo: { name: "cli-serve-test", version: "1.0.0" } }
    })
    const reply = yield* host.reply("init")
    yield* host.send({ method: "notifications/initialized" })
    return reply
  })

const result = (m: Message): Record<string, unknown> => {
  assert.isObject(m.result, JSON.stringify(m))
  return m.result as Record<string, unknown>
}

const firstText = (m: Message): string => {
  const content = result(m).content
  assert.isArray(content, JSON.stringify(m))
  const first: unknown = (content as ReadonlyArray<unknown>)[0]
  assert.isObject(first)
  return String((first as Record<string, unknown>).text)
}

const modernMeta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "cli-serve-test", version: "1.0.0" }
}

describe("mcpx-fx serve", () => {
  it.scopedLive("2025-11-25/stdio/a gateway that cannot start answers initialize, then the waiting requests with its error, and exits 1", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      // The gateway refuses unprefixed names for two servers; the configuration itself loads.
      yield* sb.writeJson(".mcpx.json", {
        mcpServers: { alpha: era("dual"), beta: era("legacy-32601") },
        settings: { "names.prefix": false }
      })
      const host = yield* serve(sb)
      // Both written before the answer to the first: the build starts once the host has spoken, and
      // a failed one ends serve, so a call sent only after the answer could find serve gone.
      yield* host.send({
        id: "init",
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "cli-serve-test", version: "1.0.0" } }
      })
      yield* host.send({ id: 1, method: "tools/call", params: { name: "hello", arguments: {} } })
      const init = yield* host.reply("init")
      assert.strictEqual(result(init).protocolVersion, "2025-11-25")
      const failed = yield* host.reply(1)
      const error = failed.error as Record<string, unknown>
      assert.strictEqual(error.code, -32603, JSON.stringify(failed))
      assert.include(String(error.message), "names.prefix=false needs exactly one server")
      const exited = yield* host.exited
      assert.strictEqual(exited.code, 1, exited.stderr)
      assert.include(exited.stderr, "names.prefix=false needs exactly one server")
      for (const line of exited.lines) assert.doesNotThrow(() => JSON.parse(line), line)
    }))

  it.scopedLive("2025-11-25/stdio/initialize-list-and-call-over-either-upstream-era", () =>
    Effect.gen(function*() {
      const host = yield* withServers({ alpha: era("dual"), beta: era("legacy-32601") })
      const init = yield* initialize(host, "2025-11-25")
      assert.strictEqual(result(init).protocolVersion, "2025-11-25")
      yield* host.send({ id: 1, method: "tools/list" })
      const names = (result(yield* host.reply(1)).tools as ReadonlyArray<{ name: string }>).map((t) => t.name)
      assert.includeMembers(names, ["alpha__hello", "beta__hello"])
      yield* host.send({ id: 2, method: "tools/call", params: { name: "alpha__hello", arguments: {} } })
      yield* host.send({ id: 3, method: "tools/call", params: { name: "beta__hello", arguments: {} } })
      assert.include(firstText(yield* host.reply(2)), "over modern")
      assert.include(firstText(yield* host.reply(3)), "over legacy")
      yield* host.end
      assert.strictEqual((yield* host.exited).code, 0)
    }))

  it.scopedLive("2026-07-28/stdio/discover-and-call-with-full-meta", () =>
    Effect.gen(function*() {
      const host = yield* withServers({ alpha: era("dual") })
      yield* host.send({ id: 1, method: "server/discover", params: { _meta: modernMeta } })
      const discovered = result(yield* host.reply(1))
      assert.include(discovered.supportedVersions as ReadonlyArray<string>, "2026-07-28")
      yield* host.send({ id: 2, method: "tools/call", params: { name: "alpha__hello", arguments: {}, _meta: modernMeta } })
      assert.include(firstText(yield* host.reply(2)), "over modern")
      yield* host.end
      assert.strictEqual((yield* host.exited).code, 0)
    }))

  it.scopedLive("2024-11-05/stdio/initialize-is-served", () =>
    Effect.gen(function*() {
      const host = yield* withServers({ alpha: era("dual") })
      const init = yield* initialize(host, "2024-11-05")
      assert.strictEqual(result(init).protocolVersion, "2024-11-05")
      yield* host.send({ id: 1, method: "tools/call", params: { name: "alpha__echo", arguments: { message: "old host" } } })
      assert.strictEqual(firstText(yield* host.reply(1)), "old host")
      yield* host.end
      assert.strictEqual((yield* host.exited).code, 0)
    }))

  it.scopedLive("2025-11-25/stdio/stdout-carries-only-json-rpc", () =>
    Effect.gen(function*() {
      const host = yield* withServers({ alpha: era("dual"), beta: era("legacy-32601") })
      yield* initialize(host, "2025-11-25")
      yield* host.send({ id: 1, method: "tools/call", params: { name: "beta__echo", arguments: { message: "two\nlines" } } })
      yield* host.send({ id: 2, method: "tools/call", params: { name: "alpha__boom", arguments: {} } })
      yield* host.send({ id: 3, method: "tools/call", params: { name: "alpha__no_such_tool", arguments: {} } })
      yield* host.send({ id: 4, method: "no/such/method" })
      assert.strictEqual(firstText(yield* host.reply(1)), "two\nlines")
      assert.isTrue(result(yield* host.reply(2)).isError)
      assert.isObject((yield* host.reply(3)).error)
      assert.strictEqual(((yield* host.reply(4)).error as { code: number }).code, -32601)
      yield* host.end
      const { code, lines, stderr } = yield* host.exited
      assert.strictEqual(code, 0, stderr)
      assert.strictEqual(lines.length, 5)
      for (const line of lines) {
        const message: unknown = JSON.parse(line)
        assert.isObject(message, line)
        assert.strictEqual((message as Message).jsonrpc, "2.0", line)
      }
    }))

  it.scopedLive("2025-11-25/stdio/end-of-input-drains-a-request-in-flight-then-exits-0", () =>
    Effect.gen(function*() {
      const host = yield* withServers({ alpha: era("dual") })
      yield* initialize(host, "2025-11-25")
      yield* host.send({ id: 1, method: "tools/call", params: { name: "alpha__slow", arguments: { ms: 500 } } })
      yield* host.end
      assert.strictEqual(firstText(yield* host.reply(1)), "slept 500ms")
      assert.strictEqual((yield* host.exited).code, 0)
    }))
})
