import { assert, describe, it } from "@effect/vitest"
import { closeMatches } from "../src/Suggest.js"

const words = (input: string, candidates: ReadonlyArray<string>) => closeMatches(input, candidates, (c) => [c])

describe("Suggest.closeMatches", () => {
  it("finds a command with two letters swapped", () => {
    assert.deepStrictEqual(words("stauts", ["tools", "status", "stop", "serve", "settings"]), ["status"])
    assert.deepStrictEqual(words("lsit", ["list", "get", "set", "unset"]), ["list"])
  })

  it("matches a setting by any of its spellings, and by a part of one", () => {
    const settings = [
      { path: "pool.max", flag: "--pool-max", env: "MCPX_POOL_MAX" },
      { path: "daemon.port", flag: "--daemon-port", env: "MCPX_DAEMON_PORT" }
    ]
    const spellings = (s: (typeof settings)[number]) => [s.path, s.flag, s.env]
    assert.deepStrictEqual(closeMatches("MCPX_POOL_MAXX", settings, spellings).map((s) => s.path), ["pool.max"])
    assert.deepStrictEqual(closeMatches("port", settings, spellings).map((s) => s.path), ["daemon.port"])
  })

  it("suggests nothing for a word close to no candidate", () => {
    assert.deepStrictEqual(words("frobnicate", ["tools", "status", "stop"]), [])
  })
})
