import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as StateDir from "../src/StateDir.js"

const tempDir = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  return yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "mcpx-state-" }))
})

describe("StateDir.resolve", () => {
  it.effect("prefers MCPX_STATE_DIR, then an absolute XDG_STATE_HOME, then ~/.local/state", () =>
    Effect.gen(function*() {
      const at = (env: Record<string, string>) => StateDir.resolve({ env, cwd: "/work", home: "/home/u" })
      assert.deepStrictEqual(yield* at({ MCPX_STATE_DIR: "/s", XDG_STATE_HOME: "/x" }), { path: "/s", source: "MCPX_STATE_DIR" })
      assert.deepStrictEqual(yield* at({ MCPX_STATE_DIR: "rel/state" }), { path: "/work/rel/state", source: "MCPX_STATE_DIR" })
      assert.deepStrictEqual(yield* at({ XDG_STATE_HOME: "/x" }), { path: "/x/mcpx-fx", source: "XDG_STATE_HOME" })
      assert.deepStrictEqual(yield* at({ MCPX_STATE_DIR: "", XDG_STATE_HOME: "" }), {
        path: "/home/u/.local/state/mcpx-fx",
        source: "home"
      })
      // XDG says a relative value is invalid and must be ignored.
      assert.deepStrictEqual(yield* at({ XDG_STATE_HOME: "x" }), { path: "/home/u/.local/state/mcpx-fx", source: "home" })
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("StateDir service", () => {
  it.scoped("creates nothing until ensure, then creates the directory and its parents with mode 0700", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const home = yield* tempDir
      const state = yield* StateDir.StateDir.pipe(Effect.provide(StateDir.StateDir.layer({ env: {}, cwd: home, home })))
      assert.strictEqual(state.path, `${home}/.local/state/mcpx-fx`)
      assert.strictEqual(state.source, "home")
      assert.isFalse(yield* fs.exists(state.path))
      assert.strictEqual(yield* state.ensure, state.path)
      const info = yield* fs.stat(state.path)
      assert.strictEqual(info.type, "Directory")
      assert.strictEqual(info.mode & 0o777, 0o700)
      // A second ensure finds it and succeeds.
      assert.strictEqual(yield* state.ensure, state.path)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("fails with a StateDirError naming the path when a file is in the way", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const root = yield* tempDir
      yield* fs.writeFileString(`${root}/state`, "not a directory")
      const state = yield* StateDir.make({ env: { MCPX_STATE_DIR: `${root}/state` }, cwd: root, home: root })
      const error = yield* Effect.flip(state.ensure)
      assert.instanceOf(error, StateDir.StateDirError)
      assert.strictEqual(error.path, `${root}/state`)
      assert.strictEqual(error.message, `state directory ${root}/state: expected a directory, found a file`)

      const below = yield* StateDir.make({ env: { MCPX_STATE_DIR: `${root}/state/sub` }, cwd: root, home: root })
      const nested = yield* Effect.flip(below.ensure)
      assert.instanceOf(nested, StateDir.StateDirError)
      assert.strictEqual(nested.path, `${root}/state/sub`)
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("StateDir permissions", () => {
  it.scoped("an existing state directory that others can write is made owner-only, with a warning", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const root = yield* tempDir
      const path = `${root}/state`
      for (const mode of [0o777, 0o775, 0o757]) {
        yield* fs.makeDirectory(path, { recursive: true })
        yield* fs.chmod(path, mode)
        const logged: Array<string> = []
        const logger = Logger.make(({ message }) => void logged.push(String(message)))
        const state = yield* StateDir.StateDir.pipe(Effect.provide(StateDir.StateDir.layer({ env: { MCPX_STATE_DIR: path }, cwd: root, home: root })))
        yield* state.ensure.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
        assert.strictEqual((yield* fs.stat(path)).mode & 0o777, 0o700, mode.toString(8))
        assert.isTrue(logged.some((l) => l.includes("owner-only") && l.includes(mode.toString(8))), logged.join("\n"))
      }
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("an owner-only or merely readable one is left as it is, without a word", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const root = yield* tempDir
      const path = `${root}/state`
      yield* fs.makeDirectory(path)
      yield* fs.chmod(path, 0o755)
      const logged: Array<string> = []
      const logger = Logger.make(({ message }) => void logged.push(String(message)))
      const state = yield* StateDir.StateDir.pipe(Effect.provide(StateDir.StateDir.layer({ env: { MCPX_STATE_DIR: path }, cwd: root, home: root })))
      yield* state.ensure.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      assert.strictEqual((yield* fs.stat(path)).mode & 0o777, 0o755)
      assert.deepStrictEqual(logged, [])
    }).pipe(Effect.provide(NodeContext.layer)))
})
