/**
 * The files a running daemon leaves in the state directory, and the rule that there is at most one
 * daemon per state directory.
 *
 * - `daemon.lock` is created exclusively and holds the owner's pid: the one thing two daemons
 *   starting at the same moment cannot both win. A lock whose pid is gone is stale and is taken over.
 * - `daemon.json` says where the daemon listens (URL, `/mcp`, unix socket), for `status`, the CLI's
 *   relay and people; it is written after the listeners are up, so a reader never sees an address
 *   that does not answer yet.
 * - `daemon.sock` is the CLI's unix socket, owner-only.
 * All three are removed when the daemon stops.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { StateDir } from "./StateDir.js"

/** What `daemon.json` says about a running daemon. */
export const DaemonInfo = Schema.Struct({
  pid: Schema.Number,
  version: Schema.String,
  /** The base URL of the TCP listener, e.g. `http://127.0.0.1:7717`. */
  url: Schema.String,
  /** The Streamable HTTP endpoint for hosts. */
  mcp: Schema.String,
  /** The unix socket path the CLI uses. */
  socket: Schema.String,
  startedAt: Schema.String,
  /** The config files the daemon loaded, nearest first. */
  configFiles: Schema.Array(Schema.String)
})
export type DaemonInfo = typeof DaemonInfo.Type

/** Another daemon already owns this state directory. */
export class DaemonRunning extends Schema.TaggedError<DaemonRunning>()("DaemonRunning", {
  pid: Schema.Number,
  url: Schema.optionalWith(Schema.String, { exact: true }),
  stateDir: Schema.String
}) {
  override get message(): string {
    const where = this.url === undefined ? "" : ` at ${this.url}`
    return `a daemon (pid ${this.pid}) is already running${where} for the state directory ${this.stateDir}; ` +
      "stop it with `mcpx-fx stop` or use another MCPX_STATE_DIR"
  }
}

/** A daemon file could not be read or written. */
export class DaemonFileError extends Schema.TaggedError<DaemonFileError>()("DaemonFileError", {
  path: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.path}: ${this.detail}`
  }
}

/** The paths of the daemon's files in a state directory. */
export interface DaemonPaths {
  readonly stateDir: string
  readonly lock: string
  readonly info: string
  readonly socket: string
}

/** Where the daemon files of this invocation's state directory are. */
export const paths: Effect.Effect<DaemonPaths, never, StateDir | Path.Path> = Effect.gen(function*() {
  const state = yield* StateDir
  const path = yield* Path.Path
  return {
    stateDir: state.path,
    lock: path.join(state.path, "daemon.lock"),
    info: path.join(state.path, "daemon.json"),
    socket: path.join(state.path, "daemon.sock")
  }
})

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: it exists but belongs to someone else — still alive.
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

const decodeInfo = Schema.decodeUnknownEither(Schema.parseJson(DaemonInfo))

/** The info file of a live daemon, if there is one; a file left by a dead daemon reads as none. */
export const readInfo: Effect.Effect<Option.Option<DaemonInfo>, never, StateDir | Path.Path | FileSystem.FileSystem> =
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const files = yield* paths
    const text = yield* Effect.option(fs.readFileString(files.info))
    if (Option.isNone(text)) return Option.none()
    const info = decodeInfo(text.value)
    if (Either.isLeft(info) || !processAlive(info.right.pid)) return Option.none()
    return Option.some(info.right)
  })

const ownerOf = (fs: FileSystem.FileSystem, lock: string) =>
  Effect.map(Effect.option(fs.readFileString(lock)), (text) =>
    Option.flatMap(text, (t) => {
      const pid = Number.parseInt(t.trim(), 10)
      return Number.isInteger(pid) && pid > 0 ? Option.some(pid) : Option.none()
    }))

/**
 * Takes the state directory's daemon lock for this process, for the life of the scope. Refuses
 * with `DaemonRunning` while another live process holds it; a stale lock is taken over.
 */
export const acquireLock = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const state = yield* StateDir
  const files = yield* paths
  yield* Effect.mapError(state.ensure, (e) => new DaemonFileError({ path: e.path, detail: e.detail }))
  const failed = (e: { readonly message: string }) => new DaemonFileError({ path: files.lock, detail: e.message })
  const tryCreate = fs.writeFileString(files.lock, `${process.pid}\n`, { flag: "wx", mode: 0o600 })
  // Two rounds: the second one follows the removal of a stale lock.
  for (let round = 0; round < 2; round++) {
    const created = yield* Effect.either(tryCreate)
    if (Either.isRight(created)) {
      yield* Effect.addFinalizer(() => Effect.ignore(fs.remove(files.lock)))
      return files
    }
    if (created.left._tag !== "SystemError" || created.left.reason !== "AlreadyExists") {
      return yield* failed(created.left)
    }
    const owner = yield* ownerOf(fs, files.lock)
    if (Option.isSome(owner) && processAlive(owner.value)) {
      const info = yield* readInfo
      return yield* new DaemonRunning({
        pid: owner.value,
        stateDir: files.stateDir,
        ...(Option.isSome(info) ? { url: info.value.url } : {})
      })
    }
    yield* Effect.logWarning("removing a stale daemon lock").pipe(Effect.annotateLogs("path", files.lock))
    yield* Effect.ignore(fs.remove(files.lock))
  }
  return yield* new DaemonFileError({ path: files.lock, detail: "could not take the lock after removing a stale one" })
})

/** Writes `daemon.json` (0600, atomically) for the life of the scope. */
export const publishInfo = (info: DaemonInfo) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const files = yield* paths
    const temp = `${files.info}.${process.pid}.tmp`
    const failed = (e: { readonly message: string }) => new DaemonFileError({ path: files.info, detail: e.message })
    yield* Effect.mapError(
      Effect.zipRight(
        fs.writeFileString(temp, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 }),
        fs.rename(temp, files.info)
      ),
      failed
    )
    yield* Effect.addFinalizer(() => Effect.ignore(fs.remove(files.info)))
  })

/** Removes a socket file left by a daemon that died (the lock says it is gone). */
export const clearSocket = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const files = yield* paths
  yield* Effect.ignore(fs.remove(files.socket))
  return files.socket
})
