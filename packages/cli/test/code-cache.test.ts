/**
 * The CLI's code cache (bin.ts): a copy of the built CLI in a directory of its own, so the cache
 * files written here are this test's. A damaged cache is set aside by V8 and replaced by a good
 * one; a rebuilt bundle of the same length never runs an older build's cached code; `serve` keeps
 * a cache of its own beside the one every one-shot command shares.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { bundle } from "./support/Sandbox.js"

const dist = dirname(bundle)

/**
 * A copy of the entry and the bundle, removed with the scope; beside it the repository's
 * node_modules, as an install has, for the one dependency the bundle loads (better-sqlite3).
 */
const copy = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = mkdtempSync(join(tmpdir(), "mcpx-cache-"))
    for (const f of ["mcpx-fx.js", "mcpx-fx-main.cjs"]) copyFileSync(join(dist, f), join(dir, f))
    symlinkSync(join(dist, "..", "..", "..", "node_modules"), join(dir, "node_modules"))
    return dir
  }),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const caches = (dir: string) => readdirSync(dir).filter((f) => f.endsWith(".cache"))

const help = (dir: string) => {
  const r = spawnSync(process.execPath, [join(dir, "mcpx-fx.js"), "--help"], { encoding: "utf8" })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** The cache file the entry looks for, named for the bundle as it is now (and `serve`'s own). */
const cacheName = (dir: string, own = "") => {
  const stat = statSync(join(dir, "mcpx-fx-main.cjs"))
  return `mcpx-fx-main.${stat.size}-${Math.trunc(stat.mtimeMs)}${own}.cache`
}

/** `serve` on a config without servers, its stdin closed at once: it starts, answers nothing and exits. */
const serve = (dir: string, before: ReadonlyArray<string> = []) => {
  const config = join(dir, "empty.json")
  writeFileSync(config, JSON.stringify({ mcpServers: {} }))
  const r = spawnSync(process.execPath, [join(dir, "mcpx-fx.js"), ...before, "serve", "--config", config], {
    encoding: "utf8",
    input: "",
    env: { ...process.env, MCPX_STATE_DIR: join(dir, "state") }
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const modified = (dir: string) => Object.fromEntries(caches(dir).map((f) => [f, statSync(join(dir, f)).mtimeMs]))

describe("code cache", () => {
  it.scopedLive("cli/cold-start/the first run writes the cache; a damaged one is set aside and replaced", () =>
    Effect.gen(function*() {
      const dir = yield* copy
      const first = help(dir)
      assert.strictEqual(first.code, 0, first.stderr)
      assert.deepStrictEqual(caches(dir), [cacheName(dir)])
      assert.isAbove(readFileSync(join(dir, cacheName(dir))).length, 100_000)
      writeFileSync(join(dir, cacheName(dir)), "not a code cache")
      const damaged = help(dir)
      assert.strictEqual(damaged.code, 0, damaged.stderr)
      assert.strictEqual(damaged.stdout, first.stdout)
      // Rewritten at exit with what this run compiled.
      assert.isAbove(readFileSync(join(dir, cacheName(dir))).length, 100_000)
    }))

  it.scopedLive("cli/cold-start/a rebuilt bundle of the same length does not run the old build's cached code", () =>
    Effect.gen(function*() {
      const dir = yield* copy
      assert.strictEqual(help(dir).code, 0)
      const main = join(dir, "mcpx-fx-main.cjs")
      const text = readFileSync(main, "latin1")
      assert.include(text, "0.1.0")
      // Same length, other code: what V8's own check of a cache cannot tell apart.
      writeFileSync(main, text.replaceAll("0.1.0", "9.9.9"), "latin1")
      utimesSync(main, new Date(), new Date(Date.now() + 5_000))
      const rebuilt = help(dir)
      assert.strictEqual(rebuilt.code, 0, rebuilt.stderr)
      assert.include(rebuilt.stdout, "9.9.9")
      assert.notInclude(rebuilt.stdout, "0.1.0")
    }))

  it.scopedLive("cli/cold-start/serve writes a cache of its own and each kind of run keeps using its own", () =>
    Effect.gen(function*() {
      const dir = yield* copy
      assert.strictEqual(help(dir).code, 0)
      const served = serve(dir)
      assert.strictEqual(served.code, 0, served.stderr)
      assert.strictEqual(served.stdout, "")
      assert.deepStrictEqual(caches(dir).sort(), [cacheName(dir), cacheName(dir, ".serve")].sort())
      assert.isAbove(readFileSync(join(dir, cacheName(dir, ".serve"))).length, 100_000)
      // Each cache is accepted by the next run of its kind, so neither is written again.
      const before = modified(dir)
      assert.strictEqual(serve(dir).code, 0)
      assert.strictEqual(help(dir).code, 0)
      // An option ahead of the command word is still `serve`, with serve's heap and its cache.
      assert.strictEqual(serve(dir, ["--log-level", "warning"]).code, 0)
      assert.deepStrictEqual(modified(dir), before)
    }))
})
