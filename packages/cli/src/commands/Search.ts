/**
 * `mcpx-fx search <terms...>`: the tools whose name, namespace or description match, best first —
 * what a host's `mcpx_search` meta-tool answers. Servers that were never listed (not started, and
 * not in the schema cache) are not started for it unless `--refresh`; they are named on stderr.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as ToolSearch from "@mcpx-fx/gateway/ToolSearch"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"
import * as Output from "../Output.js"
import * as ViaDaemon from "../ViaDaemon.js"
import { loadShapes } from "./LazyApi.js"
import { globalsFrom } from "./Root.js"
import { withGateway } from "./Upstream.js"

const limitOption = Options.integer("limit").pipe(
  Options.withDescription(`How many results (default ${ToolSearch.DefaultLimit}, at most ${ToolSearch.MaxLimit}).`),
  Options.optional
)

const refreshOption = Options.boolean("refresh").pipe(
  Options.withDescription("Also list the servers never listed before, starting them (slower).")
)

/** `mcpx-fx search`. */
export const command = Command.make(
  "search",
  {
    globals: GlobalOptions.options,
    local: ViaDaemon.localOption,
    limit: limitOption,
    refresh: refreshOption,
    terms: Args.text({ name: "terms" }).pipe(Args.withDescription("Words to look for."), Args.repeated)
  },
  ({ globals, limit, local, refresh, terms }) =>
    Effect.gen(function*() {
      const options = yield* globalsFrom(globals)
      const { ApiBodies, ApiShaping } = yield* loadShapes
      const query = {
        q: terms.join(" "),
        ...(Option.isSome(limit) ? { limit: Math.min(ToolSearch.MaxLimit, Math.max(1, limit.value)) } : {}),
        ...(refresh ? { refresh: true } : {})
      }
      const found = yield* ViaDaemon.orInProcess(options, local, {
        // Starting servers is a POST's to do; a plain search stays a GET.
        daemon: (client) => refresh ? client.tools.searchFresh({ payload: query }) : client.tools.search({ urlParams: query }),
        inProcess: withGateway(options, (gateway) => ApiShaping.searchTools(gateway, query))
      })
      if (options.json) return yield* ViaDaemon.printJson(ApiBodies.SearchListing, found)
      yield* Output.text(
        found.tools.length === 0
          ? "(no tool matched)"
          : Output.table(
            ["TOOL", "DESCRIPTION"],
            found.tools.map((t) => [t.name, t.description.length > 90 ? `${t.description.slice(0, 87)}...` : t.description])
          )
      )
      if (found.unlisted.length > 0) {
        yield* Console.error(`mcpx-fx: not searched, never listed: ${found.unlisted.join(", ")} (--refresh lists them)`)
      }
      for (const f of found.failures) yield* Console.error(`mcpx-fx: ${f.server}: ${f.message}`)
    })
).pipe(
  Command.withDescription(
    describe(
      "Search the tools of every configured server by name, namespace and description, best first (exact name, " +
        "prefix, substring, namespace, description). Servers never listed are only started with --refresh. " +
        ViaDaemon.helpNote,
      "mcpx-fx search github issues --limit 5"
    )
  )
)
