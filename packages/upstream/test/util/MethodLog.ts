/** The era fixture's method log (`--log FILE`, a line `<era> <method>` per message it read), watched by tests. */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { existsSync, mkdtempSync, readFileSync, rmSync, watch } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** An event-driven wait gave up: what it waited for never happened. */
export class WaitTimedOut extends Data.TaggedError("WaitTimedOut")<{ readonly what: string }> {}

/** A directory of its own for the log, removed with the scope. */
export const tempLog = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "era-method-log-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => ({ dir, file: join(dir, "methods.log") })))

export const logLines = (file: string): ReadonlyArray<string> => existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0) : []

/** Waits until the log holds `line` (`times` times), woken by the directory's changes. */
export const logIncludes = (log: { readonly dir: string; readonly file: string }, line: string, times = 1) =>
  Effect.async<void>((resume) => {
    const check = () => {
      if (logLines(log.file).filter((l) => l === line).length >= times) resume(Effect.void)
    }
    const watcher = watch(log.dir, check)
    check()
    return Effect.sync(() => watcher.close())
  }).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new WaitTimedOut({ what: `${line} in the method log` }) }))
