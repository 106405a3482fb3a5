/**
 * The schema cache on disk: each upstream's last tool listing, so a search can answer for a server
 * that has not been started in this process. `<state>/tool-schemas.json` is
 * `{"version": 1, "entries": {<key>: {"at": ms, "tools": [...]}}}`, keyed like the era cache (a
 * SHA-256 of the server's process identity, so a renamed server keeps its listing and a changed
 * command forgets it).
 *
 * It is a cache, so nothing about it may stop mcpx-fx: a missing, damaged, other-version, oversized
 * or non-regular file (a FIFO, a device) reads as empty without being opened, and a write that
 * fails is logged. Writes are atomic (a 0600 temp file in the same directory, then a rename) and
 * serialised in this process; the file is bounded in entries and in tools per entry.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"

/** The file's name inside the state directory. */
export const FileName = "tool-schemas.json"

/** The file format this code reads and writes. */
export const FileVersion = 1

/** The largest file read; a bigger one is ignored (and replaced at the next write). */
export const MaxFileBytes = 16 * 1024 * 1024

/** At most this many servers are kept; the oldest listings go first. */
export const MaxEntries = 256

/** At most this many tools per server are kept. */
export const MaxToolsPerEntry = 4096

const Tool = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** One server's listing as stored. */
export const StoredListing = Schema.Struct({
  at: Schema.Number,
  tools: Schema.Array(Tool)
})
/** One server's listing as stored. */
export type StoredListing = typeof StoredListing.Type

const decodeFile = Schema.decodeUnknownEither(
  Schema.parseJson(Schema.Struct({ version: Schema.Literal(FileVersion), entries: Schema.Record({ key: Schema.String, value: Schema.Unknown }) }))
)
const decodeListing = Schema.decodeUnknownEither(StoredListing)

/** What the store holds, by key. */
export type Entries = ReadonlyMap<string, StoredListing>

/** The store: read everything, or apply one change and write it back. */
export interface SchemaStore {
  readonly read: Effect.Effect<Entries>
  readonly update: (f: (entries: Map<string, StoredListing>) => void) => Effect.Effect<Entries>
}

/** Parses the file's text; anything unusable reads as empty, an undecodable entry is dropped alone. */
export const parse = (text: string): Entries => {
  const file = decodeFile(text)
  if (Either.isLeft(file)) return new Map()
  const out = new Map<string, StoredListing>()
  for (const [key, value] of Object.entries(file.right.entries)) {
    const listing = decodeListing(value)
    if (Either.isRight(listing)) out.set(key, listing.right)
  }
  return out
}

/** Keeps the newest `MaxEntries` entries and the first `MaxToolsPerEntry` tools of each. */
const bounded = (entries: ReadonlyMap<string, StoredListing>): Map<string, StoredListing> =>
  new Map(
    [...entries]
      .sort(([, a], [, b]) => b.at - a.at)
      .slice(0, MaxEntries)
      .map(([k, v]) => [k, v.tools.length > MaxToolsPerEntry ? { at: v.at, tools: v.tools.slice(0, MaxToolsPerEntry) } : v])
  )

/** Nothing is kept: the store of tests and of a gateway without a state directory. */
export const memory: Effect.Effect<SchemaStore> = Effect.sync(() => {
  let entries: Entries = new Map()
  return {
    read: Effect.sync(() => entries),
    update: (f) =>
      Effect.sync(() => {
        const next = new Map(entries)
        f(next)
        entries = bounded(next)
        return entries
      })
  }
})

/** The store in `<stateDir>/tool-schemas.json`. */
export const file = (stateDir: string): Effect.Effect<SchemaStore, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const target = path.join(stateDir, FileName)
    const lock = yield* Effect.makeSemaphore(1)

    // stat before open: reading a FIFO would block, a device would never end, a huge file would fill memory.
    const read: Effect.Effect<Entries> = Effect.gen(function*() {
      const info = yield* fs.stat(target)
      if (info.type !== "File") {
        yield* Effect.logWarning(`${target} is not a regular file (${info.type}); the tool schema cache is ignored`)
        return new Map<string, StoredListing>()
      }
      if (Number(info.size) > MaxFileBytes) {
        yield* Effect.logWarning(`${target} is over ${MaxFileBytes} bytes; the tool schema cache is ignored`)
        return new Map<string, StoredListing>()
      }
      return parse(yield* fs.readFileString(target))
    }).pipe(Effect.catchAll(() => Effect.succeed(new Map<string, StoredListing>())))

    const write = (entries: Entries) => {
      const temp = path.join(stateDir, `.${FileName}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`)
      return Effect.gen(function*() {
        const text = `${JSON.stringify({ version: FileVersion, entries: Object.fromEntries(entries) })}\n`
        yield* fs.makeDirectory(stateDir, { recursive: true, mode: 0o700 })
        yield* fs.writeFileString(temp, text, { flag: "wx", mode: 0o600 })
        // The mode given to open is filtered by the umask; the file must be exactly 0600.
        yield* fs.chmod(temp, 0o600)
        yield* fs.rename(temp, target)
      }).pipe(
        Effect.onError(() => Effect.ignore(fs.remove(temp))),
        Effect.catchAll((e) => Effect.logWarning(`tool schema cache not written to ${target}: ${e.message}`))
      )
    }

    return {
      read,
      update: (f) =>
        lock.withPermits(1)(
          Effect.gen(function*() {
            // Re-read under the lock so another process's entries are kept.
            const next = new Map(yield* read)
            f(next)
            const kept = bounded(next)
            yield* write(kept)
            return kept as Entries
          })
        )
    } satisfies SchemaStore
  })
