/**
 * `mcpx-fx tools [namespace]`: every tool the configured servers offer, under the names hosts see.
 * Servers that cannot be listed are reported on stderr beside the others' tools, never hidden.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import type { ListingFailure } from "@mcpx-fx/gateway/Gateway"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"
import * as Output from "../Output.js"
import { UsageError } from "../UsageError.js"
import { globalsFrom } from "./Root.js"
import { withGateway } from "./Upstream.js"

const firstLine = (s: unknown): string => {
  const line = typeof s === "string" ? (s.split("\n")[0] ?? "") : ""
  return line.length > 90 ? `${line.slice(0, 87)}...` : line
}

const reportFailures = (failures: ReadonlyArray<ListingFailure>) =>
  Effect.forEach(failures, (f) => Console.error(`mcpx-fx: ${f.server}: ${f.message}`), { discard: true })

/** `mcpx-fx tools`. */
export const command = Command.make(
  "tools",
  {
    globals: GlobalOptions.options,
    namespace: Args.text({ name: "namespace" }).pipe(Args.withDescription("Only this server's tools."), Args.optional)
  },
  ({ globals, namespace }) =>
    Effect.gen(function*() {
      const options = yield* globalsFrom(globals)
      yield* withGateway(options, (gateway) =>
        Effect.gen(function*() {
          const only = Option.getOrUndefined(namespace)
          const servers = only === undefined
            ? gateway.servers
            : gateway.servers.filter((s) => s.namespace === only || s.name === only)
          if (only !== undefined && servers.length === 0) {
            const known = gateway.servers.map((s) => s.namespace).join(", ")
            return yield* new UsageError({ message: `unknown server ${JSON.stringify(only)}; configured: ${known || "(none)"}` })
          }
          const listing = yield* gateway.listTools({})
          const names = new Set(servers.map((s) => s.name))
          const failures = listing.failures.filter((f) => names.has(f.server))
          const tools = only === undefined
            ? listing.items
            : listing.items.filter((t) => servers.some((s) => !s.prefixed || String(t.name).startsWith(`${s.namespace}__`)))
          if (options.json) yield* Output.json({ tools, failures })
          else {
            yield* Output.text(
              tools.length === 0
                ? "(no tools)"
                : Output.table(["TOOL", "DESCRIPTION"], tools.map((t) => [String(t.name), firstLine(t.description)]))
            )
            yield* reportFailures(failures)
          }
          // Every server asked for failed: that is a failure of the command, not an empty list.
          if (failures.length > 0 && failures.length === servers.length) {
            return yield* new ListingFailed({ count: failures.length })
          }
        }))
    })
).pipe(
  Command.withDescription(
    describe(
      "List the tools of every configured server (or one), named as hosts see them: <namespace>__<tool>. " +
        "--json gives the full schemas and annotations.",
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
