/**
 * Headless Chromium for browser tests, driven by playwright-core (which brings no browser of its
 * own): Debian's `/usr/bin/chromium`, installed with apt-get when it is missing. A failed install
 * fails the test with what apt-get said; a browser test is never skipped for want of a browser.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import * as fs from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { type BrowserContext, chromium } from "playwright-core"

/** Where Debian's chromium package puts the browser. */
export const ExecutablePath = "/usr/bin/chromium"

/** Chromium is not there and could not be installed. */
export class ChromiumMissing extends Data.TaggedError("ChromiumMissing")<{ readonly detail: string }> {
  override get message(): string {
    return `${ExecutablePath} is missing and \`apt-get install -y chromium\` failed: ${this.detail}`
  }
}

const apt = (args: ReadonlyArray<string>) =>
  execFileSync("apt-get", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } })

/** Installs Debian's chromium unless it is there (the package lists are updated once if the first try fails). */
export const ensure: Effect.Effect<string, ChromiumMissing> = Effect.suspend(() => {
  if (existsSync(ExecutablePath)) return Effect.succeed(ExecutablePath)
  return Effect.try({
    try: () => {
      try {
        apt(["install", "-y", "chromium"])
      } catch {
        apt(["update"])
        apt(["install", "-y", "chromium"])
      }
      if (!existsSync(ExecutablePath)) throw new Error(`the package installed, but ${ExecutablePath} is not there`)
      return ExecutablePath
    },
    catch: (e) => new ChromiumMissing({ detail: e instanceof Error ? `${e.message}${"stderr" in e ? `\n${String(e.stderr)}` : ""}` : String(e) })
  })
})

/** The flags every launch gets: headless, and nothing that reaches out to the network by itself. */
export const Args: ReadonlyArray<string> = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

/** A browser with a fresh profile in a temp directory, closed (and the profile removed) with the scope. */
export const launch: Effect.Effect<BrowserContext, ChromiumMissing, Scope.Scope> = Effect.gen(function*() {
  const executablePath = yield* ensure
  const profile = yield* Effect.acquireRelease(
    Effect.promise(() => fs.mkdtemp(path.join(tmpdir(), "mcpx-fx-chromium-"))),
    (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
  )
  return yield* Effect.acquireRelease(
    Effect.promise(() => chromium.launchPersistentContext(profile, { executablePath, headless: true, args: [...Args] })),
    (context) => Effect.promise(() => context.close())
  )
})
