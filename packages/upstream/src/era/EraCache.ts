/**
 * Remembered upstream eras, so the probe is a one-time cost per server configuration.
 *
 * Key: the SHA-256 (hex) of the canonical JSON of a definition's process identity (command, args,
 * env, cwd, transport, url, headers; keys sorted recursively). The name, the `protocol` preference
 * and leasing knobs are not part of it, so renaming a server or resizing its pool keeps its era,
 * while any change to how the process is started or reached forgets it.
 *
 * Value: `{era, version, at, source, transport?, exclusive?}`. `at` is epoch milliseconds from the Effect
 * `Clock` (so tests drive it with `TestClock`, and staleness checks are plain subtraction).
 *
 * Storage: memory, plus `<stateDir>/upstream-eras.json` (`{"version": 1, "entries": {key: record}}`),
 * written atomically: a temp file in the same directory (mode 0600, fsynced), then a rename over the
 * old file; the directory is created 0700 when missing. A missing, unreadable, truncated, non-JSON,
 * other-version or wrongly shaped file reads as empty and is replaced by the next write; an entry
 * that does not decode is dropped on its own. It is read as a state file (`StateFile`): a FIFO, a
 * device (a symlink to `/dev/zero`), a directory or a file over `MaxFileBytes` is never waited on
 * or read without bound, but ignored with a warning.
 *
 * Concurrency: writes in one process are serialised by a semaphore and each re-reads the file,
 * applies its one change and renames a complete new file into place, so writers in one process
 * never lose each other's entries and readers of the file never see a partial one. Processes sharing
 * a state directory take no lock: each write keeps the other processes' entries it reads, but when
 * two processes' read-change-rename windows overlap, the later rename wins and the earlier change is
 * lost — which costs that server one more probe, never a wrong answer. Memory is refreshed from the
 * file on every write, not on reads.
 *
 * Not the cache's business: `force-*` preferences never read or write it (the Prober checks
 * `Preference.usesEraCache`), and deciding that a record is stale is the Prober's (it gets `at`).
 */
import type { PlatformError } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Revision from "@mcpx-fx/protocol/Revision"
import * as RevisionSchema from "@mcpx-fx/protocol/RevisionSchema"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { createHash, randomBytes } from "node:crypto"
import { canonicalJson } from "../internal/canonicalJson.js"
import { processIdentity, type ServerDefinition } from "../ServerDefinition.js"
import * as StateFile from "../os/StateFile.js"

/** The file's name inside the state directory. */
export const FileName = "upstream-eras.json"

/** The file format this code reads and writes; any other version reads as empty. */
export const FileVersion = 1

/** The largest file read (an entry is about 200 bytes: this is some twenty thousand servers). */
export const MaxFileBytes = 4 * 1024 * 1024

/** Which HTTP transport an HTTP upstream settled on (the HTTP+SSE fallback is remembered too). */
export const HttpTransport = Schema.Literal("streamable-http", "http+sse")
/** Which HTTP transport an HTTP upstream settled on. */
export type HttpTransport = typeof HttpTransport.Type

/** One remembered era. Encoded form = stored form (plain JSON). */
export const EraRecord = Schema.Struct({
  era: RevisionSchema.EraSchema,
  /** The negotiated version, which later requests carry. */
  version: RevisionSchema.RevisionSchema,
  /** When it was learned, in epoch milliseconds. */
  at: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  /** How it was learned; only probes write the cache ("cache" and "forced" are session sources). */
  source: Schema.Literal("probe"),
  /** HTTP upstreams only. */
  transport: Schema.optionalWith(HttpTransport, { exact: true }),
  /**
   * The other era's opening request was refused (or never answered): as far as mcpx-fx knows the
   * server speaks only `era`, so every preference may go straight to it. Absent, the record only
   * shortcuts a preference that tries `era` first anyway: a dual server's record must not change
   * what a preference for the other era gets.
   */
  exclusive: Schema.optionalWith(Schema.Boolean, { exact: true })
}).pipe(
  Schema.filter((r) => Revision.eraOf(r.version) === r.era || `version ${r.version} is not a ${r.era} revision`)
)
/** One remembered era. */
export type EraRecord = typeof EraRecord.Type

/** What a probe learned; `set` stamps `at` and `source`. Era and version must agree. */
export type EraObservation =
  & (
    | { readonly era: "legacy"; readonly version: Revision.LegacyRevision }
    | { readonly era: "modern"; readonly version: Revision.ModernRevision }
  )
  & { readonly transport?: HttpTransport; readonly exclusive?: boolean }

const CacheKey = Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/))

/** The whole `upstream-eras.json` document. */
export const EraCacheFile = Schema.Struct({
  version: Schema.Literal(FileVersion),
  entries: Schema.Record({ key: CacheKey, value: EraRecord })
})

/** The cache key of a definition: SHA-256 hex of the canonical JSON of its process identity. */
export const cacheKey = (def: ServerDefinition): string => createHash("sha256").update(canonicalJson(processIdentity(def)), "utf8").digest("hex")

type Entries = ReadonlyMap<string, EraRecord>

/** Where the era cache lives and whether it is on (`upstream.eraCache`). */
export class EraCacheConfig extends Context.Tag("@mcpx-fx/upstream/EraCacheConfig")<EraCacheConfig, {
  /** The mcpx-fx state directory; the file is `<stateDir>/upstream-eras.json`. */
  readonly stateDir: string
  /** `upstream.eraCache`; when false nothing is read or written and every `get` misses. */
  readonly enabled: boolean
}>() {
  /** A fixed configuration (the gateway derives it from its settings). */
  static readonly layer = (config: { readonly stateDir: string; readonly enabled?: boolean }): Layer.Layer<EraCacheConfig> =>
    Layer.succeed(EraCacheConfig, { stateDir: config.stateDir, enabled: config.enabled ?? true })
}

/** Remembered upstream eras, keyed by process identity. */
export class EraCache extends Context.Tag("@mcpx-fx/upstream/EraCache")<EraCache, {
  /** False for the disabled cache (`upstream.eraCache=false`), so `/v1/protocol` can say why nothing is cached. */
  readonly enabled: boolean
  /** The remembered record, if any; the Prober compares `at` and `era` with what it finds. */
  readonly get: (def: ServerDefinition) => Effect.Effect<Option.Option<EraRecord>>
  /**
   * Remembers what a probe learned, stamped with the current `Clock` time; returns the record.
   * Never fails: a cache that cannot persist still serves this process, and a start must not
   * fail over it (write errors are logged).
   */
  readonly set: (def: ServerDefinition, observation: EraObservation) => Effect.Effect<EraRecord>
  /** Forgets a definition's record (when it proved wrong). */
  readonly invalidate: (def: ServerDefinition) => Effect.Effect<void>
  /** Everything remembered, by key (for `/v1/protocol` and diagnostics). */
  readonly entries: Effect.Effect<Entries>
}>() {
  /** File-backed, configured by `EraCacheConfig`; disabled when `enabled` is false. */
  static readonly layer: Layer.Layer<EraCache, never, EraCacheConfig | FileSystem.FileSystem | Path.Path> = Layer
    .effect(
      EraCache,
      Effect.flatMap(EraCacheConfig, (config) => (config.enabled ? makeFile(config.stateDir) : Effect.succeed(disabled)))
    )
  /** File-backed in `<stateDir>/upstream-eras.json`. */
  static readonly layerFile = (stateDir: string): Layer.Layer<EraCache, never, FileSystem.FileSystem | Path.Path> => Layer.effect(EraCache, makeFile(stateDir))
  /** In memory only (tests, library users); each build starts empty. */
  static readonly layerMemory: Layer.Layer<EraCache> = Layer.effect(EraCache, Effect.suspend(() => makeMemory))
  /** `upstream.eraCache=false`: every `get` misses, `set` and `invalidate` do nothing. */
  static readonly layerDisabled: Layer.Layer<EraCache> = Layer.sync(EraCache, () => disabled)
}

const stamp = (observation: EraObservation) =>
  Effect.map(Clock.currentTimeMillis, (at): EraRecord => ({
    era: observation.era,
    version: observation.version,
    at,
    source: "probe",
    ...(observation.transport !== undefined ? { transport: observation.transport } : {}),
    ...(observation.exclusive === true ? { exclusive: true } : {})
  }))

const disabled: Context.Tag.Service<EraCache> = EraCache.of({
  enabled: false,
  get: () => Effect.succeed(Option.none()),
  set: (_def, observation) => stamp(observation),
  invalidate: () => Effect.void,
  entries: Effect.succeed(new Map())
})

/**
 * The shared core: memory plus a store. `reload` returns what the store holds now (falling back to
 * `current` when it cannot tell), `persist` writes a whole new set; both are run under one permit.
 */
const makeWith = (store: {
  readonly reload: (current: Entries) => Effect.Effect<Entries>
  readonly persist: (entries: Entries) => Effect.Effect<void>
}) =>
  Effect.gen(function*() {
    const memory = yield* Ref.make<Entries>(yield* store.reload(new Map()))
    const lock = yield* Effect.makeSemaphore(1)

    const change = (f: (entries: Map<string, EraRecord>) => void) =>
      lock.withPermits(1)(
        Effect.gen(function*() {
          const next = new Map(yield* store.reload(yield* Ref.get(memory)))
          f(next)
          yield* store.persist(next)
          yield* Ref.set(memory, next)
        })
      )

    const get = Effect.fn("EraCache.get")(function*(def: ServerDefinition) {
      return Option.fromNullable((yield* Ref.get(memory)).get(cacheKey(def)))
    })
    const set = Effect.fn("EraCache.set")(function*(def: ServerDefinition, observation: EraObservation) {
      const record = yield* stamp(observation)
      const key = cacheKey(def)
      yield* change((entries) => entries.set(key, record))
      return record
    })
    const invalidate = Effect.fn("EraCache.invalidate")(function*(def: ServerDefinition) {
      const key = cacheKey(def)
      yield* change((entries) => entries.delete(key))
    })
    return EraCache.of({ enabled: true, get, set, invalidate, entries: Ref.get(memory) })
  })

// The memory itself is the store: reload hands back what is there, persist has nowhere to go.
const makeMemory = makeWith({ reload: Effect.succeed, persist: () => Effect.void })

const decodeJson = Schema.decodeUnknownEither(Schema.parseJson())
const decodeVersioned = Schema.decodeUnknownEither(Schema.Struct({ version: Schema.Unknown }))
const decodeEnvelope = Schema.decodeUnknownEither(
  Schema.Struct({ version: Schema.Literal(FileVersion), entries: Schema.Record({ key: Schema.String, value: Schema.Unknown }) })
)
const decodeKey = Schema.decodeUnknownEither(CacheKey)
const decodeRecord = Schema.decodeUnknownEither(EraRecord)
const encodeFile = Schema.encode(EraCacheFile)

/** Parses the file's text; anything unusable is empty, with a reason to log. */
const parseFile = (text: string): { readonly entries: Entries; readonly problem?: string; readonly dropped: number } => {
  const json = decodeJson(text)
  if (Either.isLeft(json)) return { entries: new Map(), problem: "not valid JSON (truncated or corrupt)", dropped: 0 }
  const versioned = decodeVersioned(json.right)
  if (Either.isLeft(versioned)) return { entries: new Map(), problem: "not a JSON object with a version", dropped: 0 }
  if (versioned.right.version !== FileVersion) {
    return { entries: new Map(), problem: `file version ${JSON.stringify(versioned.right.version)}, expected ${FileVersion}`, dropped: 0 }
  }
  const envelope = decodeEnvelope(json.right)
  if (Either.isLeft(envelope)) {
    return { entries: new Map(), problem: `wrong shape: ${ParseResult.TreeFormatter.formatErrorSync(envelope.left)}`, dropped: 0 }
  }
  const entries = new Map<string, EraRecord>()
  let dropped = 0
  for (const [key, value] of Object.entries(envelope.right.entries)) {
    const record = decodeRecord(value)
    if (Either.isRight(record) && Either.isRight(decodeKey(key))) entries.set(key, record.right)
    else dropped++
  }
  return { entries, dropped }
}

const makeFile = (stateDir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const file = path.join(stateDir, FileName)

    const reload = (current: Entries): Effect.Effect<Entries> =>
      Effect.flatMap(StateFile.read(file, MaxFileBytes), (result): Effect.Effect<Entries> => {
        switch (result._tag) {
          case "Missing":
            return Effect.as(Effect.logDebug("era cache file missing; starting empty"), new Map())
          case "Refused":
            return result.kind === "unreadable"
              // Cannot tell what is on disk: keep what we have rather than write over it blindly.
              ? Effect.as(Effect.logWarning(`era cache file ${result.reason}; keeping the in-memory entries`), current)
              : Effect.as(Effect.logWarning(`era cache file ignored (${result.reason}); it is replaced on the next change`), new Map())
          case "Text": {
            const parsed = parseFile(result.text)
            const warn = parsed.problem !== undefined
              ? Effect.logWarning(`era cache file ignored (${parsed.problem}); it is rewritten on the next change`)
              : parsed.dropped > 0
              ? Effect.logWarning(`era cache file: dropped ${parsed.dropped} undecodable entries`)
              : Effect.void
            return Effect.as(warn, parsed.entries)
          }
        }
      }).pipe(Effect.annotateLogs({ file }))

    const write = (entries: Entries): Effect.Effect<void, PlatformError | ParseResult.ParseError> => {
      // Same directory, so the rename is atomic; pid and random bytes keep concurrent writers apart.
      const temp = path.join(stateDir, `.${FileName}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`)
      return Effect.gen(function*() {
        const encoded = yield* encodeFile({ version: FileVersion, entries: Object.fromEntries(entries) })
        const text = `${JSON.stringify(encoded, null, 2)}\n`
        // recursive: no error when it exists, and an existing directory keeps its mode.
        yield* fs.makeDirectory(stateDir, { recursive: true, mode: 0o700 })
        yield* Effect.scoped(
          Effect.gen(function*() {
            const handle = yield* fs.open(temp, { flag: "wx", mode: 0o600 })
            yield* handle.writeAll(new TextEncoder().encode(text))
            // Without it a crash right after the rename can leave an empty file (read as empty, but lost).
            yield* handle.sync
          })
        )
        // open's mode is filtered by the umask; the file must be exactly 0600 whatever the umask.
        yield* fs.chmod(temp, 0o600)
        yield* fs.rename(temp, file)
      }).pipe(Effect.onError(() => Effect.ignore(fs.remove(temp))))
    }

    const persist = (entries: Entries): Effect.Effect<void> =>
      write(entries).pipe(
        Effect.catchAll((error) => Effect.logWarning("era cache not written; it stays in memory", error)),
        Effect.annotateLogs({ file })
      )

    return yield* makeWith({ reload, persist })
  })
