/**
 * The era cache over what may sit at `upstream-eras.json` besides a cache: a FIFO (opening it for
 * reading would wait for a writer forever) or a symlink to `/dev/zero` (reading it never ends).
 * Either reads as empty with a warning, and the next write puts a regular cache file in its place.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { execFileSync } from "node:child_process"
import { lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EraCache, FileName } from "../../src/era/EraCache.js"
import { ServerDefinition } from "../../src/ServerDefinition.js"

const def = Schema.decodeUnknownSync(ServerDefinition)({ transport: "stdio", name: "files", command: "npx", args: ["-y", "files"] })

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "mcpx-eracache-files-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const kinds = [
  ["a FIFO", (file: string) => execFileSync("mkfifo", [file])],
  ["a symlink to /dev/zero", (file: string) => symlinkSync("/dev/zero", file)]
] as const

describe("EraCache over odd files", () => {
  it.scoped.each(kinds)("era-cache/file: %s reads as empty with a warning, and the next write replaces it", ([_, make]) =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = join(dir, FileName)
      make(file)
      const warnings: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag === "Warning") warnings.push(String(Array.isArray(message) ? message.join(" ") : message))
      })
      yield* Effect.gen(function*() {
        const cache = yield* EraCache
        assert.isTrue(Option.isNone(yield* cache.get(def)))
        yield* cache.set(def, { era: "legacy", version: "2025-11-25" })
      }).pipe(
        // The logger is provided outside the layer so it also sees the layer being built.
        // @effect-diagnostics-next-line multipleEffectProvide:off
        Effect.provide(EraCache.layerFile(dir)),
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      assert.isTrue(warnings.some((w) => w.includes("era cache file ignored")), JSON.stringify(warnings))
      assert.isTrue(lstatSync(file).isFile())
      const written = JSON.parse(readFileSync(file, "utf8")) as { entries: Record<string, { era: string }> }
      assert.deepStrictEqual(Object.values(written.entries).map((e) => e.era), ["legacy"])
    }).pipe(Effect.provide(NodeContext.layer)))
})
