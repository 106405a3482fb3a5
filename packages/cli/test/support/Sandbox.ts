/**
 * End-to-end harness: runs the bundled CLI (`node packages/cli/dist/mcpx-fx.js`) as a child
 * process in a throwaway directory tree with an environment built from nothing, so neither the
 * developer's config files nor their MCPX_* variables can leak into a test.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import * as fs from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The bundle `node scripts/bundle.mjs` writes (`npm test` runs it first, as pretest). */
export const bundle = fileURLToPath(new URL("../../dist/mcpx-fx.js", import.meta.url))

/** What one run of the CLI printed and how it exited. */
export interface Run {
  readonly stdout: string
  readonly stderr: string
  readonly code: number
}

/** Options of one run. */
export interface RunOptions {
  /** Working directory, relative to the sandbox root (default: the root). */
  readonly cwd?: string
  /** Variables added to the sandbox's base environment (PATH, HOME, XDG_CONFIG_HOME). */
  readonly env?: Readonly<Record<string, string>>
  /** What the command reads on stdin (default: nothing, stdin closed). */
  readonly stdin?: string
}

/** A temporary directory tree with a home directory inside it. */
export interface Sandbox {
  /** The sandbox root (symlinks resolved, so it compares equal to the child's cwd). */
  readonly root: string
  /** `$HOME` of every run. */
  readonly home: string
  /** An absolute path inside the sandbox. */
  readonly path: (...segments: ReadonlyArray<string>) => string
  /** Writes a file (creating its directories), relative to the root; returns its absolute path. */
  readonly write: (file: string, content: string) => Effect.Effect<string>
  /** Writes a value as JSON. */
  readonly writeJson: (file: string, value: unknown) => Effect.Effect<string>
  /** Creates a directory relative to the root; returns its absolute path. */
  readonly mkdir: (dir: string) => Effect.Effect<string>
  /** Runs `mcpx-fx <args>`. */
  readonly run: (args: ReadonlyArray<string>, options?: RunOptions) => Effect.Effect<Run>
}

const exec = (args: ReadonlyArray<string>, cwd: string, env: Record<string, string>, stdin?: string): Effect.Effect<Run> =>
  Effect.async<Run>((resume) => {
    const child = execFile(
      process.execPath,
      [bundle, ...args],
      { cwd, env, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resume(Effect.succeed({ stdout, stderr, code }))
      }
    )
    // Without input the child's stdin is closed at once, as a non-interactive caller's would be.
    child.stdin?.end(stdin ?? "")
    return Effect.sync(() => child.kill())
  })

/** A fresh sandbox, removed when the scope closes. */
export const sandbox: Effect.Effect<Sandbox, never, Scope.Scope> = Effect.gen(function*() {
  if (!existsSync(bundle)) {
    return yield* Effect.dieMessage(`${bundle} is missing; run \`node scripts/bundle.mjs\` (npm test runs it as pretest)`)
  }
  const root = yield* Effect.acquireRelease(
    Effect.promise(async () => fs.realpath(await fs.mkdtemp(path.join(tmpdir(), "mcpx-fx-cli-")))),
    (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
  )
  const home = path.join(root, "home")
  yield* Effect.promise(() => fs.mkdir(home))
  const at = (...segments: ReadonlyArray<string>) => path.join(root, ...segments)
  const write = (file: string, content: string) =>
    Effect.promise(async () => {
      const full = at(file)
      await fs.mkdir(path.dirname(full), { recursive: true })
      await fs.writeFile(full, content)
      return full
    })
  const base = { PATH: process.env.PATH ?? "", HOME: home, XDG_CONFIG_HOME: path.join(home, ".config") }
  return {
    root,
    home,
    path: at,
    write,
    writeJson: (file, value) => write(file, JSON.stringify(value, null, 2)),
    mkdir: (dir) =>
      Effect.promise(async () => {
        await fs.mkdir(at(dir), { recursive: true })
        return at(dir)
      }),
    run: (args, options) => exec(args, at(options?.cwd ?? "."), { ...base, ...options?.env }, options?.stdin)
  } satisfies Sandbox
})

/** The words of a text, colour codes taken out (a pipe gets none; cli-usage tests that). */
export const plain = (s: string): string => s.replace(/\x1b\[[0-9;]*m/g, "")

/** The lines of a command's output, without the final newline. */
export const lines = (s: string): ReadonlyArray<string> => s.replace(/\n$/, "").split("\n")
