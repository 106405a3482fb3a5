/**
 * `mcpx-fx tools`, `call`, `protocol` and `probe`, end to end through the bundle against real
 * upstream fixtures: names as hosts see them, exit codes, the era cache shared between two
 * processes, and stdout carrying nothing but the answer.
 */
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import { readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { type Sandbox, sandbox } from "./support/Sandbox.js"

const era = (mode: string, extra: ReadonlyArray<string> = []) => ({
  command: process.execPath,
  args: [Fixtures.fixtureScript("era-server"), "--mode", mode, ...extra]
})

/** A sandbox with a config of the given servers in `.mcpx.json` at its root. */
const withServers = (servers: Record<string, unknown>) =>
  Effect.gen(function*() {
    const sb = yield* sandbox
    yield* sb.writeJson(".mcpx.json", { mcpServers: servers, settings: { "upstream.probeTimeout": "20s" } })
    return sb
  })

const stateFile = (sb: Sandbox) => join(sb.home, ".local", "state", "mcpx-fx", "upstream-eras.json")

describe("mcpx-fx tools", () => {
  it.scopedLive("gateway/cli/tools-lists-every-server-and-reports-a-broken-one", () =>
    Effect.gen(function*() {
      const sb = yield* withServers({
        alpha: era("dual"),
        beta: era("legacy-32601"),
        broken: { command: process.execPath, args: ["-e", "process.stderr.write('missing API key'); process.exit(3)"] }
      })
      const r = yield* sb.run(["tools"])
      assert.strictEqual(r.code, 0, r.stderr)
      assert.match(r.stdout, /^alpha__hello +/m)
      assert.match(r.stdout, /^beta__echo +/m)
      assert.include(r.stderr, "broken")
      assert.include(r.stderr, "missing API key")
      const json = yield* sb.run(["tools", "beta", "--json"])
      const parsed = JSON.parse(json.stdout) as { tools: ReadonlyArray<{ name: string; inputSchema: unknown }> }
      assert.isTrue(parsed.tools.length > 0 && parsed.tools.every((t) => t.name.startsWith("beta__")))
      assert.isDefined(parsed.tools.find((t) => t.name === "beta__echo")?.inputSchema)
      const unknown = yield* sb.run(["tools", "gamma"])
      assert.strictEqual(unknown.code, 2)
      assert.include(unknown.stderr, "alpha")
    }))
})

describe("mcpx-fx: an upstream command that is not installed", () => {
  it.scopedLive("gateway/cli/a-missing-command-is-one-line-naming-it-the-server-and-PATH", () =>
    Effect.gen(function*() {
      const sb = yield* withServers({ ghost: { command: "nonexistent-binary-mcpx", args: [] }, alpha: era("dual") })
      const expected = `upstream ghost failed to start: command "nonexistent-binary-mcpx" was not found on PATH; ` +
        `install it, or give its full path as the server's "command"`
      const call = yield* sb.run(["call", "ghost.anything"])
      assert.strictEqual(call.code, 1)
      assert.strictEqual(call.stdout, "")
      // Once, and nothing about a next start: this process ends here.
      assert.strictEqual(call.stderr, `mcpx-fx: ${expected}\n`)
      const tools = yield* sb.run(["tools"])
      assert.strictEqual(tools.code, 0, tools.stderr)
      assert.match(tools.stdout, /^alpha__hello +/m)
      assert.strictEqual(tools.stderr, `mcpx-fx: ghost: ${expected}\n`)
      const only = yield* sb.run(["tools", "ghost"])
      assert.strictEqual(only.code, 1)
      assert.strictEqual(only.stderr, `mcpx-fx: ghost: ${expected}\nmcpx-fx: no server could be listed (1 failed)\n`)
      // A missing working directory is named as such, not as a missing command.
      const nowhere = yield* withServers({ away: { ...era("dual"), cwd: "no/such/dir" } })
      const away = yield* nowhere.run(["call", "away.hello"])
      assert.strictEqual(away.code, 1)
      assert.strictEqual(away.stderr, `mcpx-fx: upstream away failed to start: its working directory "${nowhere.path("no/such/dir")}" does not exist\n`)
    }))
})

describe("mcpx-fx call", () => {
  it.scopedLive("gateway/cli/call-prints-text-and-maps-outcomes-to-exit-codes", () =>
    Effect.gen(function*() {
      const sb = yield* withServers({ alpha: era("dual") })
      const ok = yield* sb.run(["call", "alpha.echo", JSON.stringify({ message: "two\nlines" })])
      assert.strictEqual(ok.code, 0, ok.stderr)
      assert.strictEqual(ok.stdout, "two\nlines\n")
      assert.strictEqual(ok.stderr, "")
      const piped = yield* sb.run(["call", "alpha__echo", "-"], { stdin: JSON.stringify({ message: "from stdin" }) })
      assert.strictEqual(piped.stdout, "from stdin\n")
      const boom = yield* sb.run(["call", "alpha.boom"])
      assert.strictEqual(boom.code, 1)
      const typo = yield* sb.run(["call", "alpha.ecoh", "{}"])
      assert.strictEqual(typo.code, 2)
      assert.include(typo.stderr, "alpha__echo")
      const bad = yield* sb.run(["call", "alpha.echo", "{not json"])
      assert.strictEqual(bad.code, 2)
      assert.include(bad.stderr, "not JSON")
      const full = yield* sb.run(["call", "alpha.hello", "--json"])
      assert.include(JSON.parse(full.stdout).content[0].text, "over modern")
    }))
})

describe("mcpx-fx protocol and probe", () => {
  it.scopedLive("2026-07-28/era-cache/persisted-across-two-cli-processes", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const log = sb.path("legacy.log")
      yield* sb.writeJson(".mcpx.json", {
        mcpServers: {
          old: era("legacy-32601", ["--log", log]),
          pinned: { ...era("dual"), protocol: "Force-Legacy" }
        }
      })
      const first = yield* sb.run(["call", "old.hello"])
      assert.strictEqual(first.code, 0, first.stderr)
      assert.include(first.stdout, "over legacy")
      assert.strictEqual(statSync(stateFile(sb)).mode & 0o777, 0o600)
      const before = readFileSync(log, "utf8")
      assert.include(before, "server/discover")
      const second = yield* sb.run(["call", "old.hello"])
      assert.strictEqual(second.code, 0, second.stderr)
      const after = readFileSync(log, "utf8").slice(before.length)
      assert.include(after, "initialize")
      assert.notInclude(after, "server/discover")

      const protocol = yield* sb.run(["protocol", "--json"])
      const rows = JSON.parse(protocol.stdout).servers as ReadonlyArray<Record<string, unknown>>
      const old = rows.find((r) => r.server === "old")!
      const pinned = rows.find((r) => r.server === "pinned")!
      assert.strictEqual(old.preference, "prefer-discover")
      assert.deepInclude(old.cached as object, { era: "legacy", version: "2025-11-25", source: "probe" })
      assert.strictEqual(pinned.preference, "force-initialize")
      assert.isNull(pinned.cached)

      const probe = yield* sb.run(["probe", "old"])
      assert.strictEqual(probe.code, 0, probe.stderr)
      assert.include(probe.stdout, "old: legacy 2025-11-25")
      assert.include(probe.stdout, "sent server/discover")
      const missing = yield* sb.run(["probe", "olde"])
      assert.strictEqual(missing.code, 2)
      assert.include(missing.stderr, "old")

      const json = yield* sb.run(["probe", "old", "--json"])
      assert.strictEqual(json.code, 0, json.stderr)
      const report = JSON.parse(json.stdout) as Record<string, unknown>
      assert.deepInclude(report, { server: "old", era: "legacy", eraSource: "probe", wire: "stdio" })
      assert.deepInclude(report.cached as object, { era: "legacy", version: "2025-11-25" })
    }))
})

describe("mcpx-fx call against a strict modern HTTP upstream", () => {
  it.scopedLive("gateway/cli/call-in-process-sends-the-tool's-Mcp-Param-headers-on-its-first-call", () =>
    Effect.gen(function*() {
      // The one call of a fresh process: nothing listed the tools before it.
      const { url } = yield* Fixtures.startHttpFixture("era-server", ["--mode", "modern-only", "--header-tools"])
      const sb = yield* withServers({ strict: { url } })
      const r = yield* sb.run(["call", "strict.weather", JSON.stringify({ region: "north" })])
      assert.strictEqual(r.code, 0, r.stderr)
      assert.strictEqual(r.stdout, "weather for north over modern 2026-07-28\n")
    }))
})
