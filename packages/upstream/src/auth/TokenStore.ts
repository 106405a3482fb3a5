/**
 * Where OAuth registrations and tokens of HTTP upstreams are kept between runs, so a login lasts
 * across restarts and the CLI and the daemon share it.
 *
 * One file, `<stateDir>/upstream-auth.json` (`{"version": 1, "servers": {<server URL>: entry}}`),
 * each entry naming the authorization server (issuer) its client and tokens belong to: a token or
 * a client registration is only ever used with the issuer that issued it. Written atomically (a
 * 0600 temp file in the same directory, fsynced, renamed over the old one).
 *
 * Read with care, because it holds secrets and other processes write it: only a regular file of
 * at most `MaxFileBytes` is read. A missing file is empty; a damaged one (not JSON, another
 * version, wrong shape, not a regular file, too large) also reads as empty, with the problem
 * reported so the caller can ask the user to log in again; the next write replaces it.
 *
 * Sharing: every read goes to the file, so a refresh or a login by another process is seen at the
 * next read. Writes in one process are serialised and re-read the file before changing one entry;
 * between processes the rename is atomic and the later writer wins, which at worst costs a login.
 */
import type { PlatformError } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"

/** The file's name inside the state directory. */
export const FileName = "upstream-auth.json"

/** The file format this code reads and writes; any other version reads as empty. */
export const FileVersion = 1

/** The largest file read; a token store is a few KiB, and a huge file is not one of ours. */
export const MaxFileBytes = 1024 * 1024

const Text = Schema.String
const Metadata = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** The client mcpx-fx is at one authorization server, and how it got that identity. */
export const StoredClient = Schema.Struct({
  client_id: Text,
  client_secret: Schema.optionalWith(Text, { exact: true }),
  /** none, client_secret_basic or client_secret_post. */
  token_endpoint_auth_method: Text,
  /** config (pre-registered), cimd (a Client ID Metadata Document URL) or dcr (registered by mcpx-fx). */
  source: Schema.Literal("config", "cimd", "dcr"),
  /** The redirect URI registered with it (dcr), so a later login can listen on the same one. */
  redirect_uri: Schema.optionalWith(Text, { exact: true })
})
/** The client mcpx-fx is at one authorization server. */
export type StoredClient = typeof StoredClient.Type

/** Tokens from the token endpoint. `expires_at` is epoch milliseconds, absent when the AS named no lifetime. */
export const StoredTokens = Schema.Struct({
  access_token: Text,
  token_type: Text,
  refresh_token: Schema.optionalWith(Text, { exact: true }),
  expires_at: Schema.optionalWith(Schema.Number, { exact: true }),
  /** The scopes granted (or, when the AS did not say, the ones requested), space-separated. */
  scope: Schema.optionalWith(Text, { exact: true })
})
/** Tokens from the token endpoint. */
export type StoredTokens = typeof StoredTokens.Type

/** Everything known about authorizing at one upstream server. */
export const AuthEntry = Schema.Struct({
  /** The authorization server's issuer identifier, exactly as its metadata names it. */
  issuer: Text,
  /** Its metadata (RFC 8414), so a refresh needs no discovery. */
  metadata: Metadata,
  /** The `resource` the protected resource metadata published, sent as the RFC 8707 resource. */
  resource: Text,
  client: Schema.optionalWith(StoredClient, { exact: true }),
  tokens: Schema.optionalWith(StoredTokens, { exact: true }),
  /** The scopes the last authorization asked for, space-separated (the grant may hold fewer). */
  requested: Schema.optionalWith(Text, { exact: true }),
  /** Scopes the server asked for (a 403 insufficient_scope) that the next login must request too. */
  wanted: Schema.optionalWith(Text, { exact: true }),
  /** When it was last written, epoch milliseconds. */
  at: Schema.Number
})
/** Everything known about authorizing at one upstream server. */
export type AuthEntry = typeof AuthEntry.Type

/** The whole file. */
export const StoreFile = Schema.Struct({
  version: Schema.Literal(FileVersion),
  servers: Schema.Record({ key: Schema.String, value: AuthEntry })
})

/** What a read found: the entries, and why the file was set aside when it was. */
export interface Snapshot {
  readonly servers: ReadonlyMap<string, AuthEntry>
  /** Set when the file exists but could not be used; it reads as empty. */
  readonly damaged?: string
}

/** The store could not be written; tokens obtained stay usable in this process only. */
export class TokenStoreError extends Schema.TaggedError<TokenStoreError>("@mcpx-fx/upstream/TokenStoreError")(
  "TokenStoreError",
  { file: Schema.String, reason: Schema.String }
) {
  override get message(): string {
    return `cannot write the token store ${this.file}: ${this.reason}`
  }
}

/** OAuth registrations and tokens by server URL. */
export class TokenStore extends Context.Tag("@mcpx-fx/upstream/TokenStore")<TokenStore, {
  /** Where it lives (for messages); "memory" for the in-memory store. */
  readonly location: string
  /** Reads the store as it is now. */
  readonly read: Effect.Effect<Snapshot>
  /** Changes one server's entry (undefined removes it) on a fresh read, and writes the file. */
  readonly update: (
    server: string,
    change: (entry: AuthEntry | undefined) => AuthEntry | undefined
  ) => Effect.Effect<AuthEntry | undefined, TokenStoreError>
}>() {
  /** The file in `<stateDir>/upstream-auth.json`. */
  static readonly layerFile = (stateDir: string): Layer.Layer<TokenStore, never, FileSystem.FileSystem | Path.Path> =>
    Layer.effect(TokenStore, makeFile(stateDir))
  /** In memory only (tests, the conformance client); each build starts empty. */
  static readonly layerMemory: Layer.Layer<TokenStore> = Layer.effect(TokenStore, Effect.suspend(() => makeMemory))
}

const makeMemory = Effect.gen(function*() {
  const servers = yield* Ref.make<ReadonlyMap<string, AuthEntry>>(new Map())
  const lock = yield* Effect.makeSemaphore(1)
  return TokenStore.of({
    location: "memory",
    read: Effect.map(Ref.get(servers), (s) => ({ servers: s })),
    update: (server, change) =>
      lock.withPermits(1)(Ref.modify(servers, (current) => {
        const next = new Map(current)
        const entry = change(current.get(server))
        if (entry === undefined) next.delete(server)
        else next.set(server, entry)
        return [entry, next]
      }))
  })
})

const decodeJson = Schema.decodeUnknownEither(Schema.parseJson())
const decodeVersion = Schema.decodeUnknownEither(Schema.Struct({ version: Schema.Unknown }))
const decodeFile = Schema.decodeUnknownEither(StoreFile)
const encodeFile = Schema.encodeSync(StoreFile)

/** The entries of the file's text, or why it cannot be used. */
export const parseStore = (text: string): Either.Either<ReadonlyMap<string, AuthEntry>, string> => {
  const json = decodeJson(text)
  if (Either.isLeft(json)) return Either.left("it is not valid JSON")
  const versioned = decodeVersion(json.right)
  if (Either.isLeft(versioned)) return Either.left("it is not a JSON object with a version")
  if (versioned.right.version !== FileVersion) {
    return Either.left(`it has version ${JSON.stringify(versioned.right.version)}, not ${FileVersion}`)
  }
  return Either.mapBoth(decodeFile(json.right), {
    onLeft: () => "its entries do not have the expected shape",
    onRight: (file) => new Map(Object.entries(file.servers))
  })
}

const isNotFound = (error: PlatformError): boolean => error._tag === "SystemError" && error.reason === "NotFound"

const makeFile = (stateDir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const file = path.join(stateDir, FileName)
    const lock = yield* Effect.makeSemaphore(1)
    const empty: ReadonlyMap<string, AuthEntry> = new Map()

    const damaged = (reason: string): Snapshot => ({ servers: empty, damaged: `${file}: ${reason}` })

    const read: Effect.Effect<Snapshot> = Effect.gen(function*() {
      const info = yield* Effect.either(fs.stat(file))
      if (Either.isLeft(info)) {
        return isNotFound(info.left) ? { servers: empty } : damaged(`cannot be read (${info.left.message})`)
      }
      if (info.right.type !== "File") return damaged(`it is not a regular file (${info.right.type})`)
      if (Number(info.right.size) > MaxFileBytes) return damaged(`it is larger than ${MaxFileBytes} bytes`)
      const text = yield* Effect.either(fs.readFileString(file))
      if (Either.isLeft(text)) {
        return isNotFound(text.left) ? { servers: empty } : damaged(`cannot be read (${text.left.message})`)
      }
      // Re-checked on what was read: the file may have grown between the stat and the read.
      if (text.right.length > MaxFileBytes) return damaged(`it is larger than ${MaxFileBytes} bytes`)
      return Either.match(parseStore(text.right), { onLeft: damaged, onRight: (servers) => ({ servers }) })
    })

    const write = (servers: ReadonlyMap<string, AuthEntry>): Effect.Effect<void, TokenStoreError> => {
      // Same directory, so the rename is atomic; pid and random bytes keep concurrent writers apart.
      const temp = path.join(stateDir, `.${FileName}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`)
      const text = `${JSON.stringify(encodeFile({ version: FileVersion, servers: Object.fromEntries(servers) }), null, 2)}\n`
      return Effect.gen(function*() {
        yield* fs.makeDirectory(stateDir, { recursive: true, mode: 0o700 })
        yield* Effect.scoped(Effect.gen(function*() {
          const handle = yield* fs.open(temp, { flag: "wx", mode: 0o600 })
          yield* handle.writeAll(new TextEncoder().encode(text))
          yield* handle.sync
        }))
        // open's mode is filtered by the umask; the file must be exactly 0600 whatever the umask.
        yield* fs.chmod(temp, 0o600)
        yield* fs.rename(temp, file)
      }).pipe(
        Effect.onError(() => Effect.ignore(fs.remove(temp))),
        Effect.mapError((e) => new TokenStoreError({ file, reason: e.message }))
      )
    }

    const update = (server: string, change: (entry: AuthEntry | undefined) => AuthEntry | undefined) =>
      lock.withPermits(1)(Effect.gen(function*() {
        const snapshot = yield* read
        if (snapshot.damaged !== undefined) {
          yield* Effect.logWarning(`the token store is damaged and is replaced (${snapshot.damaged}); other servers need a login again`)
        }
        const next = new Map(snapshot.servers)
        const entry = change(snapshot.servers.get(server))
        if (entry === undefined) next.delete(server)
        else next.set(server, entry)
        yield* write(next)
        return entry
      }))

    return TokenStore.of({ location: file, read, update })
  })

/** One server's entry in a snapshot. */
export const entryOf = (snapshot: Snapshot, server: string): Option.Option<AuthEntry> => Option.fromNullable(snapshot.servers.get(server))
