/**
 * A real `mcpx-fx daemon` for end-to-end tests: started from the bundle in a sandbox on an
 * ephemeral loopback port with its own state directory, ready once it has printed where it listens
 * (its `--json` line), and stopped with SIGTERM when the scope closes.
 */
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type ChildProcess, spawn } from "node:child_process"
import { bundle, type Sandbox } from "./Sandbox.js"

/** The daemon did not come up: what it printed instead, or how it exited. */
export class DaemonStartError extends Data.TaggedError("DaemonStartError")<{ readonly detail: string }> {
  override get message(): string {
    return this.detail
  }
}

/** What the daemon printed about itself (the same as its daemon.json). */
export interface DaemonInfo {
  readonly pid: number
  readonly version: string
  readonly url: string
  readonly mcp: string
  readonly socket: string
  readonly startedAt: string
  readonly configFiles: ReadonlyArray<string>
}

/** A running daemon. */
export interface Daemon {
  readonly info: DaemonInfo
  readonly child: ChildProcess
  /** The state directory (MCPX_STATE_DIR) it runs with; pass it to CLI runs that should find it. */
  readonly stateDir: string
  /** Everything it wrote on stderr so far. */
  readonly stderr: () => string
  /** The exit code (or the signal's name) once it has exited. */
  readonly exited: Effect.Effect<number | string>
  /** Sends a signal and resolves with the exit code (or the signal's name) once it has exited. */
  readonly stop: (signal?: NodeJS.Signals) => Effect.Effect<number | string>
}

/** How to start it. */
export interface DaemonOptions {
  readonly config: string
  readonly stateDir?: string
  readonly args?: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, string>>
}

const exited = (child: ChildProcess): Effect.Effect<number | string> =>
  Effect.async<number | string>((resume) => {
    if (child.exitCode !== null) return resume(Effect.succeed(child.exitCode))
    if (child.signalCode !== null) return resume(Effect.succeed(child.signalCode))
    child.once("exit", (code, signal) => resume(Effect.succeed(code ?? signal ?? -1)))
  })

/**
 * Starts a daemon and waits for its address. Fails with what it printed if it exits first;
 * stopped (SIGTERM, then SIGKILL if it hangs) when the scope closes.
 */
export const start = (sandbox: Sandbox, options: DaemonOptions): Effect.Effect<Daemon, DaemonStartError, Scope.Scope> =>
  Effect.gen(function*() {
    const stateDir = options.stateDir ?? sandbox.path("state")
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: sandbox.home,
      XDG_CONFIG_HOME: sandbox.path("home", ".config"),
      MCPX_STATE_DIR: stateDir,
      ...options.env
    }
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(
          process.execPath,
          [bundle, "daemon", "--json", "--config", options.config, "--daemon-port", "0", ...(options.args ?? [])],
          { cwd: sandbox.root, env, stdio: ["ignore", "pipe", "pipe"] }
        )
      ),
      (child) =>
        child.exitCode !== null || child.signalCode !== null
          ? Effect.void
          : Effect.asVoid(Effect.zipRight(
            Effect.sync(() => {
              child.kill("SIGTERM")
              // A daemon that ignores SIGTERM must not outlive the test run. A Node timer, not
              // Effect.sleep: finalizers are uninterruptible and tests run on the TestClock.
              setTimeout(() => child.kill("SIGKILL"), 20_000).unref()
            }),
            exited(child)
          ))
    )
    let stderr = ""
    child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()))
    const ready = yield* Deferred.make<DaemonInfo, DaemonStartError>()
    let stdout = ""
    child.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString()
      const nl = stdout.indexOf("\n")
      if (nl >= 0) {
        try {
          Deferred.unsafeDone(ready, Effect.succeed(JSON.parse(stdout.slice(0, nl)) as DaemonInfo))
        } catch {
          Deferred.unsafeDone(ready, Effect.fail(new DaemonStartError({ detail: `daemon printed ${stdout.slice(0, nl)}` })))
        }
      }
    })
    child.once("exit", (code, signal) =>
      Deferred.unsafeDone(ready, Effect.fail(new DaemonStartError({ detail: `daemon exited (${signal ?? code}) before listening: ${stderr}` }))))
    const info = yield* Deferred.await(ready)
    return {
      info,
      child,
      stateDir,
      stderr: () =>
        stderr,
      exited: exited(child),
      stop: (signal = "SIGTERM") => Effect.zipRight(Effect.sync(() => child.kill(signal)), exited(child))
    } satisfies Daemon
  })
