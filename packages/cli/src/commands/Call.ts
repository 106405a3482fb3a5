/**
 * `mcpx-fx call <namespace>.<tool> [json]`: calls one tool and prints what it said. Exit 1 when
 * the tool reports an error (`isError`), 2 for arguments that are not a JSON object or do not fit
 * the tool's inputSchema (checked by the gateway before the upstream is called), or a tool
 * that does not exist (with the closest names), 75 when it asked a question nobody here could
 * answer (Asking.ts).
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as PendingCalls from "@mcpx-fx/gateway/PendingCalls"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Asking from "../Asking.js"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"
import * as Output from "../Output.js"
import { QuestionsPending } from "../QuestionsPending.js"
import { UsageError } from "../UsageError.js"
import * as ViaDaemon from "../ViaDaemon.js"
import { loadAsking, loadTasks } from "./LazyApi.js"
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
    Effect.filterOrFail(isJsonObject, (v) => new UsageError({ message: `arguments must be a JSON object, got ${Array.isArray(v) ? "an array" : typeof v}` }))
  )

/** The arguments as given: none, `-` for stdin, or JSON on the command line. */
const argumentsOf = (given: string | undefined) =>
  given === undefined
    ? Effect.succeed<JsonObject>({})
    : given === "-"
    ? Effect.flatMap(readStdin, (text) => parseArguments(text, "stdin"))
    : parseArguments(given, "the command line")

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

const noInputOption = Options.boolean("no-input").pipe(
  Options.withDescription(
    "Never ask a question at the terminal: a tool that asks stops the command with exit 75, printing the question " +
      "and the `mcpx-fx elicit` commands that answer it (the daemon keeps the call meanwhile)."
  )
)

const resumeOption = Options.text("resume").pipe(
  Options.withDescription("Follow a call that stopped with exit 75 (its id was printed) and print its result once it has one."),
  Options.optional
)

const taskOption = Options.boolean("task").pipe(
  Options.withDescription(
    "Run the call as a task in the daemon and return at once, printing the task's id (--json: the task). Follow it with " +
      "`mcpx-fx tasks get|result|answer|cancel <id>`; it outlives this command. Needs a running daemon."
  )
)

const DaemonWaitMs = 30_000

/** The daemon's `/v1/ask`, as the route a call follows. */
const daemonRoute = (client: ViaDaemon.Client): Asking.Route<unknown> => ({
  keeps: true,
  begin: (request) => client.ask.begin({ payload: { ...request, waitMs: DaemonWaitMs }, headers: {} }),
  poll: (id) => client.ask.poll({ path: { id }, urlParams: { waitMs: DaemonWaitMs } }),
  answer: (id, answers) => client.ask.answer({ path: { id }, payload: { answers, waitMs: DaemonWaitMs } }),
  abandon: (id) => Effect.ignore(client.ask.abandon({ path: { id } }))
})

const isAskInvalid = (e: unknown): e is { readonly _tag: "AskInvalid"; readonly reason: string; readonly detail: string } =>
  typeof e === "object" && e !== null && "_tag" in e && e._tag === "AskInvalid" && "reason" in e && "detail" in e

// A question of a kind this command cannot take (sampling) is one nobody here can answer (exit
// 75), not the user's mistake; the call was cancelled upstream.
const unanswerable = (tool: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    effect,
    (e): e is Extract<E, { readonly _tag: "AskInvalid" }> => isAskInvalid(e) && e.reason === "capabilities",
    (e) => Effect.fail(new QuestionsPending({ tool, kept: false, ...(isAskInvalid(e) ? { asked: e.detail } : {}) }))
  )

// A call the user named wrong, or answers that do not fit, are the user's to fix (exit 2).
const usageFailures = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    effect,
    (e): e is Extract<E, { readonly _tag: "BadArguments" | "AskNotFound" | "AskInvalid"; readonly message: string }> =>
      typeof e === "object" && e !== null && "_tag" in e && ["BadArguments", "AskNotFound", "AskInvalid"].includes(String(e._tag)),
    (e) => Effect.fail(new UsageError({ message: e.message }))
  )

/** `call --task`: the daemon makes the task and answers at once; its id (or with --json the task) is printed. */
const startTask = (json: boolean, name: string | undefined, given: string | undefined, conflicting: boolean) =>
  Effect.gen(function*() {
    if (conflicting) return yield* new UsageError({ message: "call --task runs in the daemon: it takes neither --local nor --resume" })
    if (name === undefined) return yield* new UsageError({ message: "call --task needs a tool (<namespace>.<tool>)" })
    const parsed = yield* argumentsOf(given)
    const accepted = yield* ViaDaemon.required("call --task", (client) =>
      client.tools.call({ payload: { tool: name, arguments: parsed, task: {} }, headers: {} }))
    if (!("task" in accepted)) {
      return yield* new UsageError({ message: "the daemon answered with a result, not a task: it predates call --task" })
    }
    if (!json) {
      return yield* Output.text(accepted.task.taskId)
    }
    const { TasksApi } = yield* loadTasks
    yield* ViaDaemon.printJson(TasksApi.TaskAccepted, accepted)
  })

/** `mcpx-fx call`. */
export const command = Command.make(
  "call",
  {
    globals: GlobalOptions.options,
    local: ViaDaemon.localOption,
    noInput: noInputOption,
    resume: resumeOption,
    task: taskOption,
    tool: Args.text({ name: "tool" }).pipe(Args.withDescription("<namespace>.<tool> (or <namespace>__<tool>)."), Args.optional),
    args: Args.text({ name: "json" }).pipe(
      Args.withDescription("The arguments as a JSON object, or - to read them from stdin. Default: {}."),
      Args.optional
    )
  },
  ({ args, globals, local, noInput, resume, task, tool }) =>
    Effect.gen(function*() {
      const options = yield* globalsFrom(globals)
      if (task) return yield* startTask(options.json, Option.getOrUndefined(tool), Option.getOrUndefined(args), local || Option.isSome(resume))
      const { Asking } = yield* loadAsking
      const given = Option.getOrUndefined(args)
      // A person can be asked only on a terminal, and not when stdin carries the arguments.
      const interactive = !noInput && process.stdin.isTTY === true && given !== "-"
      const resuming = Option.getOrUndefined(resume)
      const final = resuming !== undefined
        ? yield* ViaDaemon.required("call --resume", (client) => {
          const route = daemonRoute(client)
          return Effect.flatMap(route.poll(resuming), (status) => Asking.follow(route, status, interactive, options.json))
        }).pipe(unanswerable(resuming))
        : yield* Effect.gen(function*() {
          const name = Option.getOrUndefined(tool)
          if (name === undefined) return yield* new UsageError({ message: "call needs a tool (<namespace>.<tool>), or --resume <id>" })
          const parsed = yield* argumentsOf(given)
          const request = { tool: name, arguments: parsed, capabilities: Asking.Capabilities }
          return yield* ViaDaemon.orInProcess(options, local, {
            daemon: (client) => {
              const route = daemonRoute(client)
              return Effect.flatMap(route.begin(request), (status) => Asking.follow(route, status, interactive, options.json))
            },
            inProcess: withGateway(options, (gateway) =>
              Effect.flatMap(PendingCalls.PendingCalls, (pending) => {
                const route = Asking.inProcess(gateway, pending)
                return Effect.flatMap(route.begin(request), (status) => Asking.follow(route, status, interactive, options.json))
              }))
          }).pipe(unanswerable(name))
        })
      const result = final.result ?? {}
      yield* options.json ? Output.json(result) : Output.text(render(result))
      if (final.isError === true) return yield* new ToolReportedError({ tool: final.tool })
    }).pipe(usageFailures)
).pipe(
  Command.withDescription(
    describe(
      "Call a tool and print its text content (--json: the whole result). Exit 1 if the tool reports an error, " +
        "2 for bad arguments or an unknown tool, 75 when the tool asked a question nobody here could answer " +
        "(on a terminal it is asked; otherwise the question and the `mcpx-fx elicit` commands that answer it are " +
        "printed, and `mcpx-fx call --resume <id>` collects the result). With --task the call runs as a task in the daemon " +
        "and its id is printed at once (mcpx-fx tasks). " + ViaDaemon.helpNote,
      `mcpx-fx call github.search_issues '{"query":"is:open label:bug"}'`,
      `mcpx-fx call --task build.run_tests '{"suite":"all"}'`
    )
  )
)
