/**
 * `tools`, `call`, `protocol` and `settings` over a real daemon, end to end through the bundle:
 * each test starts `mcpx-fx daemon` in its own sandbox and state directory, runs the commands with
 * and without `--local`, and compares. That the daemon answered is shown by what only it has: its
 * upstream process reused across calls, its running sessions, its runtime setting overrides.
 */
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { createInterface } from "node:readline"
import { bundle, lines, type Run, type Sandbox, sandbox } from "./support/Sandbox.js"

const era = (mode: string, extra: ReadonlyArray<string> = []) => ({
  command: process.execPath,
  args: [Fixtures.fixtureScript("era-server"), "--mode", mode, ...extra]
})

/** What `mcpx-fx daemon --json` prints once it listens. */
interface Listening {
  readonly pid: number
  readonly socket: string
  readonly url: string
}

/**
 * A sandbox with `.mcpx.json` at its root and a daemon serving it, stopped (SIGTERM, the path
 * `mcpx-fx stop` takes) when the scope closes. `run` runs the CLI against the daemon's state dir.
 */
const withDaemon = (servers: (sb: Sandbox) => Record<string, unknown>, settings: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const sb = yield* sandbox
    yield* sb.writeJson(".mcpx.json", { mcpServers: servers(sb), settings: { "upstream.probeTimeout": "20s", "daemon.port": 0, ...settings } })
    const stateDir = sb.path("state")
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: sb.home,
      XDG_CONFIG_HOME: sb.path("home", ".config"),
      MCPX_STATE_DIR: stateDir
    }
    const daemon = yield* Effect.acquireRelease(
      Effect.async<{ readonly listening: Listening; readonly stop: Effect.Effect<void> }>((resume) => {
        const child = spawn(process.execPath, [bundle, "daemon", "--json"], {
          cwd: sb.root,
          env,
          stdio: ["ignore", "pipe", "pipe"]
        })
        let stderr = ""
        let settled = false
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
        const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
        const stop = Effect.promise(() => {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
          return exited
        })
        // The JSON line is the daemon's own signal that it listens and its files are written.
        createInterface({ input: child.stdout }).once("line", (line) => {
          if (settled) return
          settled = true
          resume(Effect.succeed({ listening: JSON.parse(line) as Listening, stop }))
        })
        child.once("exit", (code) => {
          if (settled) return
          settled = true
          resume(Effect.dieMessage(`the daemon exited (${code}) before listening:\n${stderr}`))
        })
      }),
      (d) => d.stop
    )
    const run = (args: ReadonlyArray<string>): Effect.Effect<Run> => sb.run(args, { env: { MCPX_STATE_DIR: stateDir } })
    return { sb, run, daemon: daemon.listening }
  })

/** Runs the same command via the daemon and with `--local`. */
const both = (run: (args: ReadonlyArray<string>) => Effect.Effect<Run>, args: ReadonlyArray<string>) =>
  Effect.all({ daemon: run(args), local: run([...args, "--local"]) })

/**
 * The command's own messages on stderr. Logs of the gateway (an upstream's failed start, say) are
 * written by whichever process runs it, so an in-process run has lines the daemon wrote elsewhere.
 */
const messages = (stderr: string): ReadonlyArray<string> => lines(stderr).filter((l) => l.startsWith("mcpx-fx: "))

const assertSame = (r: { readonly daemon: Run; readonly local: Run }, what: string) => {
  assert.strictEqual(r.daemon.stdout, r.local.stdout, `${what}: stdout`)
  assert.deepStrictEqual(messages(r.daemon.stderr), messages(r.local.stderr), `${what}: stderr`)
  assert.strictEqual(r.daemon.code, r.local.code, `${what}: exit code`)
}

const count = (text: string, line: string): number => lines(text).filter((l) => l === line).length

describe("mcpx-fx over a running daemon", () => {
  it.scopedLive("cli/daemon/tools via the daemon equals in-process", () =>
    Effect.gen(function*() {
      const { run } = yield* withDaemon(() => ({
        alpha: era("dual"),
        beta: era("legacy-32601"),
        broken: { command: process.execPath, args: ["-e", "process.stderr.write('missing API key'); process.exit(3)"] }
      }))
      const json = yield* both(run, ["tools", "--json"])
      assert.strictEqual(json.daemon.code, 0, json.daemon.stderr)
      // The daemon starts the broken server again later and says when; an in-process run ends
      // here, so its message names no next start. Otherwise the two are the same.
      const nextStart = /; next start in [0-9.]+m?s/
      assert.match(json.daemon.stdout, nextStart)
      assert.notMatch(json.local.stdout, nextStart)
      assertSame({ ...json, daemon: { ...json.daemon, stdout: json.daemon.stdout.replace(nextStart, "") } }, "tools --json")
      // The failed start is reported once, in the listing: neither process logs it on stderr as well.
      assert.strictEqual(json.daemon.stderr, "")
      assert.strictEqual(json.local.stderr, "")
      assert.include(json.local.stdout, "missing API key")
      const listing = JSON.parse(json.daemon.stdout) as {
        tools: ReadonlyArray<{ name: string }>
        failures: ReadonlyArray<{ server: string; message: string }>
      }
      assert.includeMembers(listing.tools.map((t) => t.name), ["alpha__hello", "alpha__echo", "beta__echo"])
      assert.deepStrictEqual(listing.failures.map((f) => f.server), ["broken"])
      assert.include(listing.failures[0]?.message, "missing API key")

      // The broken server's start failures differ from here on (the daemon remembers its cooldown),
      // so the text listing is compared on what it lists.
      const text = yield* both(run, ["tools"])
      assert.strictEqual(text.daemon.code, 0, text.daemon.stderr)
      assert.strictEqual(text.daemon.stdout, text.local.stdout)
      assert.match(text.daemon.stdout, /^alpha__hello +/m)
      assert.include(text.daemon.stderr, "mcpx-fx: broken: ")
      assert.include(text.local.stderr, "mcpx-fx: broken: ")
      const alpha = yield* both(run, ["tools", "alpha"])
      assert.strictEqual(alpha.daemon.code, 0, alpha.daemon.stderr)
      assertSame(alpha, "tools alpha")

      const one = yield* both(run, ["tools", "beta", "--json"])
      assertSame(one, "tools beta --json")
      const names = (JSON.parse(one.daemon.stdout) as { tools: ReadonlyArray<{ name: string }> }).tools.map((t) => t.name)
      assert.isTrue(names.length > 0 && names.every((n) => n.startsWith("beta__")), names.join(", "))

      const failing = yield* both(run, ["tools", "broken", "--json"])
      assert.strictEqual(failing.daemon.code, 1)
      assert.strictEqual(failing.local.code, 1)
      assert.deepStrictEqual(JSON.parse(failing.daemon.stdout).tools, [])
      assert.deepStrictEqual(JSON.parse(failing.local.stdout).tools, [])
      assert.include(failing.daemon.stderr, "no server could be listed (1 failed)")

      const unknown = yield* both(run, ["tools", "gamma"])
      assert.strictEqual(unknown.daemon.code, 2)
      assertSame(unknown, "tools gamma")
      assert.include(unknown.daemon.stderr, "configured: alpha, beta, broken")
    }), 90_000)

  it.scopedLive("cli/daemon/call via the daemon equals in-process and reuses the daemon's upstream", () =>
    Effect.gen(function*() {
      const { run, sb } = yield* withDaemon((sb) => ({
        alpha: era("dual"),
        old: era("legacy-32601", ["--log", sb.path("old.log")])
      }))
      const log = () => readFileSync(sb.path("old.log"), "utf8")

      const first = yield* run(["call", "old.hello"])
      const second = yield* run(["call", "old.hello"])
      assert.strictEqual(first.code, 0, first.stderr)
      assert.strictEqual(first.stdout, "hello from legacy-32601 over legacy 2025-11-25\n")
      assert.deepStrictEqual(second, first)
      // Two calls, one upstream start: the daemon's session answered both.
      assert.strictEqual(count(log(), "legacy initialize"), 1, log())
      assert.strictEqual(count(log(), "legacy tools/call"), 2, log())
      const local = yield* run(["call", "old.hello", "--local"])
      assert.deepStrictEqual(local, first)
      assert.strictEqual(count(log(), "legacy initialize"), 2, log())

      const echo = yield* both(run, ["call", "alpha.echo", JSON.stringify({ message: "two\nlines" })])
      assert.strictEqual(echo.daemon.stdout, "two\nlines\n")
      assertSame(echo, "call alpha.echo")

      const structured = yield* both(run, ["call", "alpha__structured", "--json"])
      assert.strictEqual(structured.daemon.code, 0, structured.daemon.stderr)
      assertSame(structured, "call alpha__structured --json")
      assert.deepInclude(JSON.parse(structured.daemon.stdout).structuredContent, { mode: "dual", era: "modern" })

      const boom = yield* both(run, ["call", "alpha.boom"])
      assert.strictEqual(boom.daemon.code, 1)
      assertSame(boom, "call alpha.boom")
      assert.include(boom.daemon.stdout, "boom: this tool always fails")

      const typo = yield* both(run, ["call", "alpha.ecoh", "{}"])
      assert.strictEqual(typo.daemon.code, 2)
      assertSame(typo, "call alpha.ecoh")
      assert.include(typo.daemon.stderr, "alpha__echo")

      const notJson = yield* both(run, ["call", "alpha.echo", "[1]"])
      assert.strictEqual(notJson.daemon.code, 2)
      assertSame(notJson, "call alpha.echo [1]")
    }), 90_000)

  it.scopedLive("cli/daemon/protocol via the daemon equals in-process, then shows the daemon's sessions", () =>
    Effect.gen(function*() {
      const { run } = yield* withDaemon(() => ({
        old: era("legacy-32601"),
        pinned: { ...era("dual"), protocol: "Force-Legacy" }
      }))
      const before = yield* both(run, ["protocol", "--json"])
      assert.strictEqual(before.daemon.code, 0, before.daemon.stderr)
      assertSame(before, "protocol --json")
      const text = yield* both(run, ["protocol"])
      assertSame(text, "protocol")

      const call = yield* run(["call", "old.hello"])
      assert.strictEqual(call.code, 0, call.stderr)
      type Row = { server: string; era: string | null; eraSource: string | null; cached: { era: string } | null }
      const rows = (r: Run) => (JSON.parse(r.stdout) as { servers: ReadonlyArray<Row> }).servers
      const after = yield* both(run, ["protocol", "--json"])
      const viaDaemon = rows(after.daemon).find((r) => r.server === "old")
      const inProcess = rows(after.local).find((r) => r.server === "old")
      // The daemon has a live session; a fresh process has only the era cache both share.
      assert.deepInclude(viaDaemon, { era: "legacy", eraSource: "probe" })
      assert.deepInclude(inProcess, { era: null, eraSource: null })
      assert.deepStrictEqual(viaDaemon?.cached, inProcess?.cached)
      assert.strictEqual(inProcess?.cached?.era, "legacy")
    }), 90_000)

  it.scopedLive("cli/daemon/search --refresh asks the daemon to start the servers never listed; a plain search starts none", () =>
    Effect.gen(function*() {
      const { run } = yield* withDaemon(() => ({ alpha: era("dual") }))
      const cold = yield* run(["search", "echo", "--json"])
      assert.strictEqual(cold.code, 0, cold.stderr)
      assert.deepStrictEqual(JSON.parse(cold.stdout).unlisted, ["alpha"])
      assert.notInclude((yield* run(["status", "--json"])).stdout, "alpha#")
      const fresh = yield* run(["search", "echo", "--refresh", "--json"])
      assert.strictEqual(fresh.code, 0, fresh.stderr)
      assert.deepInclude(JSON.parse(fresh.stdout), { unlisted: [] })
      assert.include(fresh.stdout, "alpha__echo")
      assert.include((yield* run(["status", "--json"])).stdout, "alpha#")
    }), 90_000)

  it.scopedLive("cli/daemon/probe asks the daemon, which probes with its own runtime settings", () =>
    Effect.gen(function*() {
      const { run } = yield* withDaemon(() => ({ old: era("legacy-32601") }))
      const json = yield* both(run, ["probe", "old", "--json"])
      assert.strictEqual(json.daemon.code, 0, json.daemon.stderr)
      assert.deepStrictEqual(Object.keys(JSON.parse(json.daemon.stdout)), Object.keys(JSON.parse(json.local.stdout)))
      assert.deepInclude(JSON.parse(json.daemon.stdout), { server: "old", era: "legacy", eraSource: "probe", preference: "prefer-discover" })
      // A runtime override only the daemon has: its probe follows it, an in-process one does not.
      assert.strictEqual((yield* run(["settings", "set", "upstream.protocol", "prefer-initialize"])).code, 0)
      const after = yield* both(run, ["probe", "old"])
      assert.strictEqual(after.daemon.code, 0, after.daemon.stderr)
      assert.include(after.daemon.stdout, "old: legacy 2025-11-25 over stdio (upstream.protocol=prefer-initialize")
      assert.include(after.local.stdout, "(upstream.protocol=prefer-discover")
      const typo = yield* both(run, ["probe", "olde"])
      assert.strictEqual(typo.daemon.code, 2)
      assertSame(typo, "probe olde")
    }), 90_000)

  it.scopedLive("cli/daemon/call: the first call on a fresh daemon carries Mcp-Param-* to a strict modern HTTP upstream", () =>
    Effect.gen(function*() {
      const { url } = yield* Fixtures.startHttpFixture("era-server", ["--mode", "modern-only", "--header-tools"])
      // The daemon's first call of all, straight to /v1/call: nothing has listed the tools.
      const fresh = yield* withDaemon(() => ({ strict: { url } }))
      const answer = yield* Effect.promise(() =>
        fetch(`${fresh.daemon.url}/v1/call`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ tool: "strict.weather", arguments: { region: "north" } })
        }).then(async (r) => ({ status: r.status, body: await r.text() }))
      )
      assert.strictEqual(answer.status, 200, answer.body)
      assert.include(answer.body, "weather for north over modern 2026-07-28")
      // And the first `mcpx-fx call` of another fresh daemon (which goes by /v1/ask).
      const other = yield* withDaemon(() => ({ strict: { url } }))
      const first = yield* other.run(["call", "strict.weather", JSON.stringify({ region: "north" })])
      assert.strictEqual(first.code, 0, first.stderr)
      assert.strictEqual(first.stdout, "weather for north over modern 2026-07-28\n")
    }), 90_000)

  it.scopedLive(
    "cli/daemon/call: an HTTP upstream that turns legacy while the daemon runs is probed again, and protocol says so",
    () =>
      Effect.gen(function*() {
        const { url } = yield* Fixtures.startHttpFixture("era-server", ["--mode", "dual"])
        const { run } = yield* withDaemon(() => ({ remote: { url } }))
        const before = yield* run(["call", "remote.hello"])
        assert.strictEqual(before.stdout, "hello from dual over modern 2026-07-28\n", before.stderr)
        // The server behind the URL is replaced by a legacy one that answers modern requests 404.
        yield* Effect.promise(() => fetch(url.replace(/\/mcp$/, "/control"), { method: "POST", body: JSON.stringify({ mode: "legacy-exit" }) }))
        const after = yield* run(["call", "remote.hello"])
        assert.strictEqual(after.code, 0, after.stderr)
        assert.strictEqual(after.stdout, "hello from legacy-exit over legacy 2025-11-25\n")
        type Row = { server: string; era: string | null; cached: { era: string } | null }
        const rows = JSON.parse((yield* run(["protocol", "--json"])).stdout) as { servers: ReadonlyArray<Row> }
        assert.deepInclude(rows.servers[0], { server: "remote", era: "legacy" })
        assert.strictEqual(rows.servers[0]?.cached?.era, "legacy")
      }),
    90_000
  )

  it.scopedLive("cli/daemon/settings set, get and unset change the daemon's runtime value", () =>
    Effect.gen(function*() {
      const { run, sb } = yield* withDaemon(() => ({ alpha: era("dual") }), { "pool.max": 2 })
      const listed = yield* both(run, ["settings", "list", "--json"])
      assert.strictEqual(listed.daemon.code, 0, listed.daemon.stderr)
      assertSame(listed, "settings list --json")
      const table = yield* both(run, ["settings", "list"])
      assertSame(table, "settings list")
      const poolMax = lines(table.daemon.stdout).find((l) => l.startsWith("pool.max "))
      assert.deepStrictEqual(poolMax?.split(/ {2,}/), ["pool.max", "2", `file:${sb.path(".mcpx.json")}`])

      const set = yield* run(["settings", "set", "pool.callTimeout", "9s"])
      assert.strictEqual(set.code, 0, set.stderr)
      assert.strictEqual(set.stdout, "pool.callTimeout = 9s (runtime)\n")
      const got = yield* run(["settings", "get", "pool.callTimeout", "--json"])
      assert.deepInclude(JSON.parse(got.stdout), { path: "pool.callTimeout", value: "9s", source: "runtime" })
      assert.strictEqual((yield* run(["settings", "get", "pool.callTimeout"])).stdout, "9s\n")
      // The override lives in the daemon: this process's own resolution never sees it.
      const local = yield* run(["settings", "get", "pool.callTimeout", "--local", "--json"])
      assert.deepInclude(JSON.parse(local.stdout), { value: "1m", source: "default" })
      // A setting flag applies to this invocation only, so it is answered in-process.
      const flagged = yield* run(["settings", "get", "pool.callTimeout", "--pool-call-timeout", "5s", "--json"])
      assert.deepInclude(JSON.parse(flagged.stdout), { value: "5s", source: "flag:--pool-call-timeout" })
      const row = (JSON.parse((yield* run(["settings", "list", "--json"])).stdout) as ReadonlyArray<{ path: string; text: string; source: string }>)
        .find((r) => r.path === "pool.callTimeout")
      assert.deepInclude(row, { text: "9s", source: "runtime" })

      const cold = yield* run(["settings", "set", "pool.max", "3", "--json"])
      assert.strictEqual(cold.code, 1)
      assert.deepInclude(JSON.parse(cold.stdout), { path: "pool.max", applied: false, restartRequired: true })
      assert.include(cold.stderr, "MCPX_POOL_MAX")
      const invalid = yield* run(["settings", "set", "pool.callTimeout", "soon"])
      assert.strictEqual(invalid.code, 2)
      assert.include(invalid.stderr, "pool.callTimeout")
      const typo = yield* both(run, ["settings", "get", "pool.calltimeout"])
      assert.strictEqual(typo.daemon.code, 2)
      assertSame(typo, "settings get pool.calltimeout")
      assert.include(typo.daemon.stderr, "did you mean pool.callTimeout")

      const unset = yield* run(["settings", "unset", "pool.callTimeout"])
      assert.strictEqual(unset.code, 0, unset.stderr)
      assert.strictEqual(unset.stdout, "pool.callTimeout = 1m (default)\n")
      const again = yield* run(["settings", "unset", "pool.callTimeout", "--json"])
      assert.deepInclude(JSON.parse(again.stdout), { removed: false, value: "1m", source: "default" })
      const restored = yield* both(run, ["settings", "get", "pool.callTimeout", "--json"])
      assertSame(restored, "settings get after unset")
    }), 90_000)
})
