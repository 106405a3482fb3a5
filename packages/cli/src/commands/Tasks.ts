/**
 * `mcpx-fx tasks list|get|result|answer|cancel`: the calls the daemon runs as tasks (started by
 * `mcpx-fx call --task`), followed by id. A task lives in the daemon's task store, so it outlives
 * the command that started it, and a daemon restart: one that was running then reads `failed`.
 * `tasks result` exits 75 while the task has not ended (it is still working, or waits for answers
 * to its questions, which `tasks answer` gives), so a script can try again later.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import type * as TasksApi from "@mcpx-fx/daemon/TasksApi"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"
import * as Output from "../Output.js"
import { TaskUnfinished } from "../TaskUnfinished.js"
import { UsageError } from "../UsageError.js"
import * as ViaDaemon from "../ViaDaemon.js"
import { render, ToolReportedError } from "./Call.js"
import { loadTasks } from "./LazyApi.js"
import { globalsFrom } from "./Root.js"

type Task = typeof TasksApi.Task.Type

const idArg = Args.text({ name: "id" }).pipe(Args.withDescription("The task's id, as `mcpx-fx call --task` or `mcpx-fx tasks list` printed it."))

/** A task's questions, one per line: its key and what it asks. */
const questionLines = (requests: JsonObject | undefined): ReadonlyArray<string> =>
  Object.entries(requests ?? {}).map(([key, q]) => {
    const params = isJsonObject(q) && isJsonObject(q.params) ? q.params : {}
    const method = isJsonObject(q) && typeof q.method === "string" ? q.method : "question"
    return `  ${key}: ${method}${typeof params.message === "string" ? ` — ${params.message}` : ""}`
  })

/** A task for a person: its status and times, its questions or its error. */
export const describeTask = (task: Task): string =>
  [
    `${task.taskId}  ${task.status}${task.statusMessage === undefined ? "" : ` (${task.statusMessage})`}`,
    `  created ${task.createdAt}, updated ${task.lastUpdatedAt}`,
    ...(task.inputRequests === undefined ? [] : ["  questions:", ...questionLines(task.inputRequests)]),
    ...(task.error === undefined ? [] : [`  error ${task.error.code}: ${task.error.message}`])
  ].join("\n")

const printTask = (json: boolean, task: Task) =>
  json ? Effect.flatMap(loadTasks, ({ TasksApi }) => ViaDaemon.printJson(TasksApi.Task, task)) : Output.text(describeTask(task))

// An id nobody issued (or another session's) is the user's to fix.
const notFound = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    effect,
    (e): e is Extract<E, { readonly _tag: "TaskNotFound" | "BadCursor"; readonly message: string }> =>
      typeof e === "object" && e !== null && "_tag" in e && (e._tag === "TaskNotFound" || e._tag === "BadCursor"),
    (e) => Effect.fail(new UsageError({ message: e.message }))
  )

const list = Command.make("list", { globals: GlobalOptions.options }, (args) =>
  Effect.gen(function*() {
    const options = yield* globalsFrom(args.globals)
    const tasks = yield* ViaDaemon.required("tasks list", (client) =>
      Effect.gen(function*() {
        const all: Array<Task> = []
        let cursor: string | undefined
        do {
          const page = yield* client.tasks.list({ urlParams: cursor === undefined ? {} : { cursor } })
          all.push(...page.tasks)
          cursor = page.nextCursor
        } while (cursor !== undefined)
        return all
      })).pipe(notFound)
    if (options.json) return yield* Effect.flatMap(loadTasks, ({ TasksApi }) => ViaDaemon.printJson(TasksApi.TaskListing, { tasks }))
    if (tasks.length === 0) return yield* Output.text("(no tasks)")
    yield* Output.text(Output.table(
      ["ID", "STATUS", "CREATED", "UPDATED", "MESSAGE"],
      tasks.map((t) => [t.taskId, t.status, t.createdAt, t.lastUpdatedAt, t.error?.message ?? t.statusMessage ?? ""])
    ))
  })).pipe(Command.withDescription(describe("List the tasks started with mcpx-fx call --task, newest first.", "mcpx-fx tasks list")))

const get = Command.make("get", { globals: GlobalOptions.options, id: idArg }, (args) =>
  Effect.gen(function*() {
    const options = yield* globalsFrom(args.globals)
    const task = yield* ViaDaemon.required("tasks get", (client) => client.tasks.get({ path: { id: args.id }, urlParams: {} })).pipe(notFound)
    yield* printTask(options.json, task)
  })).pipe(Command.withDescription(describe("Show a task: its status, and its questions while it waits for answers.", "mcpx-fx tasks get t3fJ9k2Qx…")))

const waitOption = Options.integer("wait").pipe(
  Options.withDescription("Wait at most this many seconds for the task to end (default: until it ends, or asks a question)."),
  Options.optional
)

/** How long one request waits: the API's longest, so a long wait is a few requests. */
const Slice = 300_000

const result = Command.make("result", { globals: GlobalOptions.options, id: idArg, wait: waitOption }, (args) =>
  Effect.gen(function*() {
    const options = yield* globalsFrom(args.globals)
    const limit = Option.getOrUndefined(args.wait)
    if (limit !== undefined && limit < 0) return yield* new UsageError({ message: "--wait takes a number of seconds, 0 or more" })
    const deadline = limit === undefined ? undefined : Date.now() + limit * 1000
    const outcome = yield* ViaDaemon.required("tasks result", (client) => {
      const ask = (): Effect.Effect<typeof TasksApi.TaskResult.Type, TaskUnfinished | UsageError | ErrorOf<typeof client.tasks.result>> =>
        Effect.catchTag(
          client.tasks.result({
            path: { id: args.id },
            urlParams: {
              waitMs: deadline === undefined ? Slice : Math.max(0, Math.min(Slice, deadline - Date.now()))
            }
          }),
          "TaskPending",
          (pending) =>
            pending.status === "input_required" || (deadline !== undefined && Date.now() >= deadline)
              ? Effect.zipRight(
                Output.text(questionLines(pending.inputRequests).length === 0 ? "" : ["questions:", ...questionLines(pending.inputRequests)].join("\n")),
                Effect.fail(new TaskUnfinished({ taskId: args.id, status: pending.status }))
              )
              : Effect.suspend(ask)
        )
      return ask()
    }).pipe(notFound)
    yield* options.json
      ? Effect.flatMap(loadTasks, ({ TasksApi }) => ViaDaemon.printJson(TasksApi.TaskResult, outcome))
      : Output.text(render(outcome.result))
    if (outcome.isError) return yield* new ToolReportedError({ tool: `task ${args.id}` })
  })).pipe(
    Command.withDescription(
      describe(
        "Wait for a task to end and print its result as `mcpx-fx call` would. Exit 1 if the tool reported an error or the " +
          "task failed or was cancelled, 75 if it has not ended within --wait or waits for answers (its questions are printed).",
        "mcpx-fx tasks result t3fJ9k2Qx… --wait 60"
      )
    )
  )

type ErrorOf<F> = F extends (...args: ReadonlyArray<never>) => Effect.Effect<unknown, infer E, unknown> ? E : never

const parseAnswers = (text: string) =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (e) => new UsageError({ message: `the answers are not JSON: ${e instanceof Error ? e.message : String(e)}` })
  }).pipe(Effect.filterOrFail(isJsonObject, () => new UsageError({ message: "the answers must be a JSON object keyed by question" })))

const answer = Command.make(
  "answer",
  {
    globals: GlobalOptions.options,
    id: idArg,
    json: Args.text({ name: "json" }).pipe(
      Args.withDescription("Answers keyed by question (as `mcpx-fx tasks get` lists them): an elicitation's {\"action\":\"accept\",\"content\":{…}}.")
    )
  },
  (args) =>
    Effect.gen(function*() {
      const options = yield* globalsFrom(args.globals)
      const inputResponses = yield* parseAnswers(args.json)
      const task = yield* ViaDaemon.required("tasks answer", (client) => client.tasks.answer({ path: { id: args.id }, payload: { inputResponses } })).pipe(
        notFound
      )
      yield* printTask(options.json, task)
    })
).pipe(
  Command.withDescription(
    describe(
      "Answer the questions a task waits on; it goes on by itself.",
      `mcpx-fx tasks answer t3fJ9k2Qx… '{"q1":{"action":"accept","content":{"name":"Ada"}}}'`
    )
  )
)

const cancel = Command.make("cancel", { globals: GlobalOptions.options, id: idArg }, (args) =>
  Effect.gen(function*() {
    const options = yield* globalsFrom(args.globals)
    const task = yield* ViaDaemon.required("tasks cancel", (client) => client.tasks.cancel({ path: { id: args.id }, payload: {} })).pipe(notFound)
    yield* printTask(options.json, task)
  })).pipe(Command.withDescription(describe("Cancel a task: its call is stopped upstream.", "mcpx-fx tasks cancel t3fJ9k2Qx…")))

/** `mcpx-fx tasks`. */
export const command = Command.make("tasks", { globals: GlobalOptions.options }).pipe(
  Command.withSubcommands([list, get, result, answer, cancel]),
  Command.withDescription(
    describe(
      "Follow the calls the daemon runs as tasks (mcpx-fx call --task): list them, read one, wait for its result, answer " +
        "its questions, or cancel it. Needs a running daemon.",
      "mcpx-fx tasks list"
    )
  )
)
