/**
 * `--log-format json` and `MCPX_LOG_FORMAT`, through the bundle: every line on stderr is one JSON
 * object (level, message, annotations), stdout keeps the command's output, and a format mcpx-fx
 * does not write is a usage error.
 */
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import { sandbox } from "./support/Sandbox.js"

const servers = { alpha: { command: process.execPath, args: [Fixtures.fixtureScript("era-server"), "--mode", "dual"] } }

const jsonLines = (stderr: string) =>
  stderr.split("\n").filter((l) => l.trim() !== "").map((l) => {
    try {
      return JSON.parse(l) as Record<string, unknown>
    } catch {
      return assert.fail(`not a JSON line: ${l}`)
    }
  })

describe("mcpx-fx --log-format", () => {
  it.scopedLive("cli/logging/json: each stderr line is a JSON object; stdout is the command's own", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* sb.writeJson("mcpx.json", { mcpServers: servers, settings: { "upstream.probeTimeout": "20s" } })
      for (
        const [args, env] of [
          [["tools", "--config", file, "--log-level", "info", "--log-format", "json"], {}],
          [["tools", "--config", file, "--log-level", "info"], { MCPX_LOG_FORMAT: "json" }]
        ] as const
      ) {
        const r = yield* sb.run(args, { env })
        assert.strictEqual(r.code, 0, r.stderr)
        assert.match(r.stdout, /^alpha__echo /m)
        const lines = jsonLines(r.stderr)
        const started = lines.find((l) => typeof l.message === "string" && l.message.startsWith("started alpha#1"))
        assert.isDefined(started, r.stderr)
        assert.strictEqual(started?.level, "info")
        assert.strictEqual(started?.server, "alpha")
        assert.isString(started?.time)
      }
      // The text default is not JSON.
      const text = yield* sb.run(["tools", "--config", file, "--log-level", "info"])
      assert.strictEqual(text.code, 0, text.stderr)
      assert.include(text.stderr, "started alpha#1")
      assert.isFalse(text.stderr.trimStart().startsWith("{"), text.stderr)
    }))

  it.scopedLive("cli/logging/the config's log.format applies once the file is read; the flag still wins", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* sb.writeJson("mcpx.json", { mcpServers: servers, settings: { "upstream.probeTimeout": "20s", "log.format": "json" } })
      const fromFile = yield* sb.run(["tools", "--config", file, "--log-level", "info"])
      assert.strictEqual(fromFile.code, 0, fromFile.stderr)
      const started = jsonLines(fromFile.stderr).find((l) => typeof l.message === "string" && l.message.startsWith("started alpha#1"))
      assert.strictEqual(started?.server, "alpha", fromFile.stderr)
      const flag = yield* sb.run(["tools", "--config", file, "--log-level", "info", "--log-format", "text"])
      assert.strictEqual(flag.code, 0, flag.stderr)
      assert.include(flag.stderr, "started alpha#1")
      assert.isFalse(flag.stderr.trimStart().startsWith("{"), flag.stderr)
    }))

  it.scopedLive("cli/logging/a format it does not write is exit 2, from the flag or the environment", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const flag = yield* sb.run(["tools", "--log-format", "yaml"])
      assert.strictEqual(flag.code, 2, flag.stderr)
      assert.include(flag.stderr, `--log-format: expected text or json, got "yaml"`)
      const env = yield* sb.run(["tools"], { env: { MCPX_LOG_FORMAT: "yaml" } })
      assert.strictEqual(env.code, 2, env.stderr)
      assert.include(env.stderr, `MCPX_LOG_FORMAT: expected text or json, got "yaml"`)
    }))
})
