/**
 * Where the bundled fixture programs live and how tests start them. Fixtures are TypeScript in
 * src/bin/, bundled by `npm run bundle` (run before every `npm test`) into dist/, and run with
 * plain `node`, exactly as an upstream server is run in the wild.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import * as Data from "effect/Data"

/** Absolute path of a bundled fixture, e.g. `fixtureScript("era-server")`. */
export const fixtureScript = (name: string): string => {
  const path = fileURLToPath(new URL(`../dist/${name}.js`, import.meta.url))
  if (!existsSync(path)) throw new Error(`fixture ${name} is not bundled at ${path}; run \`npm run bundle\``)
  return path
}

/** The command and arguments that start a fixture over stdio (for a server definition). */
export const stdioCommand = (name: string, args: ReadonlyArray<string> = []) => ({
  command: process.execPath,
  args: [fixtureScript(name), ...args]
})

/** A fixture failed to start or announce its URL. */
export class FixtureStartError extends Data.TaggedError("FixtureStartError")<{
  readonly fixture: string
  readonly reason: string
}> {}

/** A running HTTP fixture: its MCP endpoint URL and the child process. */
export interface HttpFixture {
  readonly url: string
  readonly process: ChildProcess
}

/**
 * Starts a fixture as an HTTP server on 127.0.0.1 with an ephemeral port. Every HTTP fixture
 * prints exactly one line on stdout once it listens: `{"url":"http://127.0.0.1:<port>/mcp"}`.
 * The process is killed when the scope closes.
 */
export const startHttpFixture = (
  name: string,
  args: ReadonlyArray<string> = []
): Effect.Effect<HttpFixture, FixtureStartError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<HttpFixture, FixtureStartError>((resume) => {
      const child = spawn(process.execPath, [fixtureScript(name), "--http", ...args], {
        stdio: ["ignore", "pipe", "pipe"]
      })
      let buffered = ""
      let stderr = ""
      const fail = (reason: string) => resume(Effect.fail(new FixtureStartError({ fixture: name, reason })))
      child.stderr?.on("data", (d: Buffer) => {
        stderr = (stderr + d.toString()).slice(-4000)
      })
      child.stdout?.on("data", (d: Buffer) => {
        buffered += d.toString()
        const nl = buffered.indexOf("\n")
        if (nl < 0) return
        try {
          const { url } = JSON.parse(buffered.slice(0, nl)) as { url: string }
          resume(Effect.succeed({ url, process: child }))
        } catch {
          fail(`unexpected first line: ${buffered.slice(0, nl)}`)
        }
      })
      child.on("exit", (code) => fail(`exited with ${code} before listening; stderr: ${stderr}`))
      return Effect.sync(() => child.kill("SIGKILL"))
    }),
    (f) =>
      Effect.async<void>((resume) => {
        if (f.process.exitCode !== null || f.process.signalCode !== null) return resume(Effect.void)
        f.process.once("exit", () => resume(Effect.void))
        f.process.kill("SIGTERM")
      })
  )
