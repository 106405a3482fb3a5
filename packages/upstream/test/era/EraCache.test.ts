import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { createHash } from "node:crypto"
import * as os from "node:os"
import { cacheKey, EraCache, EraCacheConfig, FileName } from "../../src/era/EraCache.js"
import { canonicalJson } from "../../src/internal/canonicalJson.js"
import { ServerDefinition } from "../../src/ServerDefinition.js"

const decodeDefinition = Schema.decodeUnknownSync(ServerDefinition)

const stdio = (overrides: Record<string, unknown> = {}): ServerDefinition =>
  decodeDefinition({
    transport: "stdio",
    name: "files",
    command: "npx",
    args: ["-y", "@example/files-server"],
    env: { ROOT: "/srv", LOG: "info" },
    ...overrides
  })

const http = (overrides: Record<string, unknown> = {}): ServerDefinition =>
  decodeDefinition({
    transport: "http",
    name: "remote",
    url: "https://mcp.example.com/mcp",
    headers: { Authorization: "Bearer x", "X-Tenant": "a" },
    ...overrides
  })

type Cache = Context.Tag.Service<EraCache>

/** A fresh temp directory under os.tmpdir(), removed (recursively) when the test's scope closes. */
const tempDir = Effect.flatMap(
  FileSystem.FileSystem,
  (fs) => fs.makeTempDirectoryScoped({ directory: os.tmpdir(), prefix: "mcpx-fx-eracache-" })
)

/** Builds a file-backed cache on `dir` just for `use`, as a separate process would. */
const withFileCache = <A, E, R>(dir: string, use: (cache: Cache) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(EraCache, use).pipe(Effect.provide(EraCache.layerFile(dir)))

const readJson = (file: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(file)).pipe(
    Effect.map((text): unknown => JSON.parse(text))
  )

/** Collects log lines of the test fiber (and of layers built inside it). */
const captureLogs = () => {
  const lines: Array<{ readonly level: string; readonly message: string }> = []
  const logger = Logger.make(({ logLevel, message }) => {
    const parts = Array.isArray(message) ? message : [message]
    lines.push({ level: logLevel.label, message: String(parts[0]) })
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

describe("EraCache", () => {
  describe("key", () => {
    it("is the SHA-256 hex of the canonical JSON of the process identity", () => {
      const def = stdio({ env: { B: "2", A: "1" } })
      const expected = createHash("sha256")
        .update("{\"args\":[\"-y\",\"@example/files-server\"],\"command\":\"npx\",\"env\":{\"A\":\"1\",\"B\":\"2\"},\"transport\":\"stdio\"}")
        .digest("hex")
      assert.strictEqual(cacheKey(def), expected)
      assert.match(cacheKey(http()), /^[0-9a-f]{64}$/)
    })

    it("does not depend on key order anywhere in the definition", () => {
      const a = decodeDefinition({ transport: "stdio", name: "x", command: "srv", env: { A: "1", B: "2", "10": "t", "9": "n" } })
      const b = decodeDefinition({ env: { "9": "n", B: "2", "10": "t", A: "1" }, command: "srv", name: "x", transport: "stdio" })
      assert.strictEqual(cacheKey(a), cacheKey(b))
      assert.strictEqual(
        cacheKey(http({ headers: { "X-Tenant": "a", Authorization: "Bearer x" } })),
        cacheKey(http({ headers: { Authorization: "Bearer x", "X-Tenant": "a" } }))
      )
    })

    it("ignores the name, the protocol preference and pool knobs", () => {
      const base = cacheKey(stdio())
      assert.strictEqual(cacheKey(stdio({ name: "renamed" })), base)
      assert.strictEqual(cacheKey(stdio({ protocol: "force-legacy" })), base)
      assert.strictEqual(cacheKey(stdio({ pool: { max: 4, scope: "session" }, idleTimeout: "5m" })), base)
      assert.strictEqual(cacheKey(http({ name: "other", protocol: "follow" })), cacheKey(http()))
    })

    it("changes with anything that changes the process or endpoint", () => {
      const keys = [
        cacheKey(stdio()),
        cacheKey(stdio({ env: { ROOT: "/srv", LOG: "debug" } })),
        cacheKey(stdio({ env: { ROOT: "/srv" } })),
        cacheKey(stdio({ args: ["@example/files-server", "-y"] })),
        cacheKey(stdio({ command: "node" })),
        cacheKey(stdio({ cwd: "/tmp" })),
        cacheKey(http()),
        cacheKey(http({ url: "https://mcp.example.com/mcp/" })),
        cacheKey(http({ headers: { Authorization: "Bearer y", "X-Tenant": "a" } }))
      ]
      assert.strictEqual(new Set(keys).size, keys.length)
    })

    it("canonical JSON sorts keys recursively and keeps array order", () => {
      assert.strictEqual(
        canonicalJson({ b: [3, { z: 1, a: null }], a: { "10": true, "9": "x", m: undefined } }),
        "{\"a\":{\"10\":true,\"9\":\"x\"},\"b\":[3,{\"a\":null,\"z\":1}]}"
      )
      assert.strictEqual(canonicalJson(["a", undefined]), "[\"a\",null]")
    })
  })

  describe("in memory", () => {
    it.effect("misses, then hits with the time from the Clock", () =>
      Effect.gen(function*() {
        const cache = yield* EraCache
        assert.isTrue(cache.enabled)
        assert.isTrue(Option.isNone(yield* cache.get(stdio())))
        yield* TestClock.setTime(1_764_000_000_000)
        const stored = yield* cache.set(stdio(), { era: "legacy", version: "2025-06-18" })
        assert.deepStrictEqual(stored, { era: "legacy", version: "2025-06-18", at: 1_764_000_000_000, source: "probe" })
        assert.deepStrictEqual(Option.getOrThrow(yield* cache.get(stdio({ name: "same-process-other-name" }))), stored)
        assert.isTrue(Option.isNone(yield* cache.get(stdio({ command: "node" }))))
      }).pipe(Effect.provide(EraCache.layerMemory)))

    it.effect("keeps the HTTP transport, overwrites and invalidates", () =>
      Effect.gen(function*() {
        const cache = yield* EraCache
        yield* cache.set(http(), { era: "legacy", version: "2024-11-05", transport: "http+sse" })
        yield* TestClock.adjust("1 hour")
        const newer = yield* cache.set(http(), { era: "modern", version: "2026-07-28", transport: "streamable-http" })
        assert.deepStrictEqual(newer, {
          era: "modern",
          version: "2026-07-28",
          at: 3_600_000,
          source: "probe",
          transport: "streamable-http"
        })
        assert.deepStrictEqual(Option.getOrThrow(yield* cache.get(http())), newer)
        yield* cache.set(stdio(), { era: "legacy", version: "2025-11-25" })
        assert.deepStrictEqual([...(yield* cache.entries).keys()].sort(), [cacheKey(http()), cacheKey(stdio())].sort())
        yield* cache.invalidate(http())
        assert.isTrue(Option.isNone(yield* cache.get(http())))
        assert.deepStrictEqual([...(yield* cache.entries).keys()], [cacheKey(stdio())])
      }).pipe(Effect.provide(EraCache.layerMemory)))

    it.effect("each build of the memory layer starts empty", () =>
      Effect.gen(function*() {
        yield* Effect.flatMap(EraCache, (c) => c.set(stdio(), { era: "modern", version: "2026-07-28" })).pipe(
          Effect.provide(EraCache.layerMemory)
        )
        const again = yield* Effect.flatMap(EraCache, (c) => c.get(stdio())).pipe(Effect.provide(EraCache.layerMemory))
        assert.isTrue(Option.isNone(again))
      }))

    it.effect("concurrent writers lose nothing", () =>
      Effect.gen(function*() {
        const cache = yield* EraCache
        const defs = Array.from({ length: 50 }, (_, i) => stdio({ args: [`--instance=${i}`] }))
        yield* Effect.forEach(defs, (def) => cache.set(def, { era: "legacy", version: "2025-11-25" }), {
          concurrency: "unbounded"
        })
        assert.strictEqual((yield* cache.entries).size, 50)
      }).pipe(Effect.provide(EraCache.layerMemory)))
  })

  describe("disabled (upstream.eraCache=false)", () => {
    it.effect("always misses and stores nothing", () =>
      Effect.gen(function*() {
        const cache = yield* EraCache
        assert.isFalse(cache.enabled)
        yield* TestClock.setTime(42)
        const record = yield* cache.set(stdio(), { era: "modern", version: "2026-07-28" })
        assert.deepStrictEqual(record, { era: "modern", version: "2026-07-28", at: 42, source: "probe" })
        assert.isTrue(Option.isNone(yield* cache.get(stdio())))
        yield* cache.invalidate(stdio())
        assert.strictEqual((yield* cache.entries).size, 0)
      }).pipe(Effect.provide(EraCache.layerDisabled)))

    it.scoped("the configured layer touches no file when disabled", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        const file = (yield* Path.Path).join(dir, FileName)
        yield* fs.writeFileString(file, JSON.stringify({ version: 1, entries: {} }))
        const before = yield* fs.readFileString(file)
        const cache = yield* Effect.provide(EraCache, EraCache.layer.pipe(Layer.provide(EraCacheConfig.layer({ stateDir: dir, enabled: false }))))
        assert.isFalse(cache.enabled)
        yield* cache.set(stdio(), { era: "modern", version: "2026-07-28" })
        assert.isTrue(Option.isNone(yield* cache.get(stdio())))
        assert.strictEqual(yield* fs.readFileString(file), before)
        assert.deepStrictEqual(yield* fs.readDirectory(dir), [FileName])
      }).pipe(Effect.provide(NodeContext.layer)))
  })

  describe("in <stateDir>/upstream-eras.json", () => {
    it.scoped("persists across two separately built caches (two processes)", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        yield* TestClock.setTime(1_000)
        const written = yield* withFileCache(dir, (cache) => cache.set(http(), { era: "modern", version: "2026-07-28", transport: "streamable-http" }))
        const read = yield* withFileCache(dir, (cache) => cache.get(http({ name: "renamed" })))
        assert.deepStrictEqual(Option.getOrThrow(read), written)
        assert.strictEqual(written.at, 1_000)
        const viaConfig = yield* Effect.flatMap(EraCache, (c) => c.get(http())).pipe(
          Effect.provide(EraCache.layer.pipe(Layer.provide(EraCacheConfig.layer({ stateDir: dir }))))
        )
        assert.deepStrictEqual(Option.getOrThrow(viaConfig), written)
      }).pipe(Effect.provide(NodeContext.layer)))

    it.scoped("writes the versioned document with records keyed by hash", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const path = yield* Path.Path
        yield* TestClock.setTime(1_764_000_000_123)
        yield* withFileCache(dir, (cache) => cache.set(stdio(), { era: "legacy", version: "2025-03-26" }))
        assert.deepStrictEqual(yield* readJson(path.join(dir, FileName)), {
          version: 1,
          entries: { [cacheKey(stdio())]: { era: "legacy", version: "2025-03-26", at: 1_764_000_000_123, source: "probe" } }
        })
      }).pipe(Effect.provide(NodeContext.layer)))

    it.scoped("keeps whether the server refused the other era, and reads a record without it", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const path = yield* Path.Path
        const exclusive = yield* withFileCache(dir, (cache) => cache.set(stdio(), { era: "legacy", version: "2025-11-25", exclusive: true }))
        assert.deepStrictEqual(Option.getOrThrow(yield* withFileCache(dir, (cache) => cache.get(stdio()))), exclusive)
        const stored = (yield* readJson(path.join(dir, FileName))) as { entries: Record<string, Record<string, unknown>> }
        assert.strictEqual(stored.entries[cacheKey(stdio())]?.exclusive, true)
        const plain = yield* withFileCache(dir, (cache) => cache.set(stdio(), { era: "legacy", version: "2025-11-25", exclusive: false }))
        assert.isFalse("exclusive" in plain)
        assert.deepStrictEqual(Option.getOrThrow(yield* withFileCache(dir, (cache) => cache.get(stdio()))), plain)
      }).pipe(Effect.provide(NodeContext.layer)))

    it.scoped("a second process keeps the first one's entries (re-read, merge, write)", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        // Both caches are built (and have read the empty file) before either writes.
        yield* withFileCache(dir, (a) =>
          withFileCache(dir, (b) =>
            Effect.gen(function*() {
              yield* a.set(stdio(), { era: "legacy", version: "2025-11-25" })
              yield* b.set(http(), { era: "modern", version: "2026-07-28" })
              assert.isTrue(Option.isSome(yield* b.get(stdio())), "b picked up a's entry when it wrote")
              yield* a.invalidate(http({ url: "https://unrelated.example/mcp" }))
              assert.isTrue(Option.isSome(yield* a.get(http())), "a picked up b's entry when it wrote")
            })))
        const keys = yield* withFileCache(dir, (c) => Effect.map(c.entries, (e) => [...e.keys()].sort()))
        assert.deepStrictEqual(keys, [cacheKey(stdio()), cacheKey(http())].sort())
      }).pipe(Effect.provide(NodeContext.layer)))

    it.scoped("invalidate is persisted", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        yield* withFileCache(dir, (c) => c.set(stdio(), { era: "legacy", version: "2025-11-25" }))
        yield* withFileCache(dir, (c) => c.set(http(), { era: "modern", version: "2026-07-28" }))
        yield* withFileCache(dir, (c) => c.invalidate(stdio()))
        const after = yield* withFileCache(dir, (c) => Effect.all([c.get(stdio()), c.get(http())]))
        assert.isTrue(Option.isNone(after[0]))
        assert.isTrue(Option.isSome(after[1]))
      }).pipe(Effect.provide(NodeContext.layer)))

    it.scoped("the file is 0600 and a missing state directory is created 0700", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const root = yield* tempDir
        const stateDir = path.join(root, "state", "mcpx-fx")
        yield* withFileCache(stateDir, (c) => c.set(stdio(), { era: "legacy", version: "2025-11-25" }))
        assert.strictEqual((yield* fs.stat(path.join(stateDir, FileName))).mode & 0o777, 0o600)
        assert.strictEqual((yield* fs.stat(stateDir)).mode & 0o777, 0o700)
        assert.strictEqual((yield* fs.stat(path.join(root, "state"))).mode & 0o777, 0o700)
        // Rewriting keeps the mode (a new temp file replaces the old one each time).
        yield* withFileCache(stateDir, (c) => c.set(http(), { era: "modern", version: "2026-07-28" }))
        assert.strictEqual((yield* fs.stat(path.join(stateDir, FileName))).mode & 0o777, 0o600)
      }).pipe(Effect.provide(NodeContext.layer)))

    it.scoped("an existing state directory keeps its own mode", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        yield* fs.chmod(dir, 0o750)
        yield* withFileCache(dir, (c) => c.set(stdio(), { era: "legacy", version: "2025-11-25" }))
        assert.strictEqual((yield* fs.stat(dir)).mode & 0o777, 0o750)
      }).pipe(Effect.provide(NodeContext.layer)))

    it.scoped("writes atomically: many concurrent writers, one complete file, no temp files left", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const dir = yield* tempDir
        const defs = Array.from({ length: 25 }, (_, i) => stdio({ args: [`--instance=${i}`] }))
        yield* withFileCache(dir, (cache) =>
          Effect.forEach(defs, (def) => cache.set(def, { era: "legacy", version: "2025-11-25" }), {
            concurrency: "unbounded",
            discard: true
          }))
        assert.deepStrictEqual(yield* fs.readDirectory(dir), [FileName])
        const json = yield* readJson(path.join(dir, FileName))
        assert.deepStrictEqual(
          Object.keys((json as { entries: Record<string, unknown> }).entries).sort(),
          defs.map(cacheKey).sort()
        )
      }).pipe(Effect.provide(NodeContext.layer)))

    const corrupt: ReadonlyArray<readonly [string, (valid: string) => string, string]> = [
      ["truncated JSON", (valid) => valid.slice(0, Math.floor(valid.length / 2)), "not valid JSON"],
      ["an empty file", () => "", "not valid JSON"],
      ["not JSON at all", () => "era cache? never heard of it\n", "not valid JSON"],
      ["another file version", (valid) => valid.replace("\"version\": 1", "\"version\": 2"), "file version 2, expected 1"],
      ["no version field", () => JSON.stringify({ entries: {} }), "file version undefined"],
      ["a JSON array", () => "[]", "not a JSON object with a version"],
      ["entries of the wrong shape", () => JSON.stringify({ version: 1, entries: [] }), "wrong shape"],
      ["missing entries", () => JSON.stringify({ version: 1 }), "wrong shape"]
    ]
    for (const [name, damage, reason] of corrupt) {
      it.scoped(`a file with ${name} reads as empty and is rewritten on the next write`, () =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          const path = yield* Path.Path
          const dir = yield* tempDir
          const file = path.join(dir, FileName)
          yield* withFileCache(dir, (c) => c.set(http(), { era: "modern", version: "2026-07-28" }))
          yield* fs.writeFileString(file, damage(yield* fs.readFileString(file)))

          const logs = captureLogs()
          const entries = yield* withFileCache(dir, (c) => c.entries).pipe(Effect.provide(logs.layer))
          assert.strictEqual(entries.size, 0)
          assert.isTrue(
            logs.lines.some((l) => l.level === "WARN" && l.message.includes("era cache file ignored") && l.message.includes(reason)),
            JSON.stringify(logs.lines)
          )

          yield* TestClock.setTime(5)
          yield* withFileCache(dir, (c) => c.set(stdio(), { era: "legacy", version: "2025-11-25" }))
          assert.deepStrictEqual(yield* readJson(file), {
            version: 1,
            entries: { [cacheKey(stdio())]: { era: "legacy", version: "2025-11-25", at: 5, source: "probe" } }
          })
          assert.deepStrictEqual(yield* fs.readDirectory(dir), [FileName])
        }).pipe(Effect.provide(NodeContext.layer)))
    }

    it.scoped("an undecodable entry is dropped on its own", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const dir = yield* tempDir
        const good = { era: "legacy", version: "2025-06-18", at: 7, source: "probe" }
        yield* fs.writeFileString(
          path.join(dir, FileName),
          JSON.stringify({
            version: 1,
            entries: {
              [cacheKey(stdio())]: good,
              [cacheKey(http())]: { era: "legacy", version: "2026-07-28", at: 7, source: "probe" },
              [cacheKey(stdio({ command: "node" }))]: { era: "modern", version: "2099-01-01", at: 7, source: "probe" },
              "not-a-hash": good
            }
          })
        )
        const logs = captureLogs()
        const entries = yield* withFileCache(dir, (c) => c.entries).pipe(Effect.provide(logs.layer))
        assert.deepStrictEqual([...entries], [[cacheKey(stdio()), good]])
        assert.isTrue(logs.lines.some((l) => l.level === "WARN" && l.message.includes("dropped 3")), JSON.stringify(logs.lines))
      }).pipe(Effect.provide(NodeContext.layer)))

    it.scoped("a missing file is simply empty", () =>
      Effect.gen(function*() {
        const logs = captureLogs()
        const dir = yield* tempDir
        const entries = yield* withFileCache(dir, (c) => c.entries).pipe(Effect.provide(logs.layer))
        assert.strictEqual(entries.size, 0)
        assert.isFalse(logs.lines.some((l) => l.level === "WARN"), JSON.stringify(logs.lines))
      }).pipe(Effect.provide(NodeContext.layer)))

    it.scoped("a state directory that cannot be written still serves this process and does not fail", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const root = yield* tempDir
        const blocker = path.join(root, "not-a-directory")
        yield* fs.writeFileString(blocker, "")
        const logs = captureLogs()
        const hit = yield* withFileCache(path.join(blocker, "state"), (c) =>
          Effect.zipRight(c.set(stdio(), { era: "legacy", version: "2025-11-25" }), c.get(stdio()))).pipe(
            Effect.provide(logs.layer)
          )
        assert.isTrue(Option.isSome(hit))
        assert.isTrue(
          logs.lines.some((l) =>
            l.level === "WARN" && l.message.includes("not written")
          ),
          JSON.stringify(logs.lines)
        )
        assert.deepStrictEqual(yield* fs.readDirectory(root), ["not-a-directory"])
      }).pipe(Effect.provide(NodeContext.layer)))
  })
})
