/**
 * `mcpx-fx tools [namespace]`: every tool the configured servers offer, under the names hosts see.
 * Servers that cannot be listed are reported on stderr beside the others' tools, never hidden.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import type * as ApiBodies from "@mcpx-fx/daemon/ApiBodies"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"
import * as Output from "../Output.js"
import { UsageError } from "../UsageError.js"
import * as ViaDaemon from "../ViaDaemon.js"
import { loadShapes } from "./LazyApi.js"
import { globalsFrom } from "./Root.js"
import { withGateway } from "./Upstream.js"

const firstLine = (s: unknown): string => {
  const line = typeof s === "string" ? (s.split("\n")[0] ?? "") : ""
  return line.length > 90 ? `${line.slice(0, 87)}...` : line
}

type Listing = typeof ApiBodies.ToolsListing.Type

// In process the gateway has logged the pattern warnings on stderr already; a daemon logs them in
// its own log, so they are printed here.
const reportFailures = (listing: Listing, remote: boolean) =>
  Effect.forEach(
    [
      ...listing.failures.map((f) => `${f.server}: ${f.message}`),
      ...(remote ? listing.warnings ?? [] : []).map((w) => `warning: ${w.server}: ${w.message}`)
    ],
    (line) => Console.error(`mcpx-fx: ${line}`),
    { discard: true }
  )

type Named = ReadonlyArray<{ readonly name: string; readonly namespace: string }>

/**
 * How many servers `tools [ns]` asks about: all of them, or the one named by namespace or name.
 * Checked here, against the configured list, so an unknown name is refused with that list whichever
 * route answers.
 */
const asked = (servers: Named, only: string | undefined): Effect.Effect<number, UsageError> => {
  if (only === undefined) return Effect.succeed(servers.length)
  const count = servers.filter((s) => s.namespace === only || s.name === only).length
  if (count > 0) return Effect.succeed(count)
  const known = servers.map((s) => s.namespace).join(", ")
  return Effect.fail(new UsageError({ message: `unknown server ${JSON.stringify(only)}; configured: ${known || "(none)"}` }))
}

/** `mcpx-fx tools`. */
export const command = Command.make(
  "tools",
  {
    globals: GlobalOptions.options,
    local: ViaDaemon.localOption,
    namespace: Args.text({ name: "namespace" }).pipe(Args.withDescription("Only this server's tools."), Args.optional)
  },
  ({ globals, local, namespace }) =>
    Effect.gen(function*() {
      const options = yield* globalsFrom(globals)
      const { ApiBodies, ApiShaping } = yield* loadShapes
      const only = Option.getOrUndefined(namespace)
      const { count, listing, remote } = yield* ViaDaemon.orInProcess(options, local, {
        daemon: (client) =>
          Effect.gen(function*() {
            const count = yield* asked((yield* client.system.servers()).servers, only)
            const listing: Listing = yield* client.tools.list({ urlParams: only === undefined ? {} : { ns: only } })
            return { count, listing, remote: true }
          }),
        inProcess: withGateway(options, (gateway) =>
          Effect.gen(function*() {
            const count = yield* asked(gateway.servers, only)
            const listing: Listing = yield* ApiShaping.toolsListing(gateway, only)
            return { count, listing, remote: false }
          }))
      })
      const { failures, tools } = listing
      if (options.json) yield* ViaDaemon.printJson(ApiBodies.ToolsListing, listing)
      else {
        yield* Output.text(
          tools.length === 0
            ? "(no tools)"
            : Output.table(["TOOL", "DESCRIPTION"], tools.map((t) => [String(t.name), firstLine(t.description)]))
        )
        yield* reportFailures(listing, remote)
      }
      // Every server asked for failed: that is a failure of the command, not an empty list.
      if (failures.length > 0 && failures.length === count) {
        return yield* new ListingFailed({ count: failures.length })
      }
    })
).pipe(
  Command.withDescription(
    describe(
      "List the tools of every configured server (or one), named as hosts see them: <namespace>__<tool>. " +
        "--json gives the full schemas and annotations. " + ViaDaemon.helpNote,
      "mcpx-fx tools github --json"
    )
  )
)

/** No server could be listed; the reasons were already printed. */
export class ListingFailed extends Data.TaggedError("ListingFailed")<{ readonly count: number }> {
  override get message(): string {
    return `no server could be listed (${this.count} failed)`
  }
}
