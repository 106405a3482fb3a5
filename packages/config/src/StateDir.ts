/**
 * Where mcpx-fx keeps state (the era cache, the daemon's info file and socket): `MCPX_STATE_DIR`,
 * else `$XDG_STATE_HOME/mcpx-fx`, else `~/.local/state/mcpx-fx`. The directory is only created
 * when something is about to be written, so read-only commands leave no trace. One found group-
 * or world-writable is made owner-only (with a warning on stderr), or refused if it cannot be.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { Environment } from "./ConfigFile.js"

/** Which rule chose the state directory. */
export type StateDirSource = "MCPX_STATE_DIR" | "XDG_STATE_HOME" | "home"

/** The state directory could not be created; names the directory and why. */
export class StateDirError extends Schema.TaggedError<StateDirError>()("StateDirError", {
  path: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `state directory ${this.path}: ${this.detail}`
  }
}

/** The state directory service. */
export interface StateDirService {
  /** The absolute path, whether or not it exists yet. */
  readonly path: string
  readonly source: StateDirSource
  /** Creates the directory (mode 0700) if it is missing, and returns its path. */
  readonly ensure: Effect.Effect<string, StateDirError>
}

/**
 * The state directory for these inputs. A relative `MCPX_STATE_DIR` is taken from the working
 * directory; a relative `XDG_STATE_HOME` is ignored, as the XDG spec requires.
 */
export const resolve = Effect.fn("StateDir.resolve")(function*(environment: Environment) {
  const path = yield* Path.Path
  const explicit = environment.env.MCPX_STATE_DIR
  if (explicit !== undefined && explicit !== "") {
    return { path: path.resolve(environment.cwd, explicit), source: "MCPX_STATE_DIR" as StateDirSource }
  }
  const xdg = environment.env.XDG_STATE_HOME
  if (xdg !== undefined && xdg !== "" && path.isAbsolute(xdg)) {
    return { path: path.join(xdg, "mcpx-fx"), source: "XDG_STATE_HOME" as StateDirSource }
  }
  return { path: path.join(environment.home, ".local", "state", "mcpx-fx"), source: "home" as StateDirSource }
})

/** Builds the service; nothing is created until `ensure` runs. */
export const make = Effect.fn("StateDir.make")(function*(environment: Environment) {
  const fs = yield* FileSystem.FileSystem
  const { path, source } = yield* resolve(environment)
  const failed = (e: { readonly message: string }) => new StateDirError({ path, detail: e.message })
  const ensure = Effect.gen(function*() {
    if (yield* fs.exists(path)) {
      const info = yield* fs.stat(path)
      if (info.type !== "Directory") return yield* new StateDirError({ path, detail: "expected a directory, found a file" })
      // Anyone who can write here could swap the socket, the lock or the token for their own.
      if ((info.mode & 0o022) !== 0) {
        const was = (info.mode & 0o777).toString(8).padStart(3, "0")
        yield* fs.chmod(path, 0o700).pipe(
          Effect.mapError((e) =>
            new StateDirError({ path, detail: `is group- or world-writable (mode ${was}) and could not be made owner-only: ${e.message}` })
          )
        )
        yield* Effect.logWarning(`state directory ${path} was group- or world-writable (mode ${was}); it is now owner-only (700)`)
      }
      return path
    }
    yield* fs.makeDirectory(path, { recursive: true, mode: 0o700 })
    // mkdir's mode is filtered by the umask; state may hold tokens, so insist on owner-only.
    yield* fs.chmod(path, 0o700)
    yield* Effect.logDebug("state directory created").pipe(Effect.annotateLogs("path", path))
    return path
  }).pipe(
    Effect.catchTag("SystemError", (e) => Effect.fail(failed(e))),
    Effect.catchTag("BadArgument", (e) => Effect.fail(failed(e))),
    Effect.withSpan("StateDir.ensure")
  )
  return { path, source, ensure } satisfies StateDirService
})

/** The state directory. */
export class StateDir extends Context.Tag("@mcpx-fx/config/StateDir")<StateDir, StateDirService>() {
  /** The state directory for these inputs. */
  static readonly layer = (environment: Environment): Layer.Layer<StateDir, never, FileSystem.FileSystem | Path.Path> =>
    Layer.effect(StateDir, make(environment))
}
