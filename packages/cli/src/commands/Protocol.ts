/**
 * `mcpx-fx protocol` and `mcpx-fx probe <namespace>`: which era each upstream speaks, how that was
 * decided, and — for probe — every step of deciding it again, ignoring the era cache. Both ask the
 * running daemon when there is one (a daemon's probe is a fresh start of its own, beside its pool,
 * with its settings), and run in-process otherwise.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import type * as ApiBodies from "@mcpx-fx/daemon/ApiBodies"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"
import * as Output from "../Output.js"
import * as ViaDaemon from "../ViaDaemon.js"
import { loadShapes } from "./LazyApi.js"
import { globalsFrom } from "./Root.js"
import { withGateway } from "./Upstream.js"

/** What `protocol --json` prints: the upstream half of `GET /v1/protocol`. */
const serversOf = (bodies: typeof ApiBodies) => Schema.Struct({ servers: Schema.Array(bodies.ProtocolServer) })
type Servers = ReturnType<typeof serversOf>["Type"]

const dash = (v: string | null | undefined): string => (v === null || v === undefined ? "-" : v)

/** `mcpx-fx protocol`. */
export const protocol = Command.make(
  "protocol",
  { globals: GlobalOptions.options, local: ViaDaemon.localOption },
  ({ globals, local }) =>
    Effect.gen(function*() {
      const options = yield* globalsFrom(globals)
      const { ApiBodies } = yield* loadShapes
      const rows: Servers["servers"] = yield* ViaDaemon.orInProcess(options, local, {
        daemon: (client) => Effect.map(client.system.protocol(), (report) => report.asClient.servers),
        inProcess: withGateway(options, (gateway) => gateway.protocol)
      })
      if (options.json) return yield* ViaDaemon.printJson(serversOf(ApiBodies), { servers: rows })
      yield* Output.text(
        Output.table(
          ["SERVER", "PREFERENCE", "ERA", "NEGOTIATED", "SOURCE", "CACHED"],
          rows.map((r) => [
            r.server,
            r.preference,
            dash(r.era),
            dash(r.negotiated),
            dash(r.eraSource),
            r.cached === null
              ? "-"
              : `${r.cached.era} ${r.cached.version} (${new Date(r.cached.at).toISOString()}${
                r.cached.transport !== undefined ? `, ${r.cached.transport}` : ""
              })`
          ])
        )
      )
    })
).pipe(
  Command.withDescription(
    describe(
      "Show, per upstream server, the effective upstream.protocol preference, the era and negotiated version of " +
        "its running session (none until it is used), how the era was decided (probe, cache, forced) and the era " +
        "cache's record. Over a running daemon the sessions are the daemon's own. " + ViaDaemon.helpNote,
      "mcpx-fx protocol --json"
    )
  )
)

/** `mcpx-fx probe`. */
export const probe = Command.make(
  "probe",
  {
    globals: GlobalOptions.options,
    local: ViaDaemon.localOption,
    namespace: Args.text({ name: "namespace" }).pipe(Args.withDescription("The server to probe."))
  },
  ({ globals, local, namespace }) =>
    Effect.gen(function*() {
      const options = yield* globalsFrom(globals)
      const { ApiBodies, ApiShaping } = yield* loadShapes
      const report = yield* ViaDaemon.orInProcess(options, local, {
        daemon: (client) => client.system.probe({ path: { server: namespace } }),
        inProcess: withGateway(options, (gateway) => ApiShaping.probeServer(gateway, namespace))
      })
      if (options.json) return yield* ViaDaemon.printJson(ApiBodies.ProbeResult, report)
      yield* Output.text(
        [
          `${report.server}: ${report.era} ${report.negotiated} over ${report.wire} (upstream.protocol=${report.preference}, ${report.durationMs}ms)`,
          ...report.steps.map((s) => `  ${s}`)
        ].join("\n")
      )
    })
).pipe(
  Command.withDescription(
    describe(
      "Probe one server now, ignoring the era cache, and print what was sent and what each answer meant. " +
        ViaDaemon.helpNote,
      "mcpx-fx probe github"
    )
  )
)
