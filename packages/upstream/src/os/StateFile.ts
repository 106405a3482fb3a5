/**
 * Reading and writing the small files mcpx-fx keeps in its state directory (the era cache, the
 * daemon's lock and info file, the upstream process groups), safely whatever sits at their paths.
 *
 * Reading never blocks and never reads without bound: the file is opened with `O_NONBLOCK` (a
 * FIFO opens at once instead of waiting for a writer), must be a regular file by `fstat` of what
 * was opened (a FIFO, a device such as `/dev/zero` behind a symlink, a directory are refused), and
 * is read to at most `maxBytes`. Anything else reads as `Refused` with the reason, for the caller
 * to log and treat as empty. @effect/platform's FileSystem has no `O_NONBLOCK`, hence node:fs here.
 *
 * Writing is atomic: a temp file in the same directory (`.<name>.<pid>.<random>.tmp`, mode 0600,
 * fsynced), renamed over the file, removed again if anything fails. The rename replaces whatever
 * entry was there (a FIFO, a symlink), never what a symlink pointed at.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { randomBytes } from "node:crypto"
import { constants, type Stats } from "node:fs"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"

/** What reading a state file found. */
export type ReadResult =
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "Refused"; readonly reason: string; readonly kind: FileKind }

/** What kind of thing sits at a path. */
export type FileKind = "file" | "directory" | "fifo" | "socket" | "device" | "symlink" | "other" | "unreadable"

export const kindOf = (stats: Stats): FileKind =>
  stats.isFile()
    ? "file"
    : stats.isDirectory()
    ? "directory"
    : stats.isFIFO()
    ? "fifo"
    : stats.isSocket()
    ? "socket"
    : stats.isCharacterDevice() || stats.isBlockDevice()
    ? "device"
    : stats.isSymbolicLink()
    ? "symlink"
    : "other"

const described: Record<FileKind, string> = {
  file: "a regular file",
  directory: "a directory",
  fifo: "a FIFO",
  socket: "a socket",
  device: "a device",
  symlink: "a symbolic link",
  other: "not a regular file",
  unreadable: "unreadable"
}

/** "a FIFO", "a directory", … for messages. */
export const describeKind = (kind: FileKind): string => described[kind]

const errnoOf = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | undefined)?.code

/**
 * Reads `file` as UTF-8 if it is a regular file of at most `maxBytes`; never blocks on a FIFO or
 * reads a device. Never fails: a missing file is `Missing`, anything unusable `Refused`.
 */
export const read = (file: string, maxBytes: number): Effect.Effect<ReadResult> =>
  Effect.promise(async (): Promise<ReadResult> => {
    let handle: Fs.FileHandle
    try {
      handle = await Fs.open(file, constants.O_RDONLY | constants.O_NONBLOCK)
    } catch (e) {
      if (errnoOf(e) === "ENOENT") return { _tag: "Missing" }
      return { _tag: "Refused", kind: "unreadable", reason: `cannot be opened (${errnoOf(e) ?? String(e)})` }
    }
    try {
      const stats = await handle.stat()
      const kind = kindOf(stats)
      if (kind !== "file") return { _tag: "Refused", kind, reason: `${describeKind(kind)}, not a regular file` }
      if (stats.size > maxBytes) {
        return { _tag: "Refused", kind, reason: `${stats.size} bytes, more than the ${maxBytes} a state file may hold` }
      }
      // One byte more than the cap, so a file that grew since the fstat is still caught.
      const buffer = Buffer.alloc(maxBytes + 1)
      let length = 0
      for (;;) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length)
        if (bytesRead === 0) break
        length += bytesRead
        if (length > maxBytes) return { _tag: "Refused", kind, reason: `more than the ${maxBytes} bytes a state file may hold` }
      }
      return { _tag: "Text", text: buffer.subarray(0, length).toString("utf8") }
    } catch (e) {
      return { _tag: "Refused", kind: "unreadable", reason: `cannot be read (${errnoOf(e) ?? String(e)})` }
    } finally {
      await handle.close().catch(() => undefined)
    }
  })

/** A state file could not be written. */
export class StateFileError extends Data.TaggedError("StateFileError")<{ readonly path: string; readonly detail: string }> {
  override get message(): string {
    return `${this.path}: ${this.detail}`
  }
}

const tempPattern = /^\.(.+)\.(\d+)\.[0-9a-f]+\.tmp$/
// What versions before this module wrote for daemon.json: `<name>.<pid>.tmp`.
const oldTempPattern = /^(.+)\.(\d+)\.tmp$/

/** The temp file an atomic write of `file` uses: same directory, so the rename is atomic. */
const tempFor = (file: string): string => Path.join(Path.dirname(file), `.${Path.basename(file)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`)

/**
 * Writes `text` to `file` atomically with mode 0600 (see the module comment). The directory must
 * exist; the temp file is removed whatever fails.
 */
export const writeAtomic = (file: string, text: string): Effect.Effect<void, StateFileError> =>
  Effect.tryPromise({
    try: async () => {
      const temp = tempFor(file)
      try {
        const handle = await Fs.open(temp, "wx", 0o600)
        try {
          await handle.writeFile(text, "utf8")
          // Without it a crash right after the rename can leave an empty file.
          await handle.sync()
        } finally {
          await handle.close()
        }
        // open's mode is filtered by the umask; the file must be exactly 0600 whatever the umask.
        await Fs.chmod(temp, 0o600)
        await Fs.rename(temp, file)
      } catch (e) {
        await Fs.rm(temp, { force: true }).catch(() => undefined)
        throw e
      }
    },
    catch: (e) => new StateFileError({ path: file, detail: e instanceof Error ? e.message : String(e) })
  })

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return errnoOf(e) === "EPERM"
  }
}

/**
 * Removes the temp files of writes to `names` (in `dir`) that a process which is gone left behind
 * (it crashed between writing and renaming). Temp files of live processes are theirs, mid-write.
 * Returns the paths removed.
 */
export const removeStaleTemps = (dir: string, names: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<string>> =>
  Effect.promise(async () => {
    let entries: ReadonlyArray<string>
    try {
      entries = await Fs.readdir(dir)
    } catch {
      return []
    }
    const removed: Array<string> = []
    for (const entry of entries) {
      const m = tempPattern.exec(entry) ?? oldTempPattern.exec(entry)
      if (m === null || !names.includes(m[1] ?? "")) continue
      const pid = Number(m[2])
      if (pid === process.pid || alive(pid)) continue
      const path = Path.join(dir, entry)
      const done = await Fs.rm(path, { force: true }).then(() => true, () => false)
      if (done) removed.push(path)
    }
    return removed
  })
