/**
 * The `--log` file of an era-server upstream: one `<era> <method>` line per message it received,
 * written before it acts on the message. Tests read it to see what reached the upstream, and wait
 * for a line by watching the file rather than by sleeping.
 */
import { parseLog } from "@mcpx-fx/testing/era/MethodLog"
import * as Effect from "effect/Effect"
import { existsSync, readFileSync, watch } from "node:fs"
import * as path from "node:path"

/** One received message. */
export interface Logged {
  readonly era: string
  readonly method: string
}

/** What the upstream has received so far (nothing if it has not started). */
export const read = (file: string): ReadonlyArray<Logged> => (existsSync(file) ? parseLog(readFileSync(file, "utf8")) : [])

/** How many times the upstream has received `method` so far. */
export const count = (file: string, method: string): number => read(file).filter((l) => l.method === method).length

/**
 * Waits until `ready` accepts the log. The directory is watched because the file may not exist
 * yet; every change re-reads it, and the check also runs once at the start.
 */
export const until = (file: string, ready: (log: ReadonlyArray<Logged>) => boolean): Effect.Effect<ReadonlyArray<Logged>> =>
  Effect.async<ReadonlyArray<Logged>>((resume) => {
    let done = false
    const watcher = watch(path.dirname(file), () => check())
    const check = () => {
      if (done) return
      const log = read(file)
      if (ready(log)) {
        done = true
        watcher.close()
        resume(Effect.succeed(log))
      }
    }
    check()
    return Effect.sync(() => {
      done = true
      watcher.close()
    })
  })
