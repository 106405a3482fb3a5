/**
 * The owner secret: what makes a TCP request the owner's (OwnerAccess.ts), for the live page that
 * a browser opens and which cannot reach the owner-only unix socket. The daemon makes a new one at
 * each start and keeps it in `<state>/owner.secret` (0600, in the owner-only state directory) for
 * as long as it runs; `mcpx-fx ui` reads it and prints the page's address with the secret in the
 * fragment. Whoever can read the file could open the socket anyway; nobody else learns it, and a
 * page address that leaked stops working when the daemon restarts.
 *
 * It is never the daemon token: the token is handed to remote hosts so they may call tools, and
 * the owner's views (every question, every task, unredacted text) are more than that.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { StateDir } from "@mcpx-fx/config/StateDir"
import * as StateFile from "@mcpx-fx/upstream/os/StateFile"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"
import { DaemonFileError } from "./DaemonFiles.js"

/** The file's name in the state directory. */
export const FileName = "owner.secret"

/** The secret is 43 characters; anything far longer is not one the daemon wrote. */
const MaxBytes = 4096

const isSecret = (s: string) => /^[A-Za-z0-9_-]{32,}$/.test(s)

const fileIn: Effect.Effect<string, never, StateDir | Path.Path> = Effect.map(
  Effect.all([StateDir, Path.Path]),
  ([state, path]) => path.join(state.path, FileName)
)

/** Makes a new secret (32 random bytes, base64url) and writes it for the life of the scope. */
export const publish: Effect.Effect<string, DaemonFileError, StateDir | FileSystem.FileSystem | Path.Path | Scope.Scope> = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const file = yield* fileIn
  const secret = randomBytes(32).toString("base64url")
  yield* StateFile.writeAtomic(file, `${secret}\n`).pipe(Effect.mapError((e) => new DaemonFileError({ path: file, detail: e.detail })))
  yield* Effect.addFinalizer(() => Effect.ignore(fs.remove(file)))
  return secret
})

/** The running daemon's secret, if its file is there and holds one. */
export const read: Effect.Effect<Option.Option<string>, never, StateDir | Path.Path> = Effect.flatMap(
  fileIn,
  (file) =>
    Effect.map(StateFile.read(file, MaxBytes), (result) => {
      const text = result._tag === "Text" ? result.text.trim() : ""
      return isSecret(text) ? Option.some(text) : Option.none()
    })
)
