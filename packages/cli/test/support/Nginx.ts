/**
 * A stock nginx (Debian's `nginx-light`) for the fleet tests: installed with apt-get when missing,
 * as PrometheusServer.ts installs Prometheus. `scripts/fleet.mjs` finds it at /usr/sbin/nginx.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import { existsSync } from "node:fs"

export const Binary = "/usr/sbin/nginx"

/** nginx could not be installed. */
export class NginxError extends Data.TaggedError("NginxError")<{ readonly detail: string }> {
  override get message(): string {
    return this.detail
  }
}

const run = (command: string, args: ReadonlyArray<string>) =>
  Effect.async<string, NginxError>((resume) => {
    // RUNLEVEL=1 keeps the package's maintainer scripts from starting a system-wide nginx on port 80.
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive", RUNLEVEL: "1" }
    execFile(command, [...args], { env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resume(
        error === null
          ? Effect.succeed(stdout)
          : Effect.fail(new NginxError({ detail: `${command} ${args.join(" ")} failed: ${error.message}\n${stderr.slice(-2000)}` }))
      ))
  })

/** Installs Debian's `nginx-light` unless nginx is there (the test machine runs as root). */
export const ensureInstalled: Effect.Effect<void, NginxError> = Effect.suspend(() => {
  if (existsSync(Binary)) return Effect.void
  const install = run("apt-get", ["install", "-y", "--no-install-recommends", "nginx-light"])
  // An image whose package lists were never fetched knows no such package until they are.
  return install.pipe(
    Effect.orElse(() => Effect.zipRight(run("apt-get", ["update"]), install)),
    Effect.flatMap(() =>
      existsSync(Binary) ? Effect.void : Effect.fail(new NginxError({ detail: `apt-get installed nginx-light but ${Binary} is missing` }))
    ),
    Effect.mapError((e) => new NginxError({ detail: `could not install nginx (apt-get install -y nginx-light): ${e.detail}` }))
  )
})
