/**
 * The daemon-or-in-process switch when no daemon answers, end to end through the bundle: a
 * `daemon.json` naming a live process whose socket is gone makes `tools`, `call`, `protocol` and
 * `settings` warn and run in-process; `settings set|unset` need a daemon and say so; `--local` is
 * documented on every command that can use one.
 */
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import { plain, type Run, sandbox } from "./support/Sandbox.js"

const era = (mode: string) => ({ command: process.execPath, args: [Fixtures.fixtureScript("era-server"), "--mode", mode] })

/** A sandbox with one dual-era server configured, and the runs of the CLI against its state dir. */
const configured = Effect.gen(function*() {
  const sb = yield* sandbox
  yield* sb.writeJson(".mcpx.json", { mcpServers: { alpha: era("dual") }, settings: { "upstream.probeTimeout": "20s" } })
  const stateDir = yield* sb.mkdir("state")
  const run = (args: ReadonlyArray<string>): Effect.Effect<Run> => sb.run(args, { env: { MCPX_STATE_DIR: stateDir } })
  return { sb, run }
})

describe("mcpx-fx when no daemon answers", () => {
  it.scopedLive("cli/daemon/a daemon whose socket does not answer: a warning, then the same output in-process", () =>
    Effect.gen(function*() {
      const { run, sb } = yield* configured
      // This test's own process is alive, so the file reads as a live daemon; its socket was never made.
      const socket = sb.path("state", "daemon.sock")
      yield* sb.writeJson("state/daemon.json", {
        pid: process.pid,
        version: "0.0.0",
        url: "http://127.0.0.1:9",
        mcp: "http://127.0.0.1:9/mcp",
        socket,
        startedAt: new Date(0).toISOString(),
        configFiles: []
      })
      const warning = `mcpx-fx: warning: the daemon (pid ${process.pid}) did not answer on ${socket}`
      for (
        const args of [
          ["tools", "--json"],
          ["call", "alpha.echo", JSON.stringify({ message: "still here" })],
          ["protocol", "--json"],
          ["settings", "get", "pool.max", "--json"]
        ]
      ) {
        const fallback = yield* run(args)
        const local = yield* run([...args, "--local"])
        assert.strictEqual(fallback.code, 0, `${args.join(" ")}: ${fallback.stderr}`)
        assert.strictEqual(fallback.stdout, local.stdout, args.join(" "))
        assert.isTrue(fallback.stderr.startsWith(warning), fallback.stderr)
        assert.include(fallback.stderr, "running in-process")
        assert.notInclude(local.stderr, "warning")
      }
      const set = yield* run(["settings", "set", "pool.callTimeout", "9s"])
      assert.strictEqual(set.code, 1)
      assert.strictEqual(set.stdout, "")
      assert.include(set.stderr, "settings set needs a running daemon")
      assert.include(set.stderr, `did not answer on ${socket}`)
    }), 60_000)

  it.scopedLive("cli/daemon/settings set and unset without a daemon exit 1 and say a daemon is needed", () =>
    Effect.gen(function*() {
      const { run, sb } = yield* configured
      const set = yield* run(["settings", "set", "pool.callTimeout", "9s"])
      assert.strictEqual(set.code, 1)
      assert.strictEqual(set.stdout, "")
      assert.strictEqual(
        set.stderr,
        "mcpx-fx: settings set needs a running daemon (start one with `mcpx-fx daemon`): none is running for the " +
          `state directory ${sb.path("state")}\n`
      )
      const unset = yield* run(["settings", "unset", "pool.callTimeout", "--json"])
      assert.strictEqual(unset.code, 1)
      assert.strictEqual(unset.stdout, "")
      assert.include(unset.stderr, "settings unset needs a running daemon")
      // A path that does not exist is the caller's mistake whether or not a daemon runs.
      const typo = yield* run(["settings", "set", "pool.calltimeout", "9s"])
      assert.strictEqual(typo.code, 2)
      assert.include(typo.stderr, "did you mean pool.callTimeout")
      // Without a daemon the reading commands run in-process, silently.
      const get = yield* run(["settings", "get", "pool.callTimeout"])
      assert.deepStrictEqual(get, { stdout: "1m\n", stderr: "", code: 0 })
    }))

  it.scopedLive("cli/daemon/--local is documented on every command that can use the daemon", () =>
    Effect.gen(function*() {
      const { run } = yield* configured
      for (const args of [["tools"], ["call"], ["protocol"], ["settings", "list"], ["settings", "get"]]) {
        const help = yield* run([...args, "--help"])
        assert.strictEqual(help.code, 0, help.stderr)
        const text = plain(help.stdout)
        assert.include(text, "--local", args.join(" "))
        assert.include(text, "Asks the running daemon when there is one", args.join(" "))
      }
      for (const args of [["settings", "set"], ["settings", "unset"]]) {
        const help = plain((yield* run([...args, "--help"])).stdout)
        assert.include(help, "Needs a running daemon", args.join(" "))
        assert.notInclude(help, "--local", args.join(" "))
      }
    }), 60_000)
})
