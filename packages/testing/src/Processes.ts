/**
 * Watching processes the test did not start itself (an upstream's grandchild): whether one still
 * runs, waiting for it to go, and waiting for the file it writes its pid to.
 */
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { existsSync, readFileSync, watch } from "node:fs"
import * as path from "node:path"

/** Whether `pid` runs; a zombie (killed, not yet reaped by whoever inherited it) runs nothing. */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}

/**
 * Waits for `pid` to be gone. Another process's death sends this one no event, and a SIGKILL is
 * acted on when the process is next scheduled: polled, briefly and boundedly.
 */
export const gone = (pid: number): Effect.Effect<void, string> =>
  Effect.suspend(() => (alive(pid) ? Effect.fail(`process ${pid} is still running`) : Effect.void)).pipe(
    Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("5 seconds")))
  )

/** Waits until `file` exists with a pid in it (its directory is watched), and returns the pid. */
export const pidFrom = (file: string): Effect.Effect<number> =>
  Effect.async<number>((resume) => {
    let done = false
    const watcher = watch(path.dirname(file), () => check())
    const check = () => {
      if (done || !existsSync(file)) return
      const pid = Number.parseInt(readFileSync(file, "utf8").trim(), 10)
      if (!Number.isInteger(pid)) return
      done = true
      watcher.close()
      resume(Effect.succeed(pid))
    }
    check()
    return Effect.sync(() => {
      done = true
      watcher.close()
    })
  })
