import * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as DaemonToken from "../src/DaemonToken.js"
import * as StateDir from "@mcpx-fx/config/StateDir"

const inStateDir = <A, E>(effect: Effect.Effect<A, E, StateDir.StateDir | FileSystem.FileSystem | Path.Path>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "mcpx-token-" }))
    return yield* effect.pipe(Effect.provide(StateDir.StateDir.layer({ env: { MCPX_STATE_DIR: `${root}/state` }, cwd: root, home: root })))
  })

describe("DaemonToken.ensure", () => {
  it.scoped("makes a random token in <state>/daemon.token, mode 0600, and reuses it after", () =>
    inStateDir(Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const first = yield* DaemonToken.ensure
      assert.isTrue(first.created)
      assert.match(first.token, /^[A-Za-z0-9_-]{43}$/)
      assert.isTrue(first.path.endsWith("/state/daemon.token"))
      assert.strictEqual((yield* fs.stat(first.path)).mode & 0o777, 0o600)
      const again = yield* DaemonToken.ensure
      assert.deepStrictEqual(again, { ...first, created: false })
    })).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("tightens a token file others can read, and replaces one that holds no token", () =>
    inStateDir(Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const made = yield* DaemonToken.ensure
      yield* fs.chmod(made.path, 0o644)
      assert.strictEqual((yield* DaemonToken.ensure).token, made.token)
      assert.strictEqual((yield* fs.stat(made.path)).mode & 0o777, 0o600)
      yield* fs.writeFileString(made.path, "short")
      const replaced = yield* DaemonToken.ensure
      assert.isTrue(replaced.created)
      assert.notStrictEqual(replaced.token, made.token)
    })).pipe(Effect.provide(NodeContext.layer)))
})

describe("DaemonToken.forDaemon", () => {
  it.scoped("daemon.token wins; a loopback daemon has none; any other gets the state directory's, and says where", () =>
    inStateDir(Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      assert.deepStrictEqual(yield* DaemonToken.forDaemon("configured-token-1234567", false), { token: "configured-token-1234567" })
      assert.deepStrictEqual(yield* DaemonToken.forDaemon("", true), { token: undefined })
      const remote = yield* DaemonToken.forDaemon("", false)
      assert.isString(remote.token)
      assert.include(remote.notice, "generated into")
      assert.include(remote.notice, "Authorization: Bearer")
      const state = (yield* StateDir.StateDir).path
      assert.strictEqual((yield* fs.readFileString(`${state}/daemon.token`)).trim(), remote.token)
      const again = yield* DaemonToken.forDaemon("", false)
      assert.strictEqual(again.token, remote.token)
      assert.notInclude(again.notice, "generated")
    })).pipe(Effect.provide(NodeContext.layer)))
})
