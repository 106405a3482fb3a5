import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as StateFile from "../../src/os/StateFile.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "mcpx-statefile-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

// A pid that certainly belonged to a process and no longer does.
const deadPid = () => Number(execFileSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }))

describe("StateFile", () => {
  it.scoped("state-file/read: a regular file is read whole; a missing one is Missing", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFileSync(join(dir, "a.json"), "{\"ok\":true}")
      assert.deepStrictEqual(yield* StateFile.read(join(dir, "a.json"), 1024), { _tag: "Text", text: "{\"ok\":true}" })
      assert.deepStrictEqual(yield* StateFile.read(join(dir, "none.json"), 1024), { _tag: "Missing" })
    }))

  it.scoped("state-file/read: a FIFO is refused at once, not waited on for a writer", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const fifo = join(dir, "eras.json")
      execFileSync("mkfifo", [fifo])
      const result = yield* StateFile.read(fifo, 1024)
      assert.strictEqual(result._tag, "Refused")
      assert.strictEqual(result._tag === "Refused" ? result.kind : undefined, "fifo")
    }))

  it.scoped("state-file/read: a symlink to /dev/zero is refused as a device, not read without end", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const link = join(dir, "eras.json")
      symlinkSync("/dev/zero", link)
      const result = yield* StateFile.read(link, 1024)
      assert.strictEqual(result._tag === "Refused" ? result.kind : result._tag, "device")
    }))

  it.scoped("state-file/read: a directory, and a file over the cap, are refused", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      mkdirSync(join(dir, "d"))
      writeFileSync(join(dir, "big"), "x".repeat(2048))
      const d = yield* StateFile.read(join(dir, "d"), 1024)
      assert.strictEqual(d._tag === "Refused" ? d.kind : d._tag, "directory")
      const big = yield* StateFile.read(join(dir, "big"), 1024)
      assert.strictEqual(big._tag, "Refused")
      assert.include(big._tag === "Refused" ? big.reason : "", "1024")
    }))

  it.scoped("state-file/write: atomic, mode 0600, and it replaces a FIFO at the path with a regular file", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = join(dir, "eras.json")
      execFileSync("mkfifo", [file])
      yield* StateFile.writeAtomic(file, "{}\n")
      assert.isTrue(lstatSync(file).isFile())
      assert.strictEqual(statSync(file).mode & 0o777, 0o600)
      assert.deepStrictEqual(yield* StateFile.read(file, 1024), { _tag: "Text", text: "{}\n" })
      assert.deepStrictEqual(readdirSync(dir), ["eras.json"])
    }))

  it.scoped("state-file/write: a write that fails leaves no temp file behind", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // A non-empty directory at the path: the rename over it fails.
      mkdirSync(join(dir, "daemon.json", "inside"), { recursive: true })
      const failed = yield* Effect.flip(StateFile.writeAtomic(join(dir, "daemon.json"), "{}\n"))
      assert.strictEqual(failed._tag, "StateFileError")
      assert.deepStrictEqual(readdirSync(dir), ["daemon.json"])
    }))

  it.scoped("state-file/temps: temp files of processes that are gone are removed, others kept", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const dead = deadPid()
      const names = [
        `.daemon.json.${dead}.0a1b2c.tmp`,
        `daemon.json.${dead}.tmp`,
        `.upstream-eras.json.${dead}.ffee.tmp`,
        `.daemon.json.${process.pid}.0a1b2c.tmp`,
        `.other.json.${dead}.0a1b2c.tmp`
      ]
      for (const n of names) writeFileSync(join(dir, n), "")
      const removed = yield* StateFile.removeStaleTemps(dir, ["daemon.json", "upstream-eras.json"])
      assert.strictEqual(removed.length, 3)
      assert.deepStrictEqual(readdirSync(dir).sort(), [`.daemon.json.${process.pid}.0a1b2c.tmp`, `.other.json.${dead}.0a1b2c.tmp`])
      assert.isFalse(existsSync(join(dir, `daemon.json.${dead}.tmp`)))
    }))
})
