/**
 * The files a running daemon leaves in the state directory, and the rule that there is at most one
 * daemon per state directory.
 *
 * - `daemon.lock` is created exclusively and holds the owner's pid and, where `/proc` tells it, the
 *   owner's start time: the one thing two daemons starting at the same moment cannot both win. A
 *   lock whose holder is gone, or is a process that is not the daemon that wrote it (the pid was
 *   reused: another start time, or for an old lock without one, a command line that is not an
 *   mcpx-fx daemon's), is stale and is taken over.
 * - `daemon.json` says where the daemon listens (URL, `/mcp`, unix socket), for `status`, the CLI's
 *   relay and people; it is written after the listeners are up, so a reader never sees an address
 *   that does not answer yet.
 * - `daemon.sock` is the CLI's unix socket, owner-only.
 * - `owner.secret` (OwnerSecret.ts) makes the live page `/ui` the owner's over TCP; new each start.
 * All four are removed when the daemon stops. Each is read as a state file (`StateFile`): a FIFO,
 * a device or an oversized file at its path is refused with a warning, never waited on or read
 * without bound.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ProcessTable from "@mcpx-fx/upstream/os/ProcessTable"
import * as StateFile from "@mcpx-fx/upstream/os/StateFile"
import { StateDir } from "@mcpx-fx/config/StateDir"

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

/** daemon.json is a few hundred bytes; daemon.lock a line or two. */
const MaxInfoBytes = 64 * 1024
const MaxLockBytes = 4 * 1024

/** The text of a state file, none when missing; a file that is refused is logged and reads as none. */
const readText = (file: string): Effect.Effect<Option.Option<string>> =>
  Effect.flatMap(StateFile.read(file, MaxInfoBytes), (result) => {
    switch (result._tag) {
      case "Missing":
        return Effect.succeed(Option.none())
      case "Refused":
        return Effect.as(Effect.logWarning(`${file} ignored: ${result.reason}`), Option.none())
      case "Text":
        return Effect.succeed(Option.some(result.text))
    }
  })

/** The info file of a live daemon, if there is one; a file left by a dead daemon reads as none. */
export const readInfo: Effect.Effect<Option.Option<DaemonInfo>, never, StateDir | Path.Path> = Effect.gen(function*() {
  const files = yield* paths
  const text = yield* readText(files.info)
  if (Option.isNone(text)) return Option.none()
  const info = decodeInfo(text.value)
  if (Either.isLeft(info) || !processAlive(info.right.pid)) return Option.none()
  return Option.some(info.right)
})

/** Who a lock names: a pid and, when it was known, that process's start time. */
interface LockOwner {
  readonly pid: number
  readonly start: string | undefined
}

/** The lock's text for this process: its pid, then its start time where `/proc` has it. */
const lockText = (): string => {
  const start = ProcessTable.startTime(process.pid)
  return start === undefined ? `${process.pid}\n` : `${process.pid}\n${start}\n`
}

const parseLock = (text: string): LockOwner | undefined => {
  const [first, second] = text.split("\n").map((l) => l.trim())
  const pid = Number.parseInt(first ?? "", 10)
  if (!Number.isInteger(pid) || pid <= 0) return undefined
  return { pid, start: second !== undefined && /^\d+$/.test(second) ? second : undefined }
}

/**
 * Whether the lock's holder is still the daemon that took it. Without `/proc` a live pid is all
 * there is to go on, and it is believed; with it, the start time must match (a reused pid has
 * another), or for a lock that has none, the command line must be an mcpx-fx daemon's.
 */
const holderIsDaemon = (owner: LockOwner): boolean => {
  if (owner.pid === process.pid || !processAlive(owner.pid)) return false
  if (!ProcessTable.available()) return true
  const start = ProcessTable.startTime(owner.pid)
  if (start === undefined) return false
  if (owner.start !== undefined) return start === owner.start
  const command = ProcessTable.commandLine(owner.pid) ?? ""
  return /mcpx-fx/.test(command) && /(^|\s)daemon(\s|$)/.test(command)
}

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
  const tryCreate = fs.writeFileString(files.lock, lockText(), { flag: "wx", mode: 0o600 })
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
    const read = yield* StateFile.read(files.lock, MaxLockBytes)
    if (read._tag === "Refused") {
      // Not a file a daemon wrote: someone else's, and not removed on a guess.
      const remove = read.kind === "directory" ? `rm -r ${files.lock}` : `rm ${files.lock}`
      return yield* new DaemonFileError({
        path: files.lock,
        detail: `${read.reason}, so it is not a daemon's lock; remove it (\`${remove}\`) or use another MCPX_STATE_DIR`
      })
    }
    const text = read._tag === "Text" ? read.text : ""
    const owner = parseLock(text)
    if (owner !== undefined && holderIsDaemon(owner)) {
      const info = yield* readInfo
      return yield* new DaemonRunning({
        pid: owner.pid,
        stateDir: files.stateDir,
        ...(Option.isSome(info) ? { url: info.value.url } : {})
      })
    }
    yield* Effect.logWarning(
      owner !== undefined && processAlive(owner.pid)
        ? `daemon.lock names pid ${owner.pid}, which is not the mcpx-fx daemon that wrote it (${
          ProcessTable.commandLine(owner.pid) ?? "a process started later"
        }); taking the lock over`
        : "removing a stale daemon lock"
    ).pipe(Effect.annotateLogs("path", files.lock))
    // Removed only if it still says what was judged stale: another daemon may have just taken it.
    const again = yield* StateFile.read(files.lock, MaxLockBytes)
    if (again._tag !== "Text" || again.text === text) yield* Effect.ignore(fs.remove(files.lock))
  }
  return yield* new DaemonFileError({ path: files.lock, detail: "could not take the lock after removing a stale one" })
})

/** Writes `daemon.json` (0600, atomically; no temp file is left if that fails) for the life of the scope. */
export const publishInfo = (info: DaemonInfo) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const files = yield* paths
    yield* StateFile.writeAtomic(files.info, `${JSON.stringify(info, null, 2)}\n`).pipe(
      Effect.mapError((e) => new DaemonFileError({ path: files.info, detail: e.detail }))
    )
    yield* Effect.addFinalizer(() => Effect.ignore(fs.remove(files.info)))
  })

/** The state files whose temp files (from writes a crash cut short) a starting daemon removes. */
export const StateFileNames: ReadonlyArray<string> = ["daemon.json", "owner.secret", "upstream-eras.json", "upstream-groups.json"]

/** Removes temp files that processes which are gone left behind; the caller holds the lock. */
export const removeStaleTemps = Effect.gen(function*() {
  const files = yield* paths
  const removed = yield* StateFile.removeStaleTemps(files.stateDir, StateFileNames)
  if (removed.length > 0) yield* Effect.logDebug(`removed temp files left by writes that never finished: ${removed.join(", ")}`)
})
