/**
 * A stdio upstream's process on node:child_process itself, read and written through the node
 * streams. The platform's Command gives stdout and stdin as a Stream and a Sink, which ran a
 * channel's worth of Effect operations (and a write-callback wait) for every chunk in each
 * direction: about twenty operations of a call (docs/performance.md). Here a chunk of stdout is
 * handed to the transport in place, and frames for stdin are gathered and written once per turn
 * of the event loop (under load, one pipe write for many calls).
 *
 * What the platform did for a spawn is kept: a working directory that is not there is told apart
 * from a command that is not, the process leads a process group of its own (detached), its
 * environment is ours plus the definition's, and a scope that closes with it still running
 * SIGTERMs its group.
 */
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { statSync } from "node:fs"
import * as ProcessTable from "../../os/ProcessTable.js"

/** Why a spawn failed, as the transport words it for the config that named the command. */
export interface SpawnError {
  /** `cwd` when the working directory is missing or not a directory; `spawn` for the command. */
  readonly step: "cwd" | "spawn"
  /** The system error code (ENOENT, EACCES, …), when there is one. */
  readonly code: string | undefined
  readonly message: string
}

/** What the process is told and tells. */
export interface ChildHandlers {
  readonly onStdout: (bytes: Buffer) => void
  /** stdout ended or failed: nothing more will come from it. */
  readonly onStdoutEnd: () => void
  readonly onStderr: (text: string) => void
  /** stdin could not be written (the process is gone): later writes are dropped. */
  readonly onStdinError: (error: Error) => void
}

/** A started process. */
export interface Child {
  readonly pid: number
  /** Queues `text` for stdin; it goes out with everything else queued in this turn. */
  readonly write: (text: string) => void
  /** What waits to reach the process's stdin, in characters: queued here and buffered by the pipe. */
  readonly pending: () => number
  /** Ends stdin once what is queued has been written: the polite way to ask a server to leave. */
  readonly endStdin: () => void
  /** Stops reading stdout (a line past the size cap). */
  readonly stopReading: () => void
  /** The exit code once the process has exited; null when a signal ended it. */
  readonly exitCode: Effect.Effect<number | null>
  /** Signals the process itself (not its group); waits for it to exit. */
  readonly kill: (signal: NodeJS.Signals) => Effect.Effect<void>
  /**
   * Lets the process go: its pipes are closed on this side and its handle no longer keeps this
   * process alive, so this one may exit while the child finishes (or is stopped) on its own.
   */
  readonly release: () => void
}

const errorCode = (e: unknown): string | undefined => {
  const code = (e as { readonly code?: unknown } | null)?.code
  return typeof code === "string" ? code : undefined
}

/** This process's environment without the `withheld` names. */
const inherited = (withheld: ReadonlyArray<string>): NodeJS.ProcessEnv => {
  if (withheld.length === 0) return process.env
  const env = { ...process.env }
  for (const name of withheld) delete env[name]
  return env
}

/**
 * Spawns `command` with `args` in its own process group. Fails with the SpawnError once the
 * system refuses it; the scope's close SIGTERMs the group if the process still runs then (the
 * transport's own stop, registered later, runs first and normally leaves nothing to do).
 */
export const spawnChild = (
  command: string,
  args: ReadonlyArray<string>,
  options: {
    /** Set on top of what is inherited. */
    readonly env: Record<string, string>
    /** Names of this process's environment not inherited (`env` may still set them). */
    readonly withheld?: ReadonlyArray<string>
    readonly cwd?: string | undefined
    readonly killGrace: Duration.DurationInput
  },
  handlers: ChildHandlers
): Effect.Effect<Child, SpawnError, Scope.Scope> =>
  Effect.gen(function*() {
    const cwd = options.cwd
    if (cwd !== undefined) {
      const missing = (() => {
        try {
          return statSync(cwd).isDirectory() ? undefined : `${cwd} is not a directory`
        } catch (e) {
          return e instanceof Error ? e.message : String(e)
        }
      })()
      if (missing !== undefined) return yield* Effect.fail<SpawnError>({ step: "cwd", code: "ENOENT", message: missing })
    }
    const exited = yield* Deferred.make<number | null>()
    let released = false
    const handle = yield* Effect.acquireRelease(
      Effect.async<ChildProcessWithoutNullStreams, SpawnError>((resume) => {
        const child = spawn(command, [...args], {
          stdio: ["pipe", "pipe", "pipe"],
          cwd,
          env: { ...inherited(options.withheld ?? []), ...options.env },
          detached: process.platform !== "win32"
        })
        const onError = (e: Error) => {
          child.off("spawn", onSpawn)
          resume(Effect.fail({ step: "spawn", code: errorCode(e), message: e.message }))
        }
        const onSpawn = () => {
          child.off("error", onError)
          resume(Effect.succeed(child))
        }
        child.once("error", onError)
        child.once("spawn", onSpawn)
        child.on("exit", (code) => Deferred.unsafeDone(exited, Effect.succeed(code)))
      }),
      (child) =>
        Effect.suspend(() => {
          if (released || child.exitCode !== null || child.signalCode !== null) return Effect.void
          if (child.pid !== undefined && !ProcessTable.signalGroup(child.pid, "SIGTERM")) child.kill("SIGTERM")
          return Effect.ignore(Effect.timeout(Deferred.await(exited), options.killGrace))
        })
    )
    // A process that fails after its spawn (EPIPE on a closed pipe, a read error) must not throw
    // in the daemon: every stream gets a listener.
    handle.on("error", () => {})
    handle.stdin.on("error", handlers.onStdinError)
    handle.stdout.on("data", handlers.onStdout)
    let ended = false
    const endOnce = () => {
      if (ended) return
      ended = true
      handlers.onStdoutEnd()
    }
    handle.stdout.once("end", endOnce)
    handle.stdout.once("close", endOnce)
    handle.stdout.on("error", endOnce)
    handle.stderr.setEncoding("utf8")
    handle.stderr.on("data", handlers.onStderr)
    handle.stderr.on("error", () => {})

    let queued: Array<string> = []
    let queuedChars = 0
    let flushing = false
    let ending = false
    const flush = () => {
      flushing = false
      if (queued.length > 0 && handle.stdin.writable) handle.stdin.write(queued.length === 1 ? queued[0]! : queued.join(""))
      queued = []
      queuedChars = 0
      if (ending) handle.stdin.end()
    }
    const schedule = () => {
      if (flushing) return
      flushing = true
      setImmediate(flush)
    }
    return {
      pid: handle.pid!,
      write: (text) => {
        if (ending) return
        queued.push(text)
        queuedChars += text.length
        schedule()
      },
      pending: () => queuedChars + handle.stdin.writableLength,
      endStdin: () => {
        if (ending) return
        ending = true
        schedule()
      },
      stopReading: () => {
        handle.stdout.off("data", handlers.onStdout)
        handle.stdout.destroy()
      },
      exitCode: Deferred.await(exited),
      kill: (signal) =>
        Effect.suspend(() => {
          if (handle.exitCode === null && handle.signalCode === null) handle.kill(signal)
          return Effect.asVoid(Deferred.await(exited))
        }),
      release: () => {
        released = true
        handle.stdout.destroy()
        handle.stderr.destroy()
        handle.unref()
      }
    } satisfies Child
  })

// The reaper's whole program: wait for group `pgid` to leave for `grace` ms, SIGTERM it, wait
// again, SIGKILL what is left. Plain JavaScript for `node -e`: it outlives the command that started it.
const Reaper = `
const [pgid, grace] = process.argv.slice(1).map(Number)
const alive = () => { try { process.kill(-pgid, 0); return true } catch (e) { return e.code === "EPERM" } }
const signal = (s) => { try { process.kill(-pgid, s) } catch {} }
const within = (ms, then) => {
  const until = Date.now() + ms
  const poll = setInterval(() => {
    if (!alive()) { clearInterval(poll); process.exit(0) }
    if (Date.now() >= until) { clearInterval(poll); then() }
  }, 25)
}
within(grace, () => { signal("SIGTERM"); within(grace, () => { signal("SIGKILL"); process.exit(0) }) })
`

/**
 * Hands group `pgid`, whose stdin is closed, to a detached reaper that stops it as the transport
 * would (a grace, SIGTERM, another grace, SIGKILL) once this process has exited: a one-shot
 * command prints its answer and leaves without waiting for a server that stays up after EOF.
 */
export const reapDetached = (pgid: number, graceMs: number): void => {
  try {
    spawn(process.execPath, ["-e", Reaper, String(pgid), String(graceMs)], { detached: true, stdio: "ignore" }).unref()
  } catch {
    // No reaper could be started: the group is signalled now rather than left running.
    try {
      process.kill(-pgid, "SIGTERM")
    } catch {
      // Gone already.
    }
  }
}
