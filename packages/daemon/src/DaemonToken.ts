/**
 * The daemon's bearer token when it binds beyond loopback and `daemon.token` is not set: kept in
 * `<state>/daemon.token` (mode 0600, in the owner-only state directory), made on first need and
 * reused after, so a remote host's configuration keeps working across restarts. Whoever can read
 * the file can use the daemon; nobody else can.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { randomBytes } from "node:crypto"
import * as Effect from "effect/Effect"
import { DaemonFileError } from "./DaemonFiles.js"
import { StateDir } from "@mcpx-fx/config/StateDir"

/** The file's name in the state directory. */
export const FileName = "daemon.token"

/** The most of the file read: a token is 43 characters; anything far longer is not one of ours. */
const MaxBytes = 4096

const isToken = (s: string) => /^[\x21-\x7e]{16,}$/.test(s)

/** The token in the state directory, made (32 random bytes, base64url) if there is none. */
export const ensure: Effect.Effect<
  { readonly token: string; readonly path: string; readonly created: boolean },
  DaemonFileError,
  StateDir | FileSystem.FileSystem | Path.Path
> = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const dir = yield* Effect.mapError((yield* StateDir).ensure, (e) => new DaemonFileError({ path: e.path, detail: e.detail }))
  const path = (yield* Path.Path).join(dir, FileName)
  const failed = (e: { readonly message: string }) => new DaemonFileError({ path, detail: e.message })
  return yield* Effect.gen(function*() {
    if (yield* fs.exists(path)) {
      const info = yield* fs.stat(path)
      if (info.type === "File" && Number(info.size) <= MaxBytes) {
        const text = (yield* fs.readFileString(path)).trim()
        if (isToken(text)) {
          yield* fs.chmod(path, 0o600)
          return { token: text, path, created: false }
        }
      }
      if (info.type !== "File") return yield* new DaemonFileError({ path, detail: "expected a file holding the daemon's token" })
    }
    const token = randomBytes(32).toString("base64url")
    yield* fs.writeFileString(path, `${token}\n`, { mode: 0o600 })
    // The mode of a new file is filtered by the umask and an old file keeps its own.
    yield* fs.chmod(path, 0o600)
    return { token, path, created: true }
  }).pipe(
    Effect.catchTag("SystemError", (e) => Effect.fail(failed(e))),
    Effect.catchTag("BadArgument", (e) => Effect.fail(failed(e)))
  )
})

/**
 * The token the daemon requires: `daemon.token` when set; else, for a daemon others can reach
 * (`loopback` false), the state directory's, with a line saying where it is; else none.
 */
export const forDaemon = (
  configured: string,
  loopback: boolean
): Effect.Effect<{ readonly token: string | undefined; readonly notice?: string }, DaemonFileError, StateDir | FileSystem.FileSystem | Path.Path> => {
  if (configured !== "") return Effect.succeed({ token: configured })
  if (loopback) return Effect.succeed({ token: undefined })
  return Effect.map(ensure, (made) => ({
    token: made.token,
    notice: `/mcp and /v1 over TCP need "Authorization: Bearer <token>"; the token is ${made.created ? "generated into" : "in"} ${made.path} ` +
      "(or set daemon.token)"
  }))
}
