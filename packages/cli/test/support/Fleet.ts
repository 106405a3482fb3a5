/**
 * `scripts/fleet.mjs` (`npm run fleet`) for end-to-end tests: N daemons of the bundle on one
 * PostgreSQL task store and NATS, behind nginx on loopback, started in a sandbox and ready once the
 * script prints its one JSON line; stopped with SIGTERM (which stops everything it started) when
 * the scope closes. The fleet's secret is the test's, so a daemon the test starts itself can join.
 */
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { fileURLToPath } from "node:url"
import * as DaemonProcess from "./DaemonProcess.js"
import * as DebianPackage from "./DebianPackage.js"
import * as Nginx from "./Nginx.js"
import type { Sandbox } from "./Sandbox.js"

export const Script = fileURLToPath(new URL("../../../../scripts/fleet.mjs", import.meta.url))

/** What the script prints once everything answers. */
export const FleetInfo = Schema.Struct({
  url: Schema.String,
  instances: Schema.Array(Schema.Struct({ pid: Schema.Number, port: Schema.Number, name: Schema.String })),
  nginx: Schema.Struct({ pid: Schema.Number, port: Schema.Number }),
  fleet: Schema.Struct({ name: Schema.String, nats: Schema.String, store: Schema.String }),
  dir: Schema.String
})
export type FleetInfo = typeof FleetInfo.Type

/** The fleet did not come up. */
export class FleetError extends Data.TaggedError("FleetError")<{ readonly detail: string }> {
  override get message(): string {
    return this.detail
  }
}

/** A running fleet. */
export interface Fleet {
  readonly info: FleetInfo
  /** nginx's `/mcp`. */
  readonly url: string
  /** Instance `name`'s own `/mcp`. */
  readonly mcp: (name: string) => string
  /** Instance `name`'s own origin (for `/v1` and `/metrics`). */
  readonly origin: (name: string) => string
  /** What the script wrote on stderr so far (it notes each daemon that exits). */
  readonly stderr: () => string
  /** SIGKILLs instance `name`; resolves once the script has seen it exit. */
  readonly kill: (name: string) => Effect.Effect<void>
  /** Starts one more daemon `name` with the fleet's settings, outside nginx; stopped with the scope. */
  readonly join: (name: string) => Effect.Effect<DaemonProcess.Daemon, DaemonProcess.DaemonStartError, Scope.Scope>
}

const exited = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
  })

/** Resolves once `child`'s stderr so far satisfies `seen`. */
const stderrShows = (child: ChildProcess, text: () => string, seen: (s: string) => boolean) =>
  Effect.async<void>((resume) => {
    if (seen(text())) return resume(Effect.void)
    const check = () => {
      if (!seen(text())) return
      child.stderr?.off("data", check)
      resume(Effect.void)
    }
    child.stderr?.on("data", check)
    return Effect.sync(() => child.stderr?.off("data", check))
  })

/** Starts `--instances n` daemons with `config` (a file in the sandbox). */
export const start = (sandbox: Sandbox, config: string, instances: number): Effect.Effect<Fleet, FleetError | DebianPackage.PackageError, Scope.Scope> =>
  Effect.gen(function*() {
    yield* Nginx.ensureInstalled
    const secret = randomBytes(32).toString("base64url")
    const env = { PATH: process.env.PATH ?? "", HOME: sandbox.home, XDG_CONFIG_HOME: sandbox.path("home", ".config"), MCPX_FLEET_SECRET: secret }
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, [Script, "--instances", String(instances), "--config", config], {
          cwd: sandbox.root,
          env,
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      (child) =>
        Effect.zipRight(
          Effect.sync(() => {
            child.kill("SIGTERM")
            // A Node timer: finalizers are uninterruptible and the fleet must not outlive the run.
            setTimeout(() => child.kill("SIGKILL"), 30_000).unref()
          }),
          exited(child)
        )
    )
    let stderr = ""
    child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()))
    const ready = yield* Deferred.make<string, FleetError>()
    let stdout = ""
    child.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString()
      const nl = stdout.indexOf("\n")
      if (nl >= 0) Deferred.unsafeDone(ready, Effect.succeed(stdout.slice(0, nl)))
    })
    child.once(
      "exit",
      (code, signal) =>
        Deferred.unsafeDone(ready, Effect.fail(new FleetError({ detail: `the fleet script exited (${signal ?? code}) before it was ready: ${stderr}` })))
    )
    const line = yield* Deferred.await(ready).pipe(
      Effect.timeoutFail({ duration: "90 seconds", onTimeout: () => new FleetError({ detail: `the fleet was not ready within 90s: ${stderr}` }) })
    )
    const info = yield* Schema.decodeUnknown(Schema.parseJson(FleetInfo))(line).pipe(
      Effect.mapError((e) => new FleetError({ detail: `the fleet script printed ${line}: ${e.message}` }))
    )
    const instance = (name: string) => {
      const found = info.instances.find((i) => i.name === name)
      if (found === undefined) throw new Error(`no instance ${name} in ${JSON.stringify(info.instances)}`)
      return found
    }
    const port = (name: string) => instance(name).port
    return {
      info,
      url: info.url,
      mcp: (name) => `http://127.0.0.1:${port(name)}/mcp`,
      origin: (name) => `http://127.0.0.1:${port(name)}`,
      stderr: () => stderr,
      kill: (name) =>
        Effect.zipRight(
          Effect.sync(() => process.kill(instance(name).pid, "SIGKILL")),
          stderrShows(child, () => stderr, (s) => s.includes(`daemon ${name} (pid`) && /exited \(SIGKILL\)/.test(s))
        ),
      join: (name) =>
        DaemonProcess.start(sandbox, {
          config,
          stateDir: sandbox.path(`state-${name}`),
          env: {
            MCPX_TASKS_STORE: info.fleet.store,
            MCPX_FLEET_NATS: info.fleet.nats,
            MCPX_FLEET_SECRET: secret,
            MCPX_FLEET_NAME: info.fleet.name,
            MCPX_FLEET_INSTANCE: name
          }
        })
    } satisfies Fleet
  })
