/**
 * `mcpx-fx status`: whether a daemon runs for this state directory, where it listens, and what its
 * upstream servers are doing — asked of the daemon itself (`GET /v1/status` over the unix socket),
 * so the answer is the live one, not a file's.
 */
import * as Command from "@effect/cli/Command"
import type * as ApiBodies from "@mcpx-fx/daemon/ApiBodies"
import * as DaemonFiles from "@mcpx-fx/daemon/DaemonFiles"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as DaemonClient from "../DaemonClient.js"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"
import * as Output from "../Output.js"
import * as ViaDaemon from "../ViaDaemon.js"
import { loadShapes } from "./LazyApi.js"
import { globalsFrom } from "./Root.js"

/** No daemon runs for this state directory; exit 1 so scripts can test for one. */
export class NotRunning extends Data.TaggedError("NotRunning")<{ readonly stateDir: string }> {
  override get message(): string {
    return `no daemon is running for the state directory ${this.stateDir}`
  }
}

/** The daemon's files say it is alive but it did not answer over its socket. */
export class Unreachable extends Data.TaggedError("Unreachable")<{ readonly socket: string; readonly detail: string }> {
  override get message(): string {
    return `the daemon did not answer on ${this.socket}: ${this.detail}`
  }
}

type Instance = typeof ApiBodies.InstanceRow.Type

// A session by the era it speaks and the version it negotiated ("legacy 2025-11-25"); the pool
// lane it sits in is not its era (a legacy server's own session sits in the modern lane).
const instanceText = (i: Instance): string => i.state !== "ready" ? i.state : [i.era, i.negotiated].filter((part) => part !== undefined).join(" ") || "ready"

const instancesText = (instances: ReadonlyArray<Instance>) => instances.length === 0 ? "-" : instances.map(instanceText).join(", ")

/** The config files, and a refused reload while it stands (the daemon runs the configuration before it). */
const configLines = (config: typeof ApiBodies.Status.Type["config"], atStart: ReadonlyArray<string>): ReadonlyArray<string> => {
  const files = config?.files ?? atStart
  const lines = [`config    ${files.length === 0 ? "(none)" : files.join(", ")}`]
  if (config !== undefined && config.reloads > 0) {
    lines.push(`          reloaded ${config.reloads} time(s), last at ${new Date(config.loadedAt).toISOString()}`)
  }
  if (config?.error !== undefined) {
    lines.push(`          reload refused at ${new Date(config.error.at).toISOString()}; still running the previous config:`)
    lines.push(`          ${config.error.message}`)
  }
  return lines
}

/** `mcpx-fx status`. */
export const command = Command.make("status", { globals: GlobalOptions.options }, ({ globals }) =>
  Effect.gen(function*() {
    const options = yield* globalsFrom(globals)
    const files = yield* Effect.provide(DaemonFiles.paths, DaemonClient.stateDir)
    const info = yield* DaemonClient.running
    if (Option.isNone(info)) {
      if (options.json) yield* Output.json({ running: false, stateDir: files.stateDir })
      return yield* new NotRunning({ stateDir: files.stateDir })
    }
    const daemon = info.value
    const outcome = yield* ViaDaemon.reach(daemon, (client) => client.system.status())
    if (outcome._tag === "Unreachable") return yield* new Unreachable({ socket: daemon.socket, detail: outcome.detail })
    const status = outcome.value
    if (options.json) {
      const { ApiBodies } = yield* loadShapes
      const encoded = yield* Effect.orDie(Schema.encode(ApiBodies.Status)(status))
      return yield* Output.json({ running: true, ...daemon, status: encoded })
    }
    const servers = status.servers
    yield* Output.text([
      `daemon    pid ${daemon.pid}, mcpx-fx ${daemon.version}, since ${daemon.startedAt}`,
      `mcp       ${daemon.mcp}`,
      `api       ${daemon.url}/v1`,
      `socket    ${daemon.socket}`,
      ...configLines(status.config, daemon.configFiles),
      ...(servers.length === 0 ? [] : [
        "",
        Output.table(
          ["SERVER", "TRANSPORT", "PREFERENCE", "SESSIONS"],
          servers.map((s) => [s.name, s.transport, s.preference, instancesText(s.pool?.instances ?? [])])
        )
      ]),
      ...servers.flatMap((s) =>
        s.auth?.state === "needs-login"
          ? [`${s.name}: needs \`mcpx-fx auth login ${s.name}\`${s.auth.reason === undefined ? "" : ` (${s.auth.reason})`}`]
          : []
      )
    ].join("\n"))
  })).pipe(
    Command.withDescription(
      describe(
        "Show whether a daemon is running for this state directory, where it listens (/mcp for hosts, /v1 API, " +
          "unix socket), and its upstream servers. Exits 1 when none is running.",
        "mcpx-fx status --json"
      )
    )
  )
