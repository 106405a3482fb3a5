/**
 * `mcpx-fx call <namespace>.<tool> [json]`: calls one tool and prints what it said. Exit 1 when
 * the tool reports an error (`isError`), 2 for arguments that are not a JSON object or a tool
 * that does not exist (with the closest names).
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as ApiHandlers from "@mcpx-fx/gateway/ApiHandlers"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"
import * as Output from "../Output.js"
import { UsageError } from "../UsageError.js"
import * as ViaDaemon from "../ViaDaemon.js"
import { globalsFrom } from "./Root.js"
import { withGateway } from "./Upstream.js"

/** The tool answered with `isError: true`; what it said was printed. */
export class ToolReportedError extends Data.TaggedError("ToolReportedError")<{ readonly tool: string }> {
  override get message(): string {
    return `${this.tool} reported an error`
  }
}

const readStdin = Effect.async<string>((resume) => {
  const chunks: Array<Buffer> = []
  process.stdin.on("data", (c: Buffer) => chunks.push(c))
  process.stdin.on("end", () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8"))))
})

const parseArguments = (text: string, from: string) =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (e) => new UsageError({ message: `arguments from ${from} are not JSON: ${e instanceof Error ? e.message : String(e)}` })
  }).pipe(
    Effect.filterOrFail(isJsonObject, (v) =>
      new UsageError({ message: `arguments must be a JSON object, got ${Array.isArray(v) ? "an array" : typeof v}` }))
  )

const bytes = (b64: unknown): string => (typeof b64 === "string" ? `${Math.floor((b64.length * 3) / 4)} bytes` : "")

/** Text for a person: text blocks as they are, other blocks as a one-line description. */
export const render = (result: JsonObject): string => {
  const content = Array.isArray(result.content) ? result.content.filter(isJsonObject) : []
  const parts = content.map((c) => {
    switch (c.type) {
      case "text":
        return String(c.text ?? "")
      case "image":
      case "audio":
        return `[${c.type} ${String(c.mimeType ?? "")}, ${bytes(c.data)}]`
      case "resource": {
        const r = isJsonObject(c.resource) ? c.resource : {}
        return typeof r.text === "string" ? r.text : `[resource ${String(r.uri ?? "")}, ${bytes(r.blob)}]`
      }
      case "resource_link":
        return `[link ${String(c.name ?? "")} ${String(c.uri ?? "")}]`
      default:
        return `[${String(c.type)} content]`
    }
  })
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent, null, 2)
  return parts.join("\n")
}

/** `mcpx-fx call`. */
export const command = Command.make(
  "call",
  {
    globals: GlobalOptions.options,
    local: ViaDaemon.localOption,
    tool: Args.text({ name: "tool" }).pipe(Args.withDescription("<namespace>.<tool> (or <namespace>__<tool>).")),
    args: Args.text({ name: "json" }).pipe(
      Args.withDescription("The arguments as a JSON object, or - to read them from stdin. Default: {}."),
      Args.optional
    )
  },
  ({ args, globals, local, tool }) =>
    Effect.gen(function*() {
      const options = yield* globalsFrom(globals)
      const given = Option.getOrUndefined(args)
      const parsed = given === undefined
        ? {}
        : given === "-"
        ? yield* parseArguments(yield* readStdin, "stdin")
        : yield* parseArguments(given, "the command line")
      const request = { tool, arguments: parsed }
      const response = yield* ViaDaemon.orInProcess(options, local, {
        daemon: (client) => client.tools.call({ payload: request }),
        inProcess: withGateway(options, (gateway) => ApiHandlers.callTool(gateway, request))
      }).pipe(
        // Arguments the tool refused are the caller's to fix, like arguments that are not JSON.
        Effect.catchTag("BadArguments", (e) => Effect.fail(new UsageError({ message: e.message })))
      )
      const result = response.result
      yield* options.json ? Output.json(result) : Output.text(render(result))
      if (response.isError) return yield* new ToolReportedError({ tool: response.tool })
    })
).pipe(
  Command.withDescription(
    describe(
      "Call a tool and print its text content (--json: the whole result). Exit 1 if the tool reports an error, " +
        "2 for bad arguments or an unknown tool. " + ViaDaemon.helpNote,
      `mcpx-fx call github.search_issues '{"query":"is:open label:bug"}'`
    )
  )
)
