/**
 * `mcpx-fx settings`, end to end through the bundle: precedence and sources, alias
 * normalisation, refusals with exit 2, global options at any command level, help and version.
 */
import { assert, describe, it } from "@effect/vitest"
import * as SettingsRegistry from "@mcpx-fx/config/SettingsRegistry"
import * as SettingsModel from "@mcpx-fx/config/SettingsModel"
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import { version } from "../src/version.js"
import { lines, plain, sandbox } from "./support/Sandbox.js"

/** The rows of `settings list`'s table, header left out. */
const tableRows = (stdout: string): ReadonlyArray<ReadonlyArray<string>> => lines(stdout).slice(1).map((l) => l.split(/ {2,}/))

const rowOf = (stdout: string): SettingsModel.SettingRow => JSON.parse(stdout)

describe("mcpx-fx settings list", () => {
  it.scopedLive("lists every registry setting at its default, as a table", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const r = yield* sb.run(["settings", "list"])
      assert.strictEqual(r.code, 0, r.stderr)
      assert.strictEqual(r.stderr, "")
      assert.deepStrictEqual(lines(r.stdout)[0]?.split(/ +/), ["PATH", "VALUE", "SOURCE"])
      const rows = tableRows(r.stdout)
      assert.deepStrictEqual(rows.map((row) => row[0]), SettingsRegistry.registry.map((s) => s.path))
      for (const row of rows) assert.strictEqual(row[2], "default", row.join(" "))
      assert.deepStrictEqual(rows.find((row) => row[0] === "upstream.protocol"), ["upstream.protocol", "prefer-discover", "default"])
      assert.deepStrictEqual(rows.find((row) => row[0] === "transport.allowedOrigins"), ["transport.allowedOrigins", "(none)", "default"])
    }))

  it.scopedLive("--json gives the SettingRow array", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const r = yield* sb.run(["settings", "list", "--json"])
      assert.strictEqual(r.code, 0, r.stderr)
      const rows: ReadonlyArray<SettingsModel.SettingRow> = JSON.parse(r.stdout)
      assert.deepStrictEqual(rows.map((row) => row.path), SettingsRegistry.registry.map((s) => s.path))
      const max = rows.find((row) => row.path === "pool.max")
      assert.deepInclude(max, { value: 1, text: "1", default: 1, source: "default", env: "MCPX_POOL_MAX", flag: "--pool-max", hot: false })
    }))

  it.scopedLive("resolves default < file < env < flag and shows each value's source", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* sb.writeJson("project/.mcpx.json", {
        settings: { "pool.max": 2, "pool.callTimeout": "2m", "daemon.port": 9000 }
      })
      const r = yield* sb.run(["settings", "list", "--pool-max", "4", "--daemon-port", "9100"], {
        cwd: "project",
        env: { MCPX_POOL_MAX: "3", MCPX_POOL_CALL_TIMEOUT: "90s" }
      })
      assert.strictEqual(r.code, 0, r.stderr)
      const byPath = new Map(tableRows(r.stdout).map((row) => [row[0], row.slice(1)]))
      assert.deepStrictEqual(byPath.get("pool.max"), ["4", "flag:--pool-max"])
      assert.deepStrictEqual(byPath.get("daemon.port"), ["9100", "flag:--daemon-port"])
      assert.deepStrictEqual(byPath.get("pool.callTimeout"), ["90s", "env:MCPX_POOL_CALL_TIMEOUT"])
      assert.deepStrictEqual(byPath.get("pool.idleTimeout"), ["5m", "default"])

      const fromEnv = yield* sb.run(["settings", "get", "pool.max", "--json"], { cwd: "project", env: { MCPX_POOL_MAX: "3" } })
      assert.deepInclude(rowOf(fromEnv.stdout), { value: 3, source: "env:MCPX_POOL_MAX" })
      const fromFile = yield* sb.run(["settings", "get", "pool.max", "--json"], { cwd: "project" })
      assert.deepInclude(rowOf(fromFile.stdout), { value: 2, source: `file:${file}` })
      const fromDefault = yield* sb.run(["settings", "get", "pool.max", "--json"])
      assert.deepInclude(rowOf(fromDefault.stdout), { value: 1, source: "default" })
    }))
})

describe("mcpx-fx settings get", () => {
  it.scopedLive("prints the value alone, and the whole row with --json", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const text = yield* sb.run(["settings", "get", "upstream.probeTimeout"], { env: { MCPX_UPSTREAM_PROBE_TIMEOUT: "1500ms" } })
      assert.strictEqual(text.code, 0, text.stderr)
      assert.strictEqual(text.stdout, "1500ms\n")
      const json = yield* sb.run(["settings", "get", "upstream.probeTimeout", "--json"])
      assert.strictEqual(json.code, 0, json.stderr)
      const row = rowOf(json.stdout)
      assert.deepInclude(row, { path: "upstream.probeTimeout", value: "2s", source: "default", env: "MCPX_UPSTREAM_PROBE_TIMEOUT" })
      assert.isString(row.description)
    }))

  it.scopedLive("normalises upstream.protocol aliases from env, flag and file to the canonical value", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const env = yield* sb.run(["settings", "get", "upstream.protocol"], { env: { MCPX_UPSTREAM_PROTOCOL: "legacy" } })
      assert.strictEqual(env.code, 0, env.stderr)
      assert.strictEqual(env.stdout, "prefer-initialize\n")
      const envJson = yield* sb.run(["settings", "get", "upstream.protocol", "--json"], { env: { MCPX_UPSTREAM_PROTOCOL: "legacy" } })
      assert.deepInclude(rowOf(envJson.stdout), { value: "prefer-initialize", source: "env:MCPX_UPSTREAM_PROTOCOL" })

      const flag = yield* sb.run(["settings", "get", "upstream.protocol", "--upstream-protocol", "Force-Legacy"])
      assert.strictEqual(flag.stdout, "force-initialize\n")

      const file = yield* sb.writeJson(".mcp.json", { settings: { "upstream.protocol": "modern" } })
      const fromFile = yield* sb.run(["settings", "get", "upstream.protocol", "--json"])
      assert.deepInclude(rowOf(fromFile.stdout), { value: "prefer-discover", source: `file:${file}` })
    }))

  it.scopedLive("an unknown path exits 2 and names the close matches", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const typo = yield* sb.run(["settings", "get", "pool.mx"])
      assert.strictEqual(typo.code, 2)
      assert.strictEqual(typo.stdout, "")
      assert.include(typo.stderr, `unknown setting "pool.mx"; did you mean pool.max?`)

      const envSpelling = yield* sb.run(["settings", "get", "MCPX_DAEMON_PORT"])
      assert.strictEqual(envSpelling.code, 2)
      assert.include(envSpelling.stderr, "did you mean daemon.port?")

      const nothingClose = yield* sb.run(["settings", "get", "zzzzzzzz"])
      assert.strictEqual(nothingClose.code, 2)
      assert.include(nothingClose.stderr, `expected one of: ${SettingsRegistry.paths.join(", ")}`)
    }))
})

describe("mcpx-fx settings: refusals", () => {
  it.scopedLive("a bad flag value exits 2 naming the flag and the accepted values, with nothing on stdout", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const max = yield* sb.run(["settings", "list", "--pool-max", "abc"])
      assert.strictEqual(max.code, 2)
      assert.strictEqual(max.stdout, "")
      assert.strictEqual(max.stderr, `mcpx-fx: --pool-max: expected a positive integer, got "abc"\n`)

      const protocol = yield* sb.run(["settings", "get", "upstream.protocol", "--upstream-protocol", "newest"])
      assert.strictEqual(protocol.code, 2)
      assert.strictEqual(protocol.stdout, "")
      assert.include(protocol.stderr, "--upstream-protocol")
      assert.include(protocol.stderr, `"newest"`)
      assert.include(protocol.stderr, "prefer-discover, prefer-initialize, force-discover, force-initialize, follow")
    }))

  it.scopedLive("a bad environment value exits 2 naming the variable, even when a flag overrides it", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const r = yield* sb.run(["settings", "list", "--pool-idle-timeout", "1m"], { env: { MCPX_POOL_IDLE_TIMEOUT: "soon" } })
      assert.strictEqual(r.code, 2)
      assert.strictEqual(r.stdout, "")
      assert.include(r.stderr, `MCPX_POOL_IDLE_TIMEOUT: expected a duration`)
      assert.include(r.stderr, `got "soon"`)
    }))

  it.scopedLive("a bad value in a config file exits 2 naming the file and the key", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* sb.writeJson(".mcpx.json", { settings: { "pool.max": -1 } })
      const r = yield* sb.run(["settings", "get", "pool.max"])
      assert.strictEqual(r.code, 2)
      assert.strictEqual(r.stdout, "")
      assert.strictEqual(r.stderr, `mcpx-fx: ${file}: settings["pool.max"]: expected a positive integer, got -1\n`)
    }))

  it.scopedLive("@effect/cli's own validation errors exit 2", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const missing = yield* sb.run(["settings", "get"])
      assert.strictEqual(missing.code, 2)
      assert.strictEqual(missing.stdout, "")
      assert.include(missing.stderr, "<path>")

      const unknownOption = yield* sb.run(["settings", "list", "--bogus"])
      assert.strictEqual(unknownOption.code, 2)
      assert.strictEqual(unknownOption.stdout, "")
      assert.include(unknownOption.stderr, "--bogus")

      const unknownCommand = yield* sb.run(["sttings", "list"])
      assert.strictEqual(unknownCommand.code, 2)
      assert.strictEqual(unknownCommand.stdout, "")
    }))
})

describe("mcpx-fx: global options", () => {
  it.scopedLive("are accepted before, between and after the command words", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      for (
        const args of [
          ["--json", "--pool-max", "3", "settings", "get", "pool.max"],
          ["settings", "--json", "--pool-max", "3", "get", "pool.max"],
          ["settings", "get", "pool.max", "--json", "--pool-max", "3"],
          ["--json", "settings", "get", "pool.max", "--pool-max", "3"]
        ]
      ) {
        const r = yield* sb.run(args)
        assert.strictEqual(r.code, 0, `${args.join(" ")}: ${r.stderr}`)
        assert.deepInclude(rowOf(r.stdout), { value: 3, source: "flag:--pool-max" }, args.join(" "))
      }
    }))

  it.scopedLive("a flag given at two command levels is refused with exit 2", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const r = yield* sb.run(["--pool-max", "1", "settings", "list", "--pool-max", "2"])
      assert.strictEqual(r.code, 2)
      assert.strictEqual(r.stdout, "")
      assert.include(r.stderr, "--pool-max is given more than once")
    }))

  it.scopedLive("--config names the one file the settings are read from", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      yield* sb.writeJson(".mcpx.json", { settings: { "pool.max": 2 } })
      const team = yield* sb.writeJson("elsewhere/team.json", { settings: { "pool.max": 5 } })
      const r = yield* sb.run(["settings", "get", "pool.max", "--json", "--config", "elsewhere/team.json"])
      assert.strictEqual(r.code, 0, r.stderr)
      assert.deepInclude(rowOf(r.stdout), { value: 5, source: `file:${team}` })
    }))
})

describe("mcpx-fx: help and version", () => {
  const cases: ReadonlyArray<readonly [args: ReadonlyArray<string>, example: string]> = [
    [["settings"], "mcpx-fx settings get pool.max"],
    [["settings", "list"], "mcpx-fx settings list --pool-max 3 --json"],
    [["settings", "get"], "mcpx-fx settings get upstream.protocol --json"],
    [["daemon"], "mcpx-fx daemon --daemon-port 0 --json"],
    [["status"], "mcpx-fx status --json"],
    [["stop"], "mcpx-fx stop"]
  ]
  for (const [args, example] of cases) {
    it.scopedLive(`mcpx-fx ${[...args, "--help"].join(" ")} exits 0 with an example, its own options, and the setting flags in one line`, () =>
      Effect.gen(function*() {
        const sb = yield* sandbox
        const r = yield* sb.run([...args, "--help"])
        assert.strictEqual(r.code, 0, r.stderr)
        const help = plain(r.stdout)
        assert.include(help, `Example: ${example}`)
        assert.include(help, `$ mcpx-fx ${args.join(" ")} [--config FILE] [--json] [setting flags]`)
        for (const option of ["--config FILE", "--json"]) assert.include(help, option)
        // The settings are named once, not described under every command.
        for (const setting of SettingsRegistry.registry) assert.notInclude(help, `${setting.flag} VALUE`)
        assert.include(help, `${SettingsRegistry.registry.length} in all); mcpx-fx settings list shows each`)
        // @effect/cli's line about each option's type says nothing the option does not.
        for (const blurb of ["A user-defined piece of text.", "A true or false value.", "This setting is optional."]) {
          assert.notInclude(help, blurb)
        }
        assert.isBelow(help.split("\n").length, 100)
        // A group names its commands, each on a line of its own.
        if (args.length === 1 && args[0] === "settings") {
          for (const command of ["get", "list", "set", "unset"]) assert.match(help, new RegExp(`^${command}$`, "m"))
        }
      }))
  }

  it.scopedLive("--version prints the version", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const r = yield* sb.run(["--version"])
      assert.strictEqual(r.code, 0, r.stderr)
      assert.strictEqual(r.stdout.trim(), version)
    }))

  it("the version is the mcpx-fx package's", () => {
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
    assert.strictEqual(version, manifest.version)
  })
})
