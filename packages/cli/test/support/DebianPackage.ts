/**
 * A Debian package an end-to-end test needs (nginx, Prometheus): installed with apt-get when its
 * binary is missing (the test machines run as root), so a test is never skipped for want of it.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import { existsSync } from "node:fs"

/** The package could not be installed. */
export class PackageError extends Data.TaggedError("PackageError")<{ readonly detail: string }> {
  override get message(): string {
    return this.detail
  }
}

const run = (command: string, args: ReadonlyArray<string>) =>
  Effect.async<string, PackageError>((resume) => {
    // RUNLEVEL=1 keeps the package's maintainer scripts from starting a system-wide service.
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive", RUNLEVEL: "1" }
    execFile(command, [...args], { env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resume(
        error === null
          ? Effect.succeed(stdout)
          : Effect.fail(new PackageError({ detail: `${command} ${args.join(" ")} failed: ${error.message}\n${stderr.slice(-2000)}` }))
      ))
  })

/** Installs `pkg` unless `binary` is there. */
export const ensure = (binary: string, pkg: string): Effect.Effect<void, PackageError> =>
  Effect.suspend(() => {
    if (existsSync(binary)) return Effect.void
    const install = run("apt-get", ["install", "-y", "--no-install-recommends", pkg])
    // An image whose package lists were never fetched knows no such package until they are.
    return install.pipe(
      Effect.orElse(() => Effect.zipRight(run("apt-get", ["update"]), install)),
      Effect.flatMap(() => existsSync(binary) ? Effect.void : Effect.fail(new PackageError({ detail: `apt-get installed ${pkg} but ${binary} is missing` }))),
      Effect.mapError((e) => new PackageError({ detail: `could not install ${pkg} (apt-get install -y ${pkg}): ${e.detail}` }))
    )
  })
