import { assert, describe, it } from "@effect/vitest"
import { closeMatches, closest, distance } from "../src/Suggest.js"

describe("Suggest.distance", () => {
  it("counts insertions, deletions and substitutions one each", () => {
    assert.strictEqual(distance("", ""), 0)
    assert.strictEqual(distance("", "abc"), 3)
    assert.strictEqual(distance("abc", ""), 3)
    assert.strictEqual(distance("kitten", "sitting"), 3)
    assert.strictEqual(distance("status", "status"), 0)
    assert.strictEqual(distance("stop", "stops"), 1)
  })

  it("counts a swap of two neighbours as one, where Levenshtein would count two", () => {
    assert.strictEqual(distance("stauts", "status"), 1)
    assert.strictEqual(distance("lsit", "list"), 1)
    assert.strictEqual(distance("ab", "ba"), 1)
    // Optimal string alignment: a swapped pair is not edited again.
    assert.strictEqual(distance("ca", "abc"), 3)
  })

  it("is symmetric", () => {
    for (const [a, b] of [["stauts", "status"], ["pool.max", "poolmax"], ["serve", "server"], ["ecoh", "echo"]] as const) {
      assert.strictEqual(distance(a, b), distance(b, a), `${a} / ${b}`)
    }
  })

  it("is what the closest names are measured with", () => {
    const close = closest("alpha__ehco", ["alpha__hello", "beta__boom", "alpha__echo"])
    assert.strictEqual(close[0], "alpha__echo")
    assert.notInclude(close, "beta__boom")
  })
})

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

describe("Suggest.closest", () => {
  it("finds a tool typed with a dot for its namespace separator, or without its namespace", () => {
    assert.deepStrictEqual(closest("alpha.echo", ["alpha__echo", "beta__echo"]), ["alpha__echo"])
    assert.deepStrictEqual(closest("echo", ["alpha__echo", "beta__boom"]), ["alpha__echo"])
  })

  it("keeps at most the limit, closest first", () => {
    assert.deepStrictEqual(closest("tool", ["a__tool1", "b__tool2", "c__tool3"], 2), ["a__tool1", "b__tool2"])
  })
})
