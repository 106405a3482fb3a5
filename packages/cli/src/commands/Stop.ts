/**
 * `mcpx-fx stop`: asks the running daemon to shut down (SIGTERM, the same graceful path as Ctrl-C
 * in its terminal) and waits until it has: its lock is released once every upstream is stopped and
 * its files are removed.
 */
import * as Command from "@effect/cli/Command"
import * as FileSystem from "@effect/platform/FileSystem"
import * as DaemonFiles from "@mcpx-fx/daemon/DaemonFiles"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as DaemonClient from "../DaemonClient.js"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"
import * as Output from "../Output.js"
import { globalsFrom } from "./Root.js"

/** No daemon runs for this state directory. */
export class NoDaemon extends Data.TaggedError("NoDaemon")<{ readonly stateDir: string }> {
  override get message(): string {
    return `no daemon is running for the state directory ${this.stateDir} (start one with \`mcpx-fx daemon\`)`
  }
}

/** The daemon did not exit within the wait. */
export class StopTimedOut extends Data.TaggedError("StopTimedOut")<{ readonly pid: number; readonly seconds: number }> {
  override get message(): string {
    return `the daemon (pid ${this.pid}) is still running after ${this.seconds}s; it may be finishing long calls`
  }
}

// Longer than the daemon's own grace period, so a stop that is merely slow is not reported as stuck.
const StopWait = Duration.seconds(30)

/** `mcpx-fx stop`. */
export const command = Command.make("stop", { globals: GlobalOptions.options }, ({ globals }) =>
  Effect.gen(function*() {
    const options = yield* globalsFrom(globals)
    const fs = yield* FileSystem.FileSystem
    const files = yield* Effect.provide(DaemonFiles.paths, DaemonClient.stateDir)
    const info = yield* DaemonClient.running
    if (Option.isNone(info)) return yield* new NoDaemon({ stateDir: files.stateDir })
    const pid = info.value.pid
    yield* Effect.sync(() => process.kill(pid, "SIGTERM"))
    // The daemon's process ends only after its cleanup; a process that is gone is the one event
    // another process can observe here, so it is checked on a short schedule.
    const gone = Effect.suspend(() => DaemonFiles.processAlive(pid) ? Effect.fail("alive" as const) : Effect.void)
    yield* gone.pipe(
      Effect.retry(Schedule.spaced(Duration.millis(50))),
      Effect.timeoutFail({ duration: StopWait, onTimeout: () => new StopTimedOut({ pid, seconds: Duration.toSeconds(StopWait) }) })
    )
    const leftover = yield* fs.exists(files.info).pipe(Effect.orElseSucceed(() => false))
    if (options.json) yield* Output.json({ stopped: true, pid, url: info.value.url, filesLeft: leftover })
    else yield* Output.text(`stopped the daemon (pid ${pid}) at ${info.value.url}`)
  })).pipe(
    Command.withDescription(
      describe(
        "Stop the running daemon gracefully: calls in flight get the grace period, upstream servers are stopped, " +
          "and the socket and info file are removed. Exits 1 when no daemon is running.",
        "mcpx-fx stop"
      )
    )
  )
