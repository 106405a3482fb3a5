/**
 * `mcpx-fx ui`: prints the address of the running daemon's live page with the owner secret in its
 * fragment (`http://127.0.0.1:7717/ui#owner=…`). A fragment is never sent to a server, so the
 * secret reaches no log and no Referer; the page keeps it in memory and proves with it that it is
 * the owner's (OwnerAccess.ts). The secret is new at each daemon start, so an old address stops
 * working with the daemon that printed it.
 */
import * as Command from "@effect/cli/Command"
import * as DaemonFiles from "@mcpx-fx/daemon/DaemonFiles"
import * as OwnerSecret from "@mcpx-fx/daemon/OwnerSecret"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as DaemonClient from "../DaemonClient.js"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"
import * as Output from "../Output.js"
import { globalsFrom } from "./Root.js"
import { NotRunning } from "./Status.js"

/** The daemon runs but its owner secret is not there: it predates the live page, or the file was removed. */
export class NoOwnerSecret extends Data.TaggedError("NoOwnerSecret")<{ readonly stateDir: string }> {
  override get message(): string {
    return `the daemon has no owner secret in ${this.stateDir} (owner.secret); restart it with \`mcpx-fx stop\` and \`mcpx-fx daemon\``
  }
}

/**
 * The address a browser on this machine reaches the daemon at: one bound to every interface is
 * reached on loopback, where the owner secret counts.
 */
export const pageBase = (url: string): string => {
  const parsed = new URL(url)
  if (parsed.hostname === "0.0.0.0") parsed.hostname = "127.0.0.1"
  if (parsed.hostname === "[::]") parsed.hostname = "[::1]"
  return parsed.origin
}

/** `mcpx-fx ui`. */
export const command = Command.make("ui", { globals: GlobalOptions.options }, ({ globals }) =>
  Effect.gen(function*() {
    const options = yield* globalsFrom(globals)
    const files = yield* Effect.provide(DaemonFiles.paths, DaemonClient.stateDir)
    const info = yield* DaemonClient.running
    if (Option.isNone(info)) return yield* new NotRunning({ stateDir: files.stateDir })
    const secret = yield* Effect.provide(OwnerSecret.read, DaemonClient.stateDir)
    if (Option.isNone(secret)) return yield* new NoOwnerSecret({ stateDir: files.stateDir })
    const url = `${pageBase(info.value.url)}/ui#owner=${secret.value}`
    if (options.json) yield* Output.json({ url, pid: info.value.pid })
    else yield* Output.text(url)
  })).pipe(
    Command.withDescription(
      describe(
        "Print the address of the running daemon's live page: servers with their era and health, recent calls, " +
          "pending questions to answer, tasks and the event stream. The address carries the owner secret (new at each " +
          "daemon start) in its fragment, which makes the page the owner's; keep it to yourself. Exits 1 when no " +
          "daemon is running.",
        "mcpx-fx ui"
      )
    )
  )
