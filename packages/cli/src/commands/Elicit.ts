/**
 * `mcpx-fx elicit list|answer|decline|cancel`: the open questions the daemon holds — those of calls
 * that stopped with exit 75, and those a shared stdio server asked that could not be told apart —
 * and answering one by its id. The call a question belongs to goes on by itself; `mcpx-fx call
 * --resume <call>` collects its result.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import type * as AskApi from "@mcpx-fx/daemon/AskApi"
import { isJsonObject } from "@mcpx-fx/protocol/Json"
import * as Effect from "effect/Effect"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"
import * as Output from "../Output.js"
import { UsageError } from "../UsageError.js"
import * as ViaDaemon from "../ViaDaemon.js"
import { loadAsking } from "./LazyApi.js"
import { globalsFrom } from "./Root.js"

const idArg = Args.text({ name: "id" }).pipe(Args.withDescription("The question's id, as `mcpx-fx elicit list` or the exit-75 message shows it."))

const messageOf = (params: Readonly<Record<string, unknown>>, method: string): string => typeof params.message === "string" ? params.message : method

const list = Command.make("list", { globals: GlobalOptions.options }, ({ globals }) =>
  Effect.gen(function*() {
    const options = yield* globalsFrom(globals)
    const open = yield* ViaDaemon.required("elicit list", (client) => client.ask.questions({ urlParams: {} }))
    if (options.json) {
      const { AskApi } = yield* loadAsking
      return yield* ViaDaemon.printJson(AskApi.OpenQuestions, open)
    }
    if (open.questions.length === 0) return yield* Output.text("(no open questions)")
    yield* Output.text(Output.table(
      ["ID", "FROM", "KIND", "QUESTION", "EXPIRES"],
      open.questions.map((q) => [q.id, q.from, q.method, messageOf(q.params, q.method), new Date(q.expiresAt).toISOString()])
    ))
  })).pipe(Command.withDescription(describe("List the questions waiting for an answer, with their ids.", "mcpx-fx elicit list")))

const parseContent = (text: string) =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (e) => new UsageError({ message: `the answer is not JSON: ${e instanceof Error ? e.message : String(e)}` })
  }).pipe(
    Effect.filterOrFail(isJsonObject, () => new UsageError({ message: "the answer must be a JSON object" }))
  )

/** Sends one answer; `body` from the question's kind (an elicitation takes an action, anything else a result). */
const send = (id: string, build: (method: string) => Effect.Effect<typeof AskApi.ElicitAnswer.Type, UsageError>) =>
  ViaDaemon.required("elicit", (client) =>
    Effect.gen(function*() {
      const open = (yield* client.ask.questions({ urlParams: {} })).questions.find((q) => q.id === id)
      if (open === undefined) return yield* new UsageError({ message: `no open question ${id} (answered already, or expired); see mcpx-fx elicit list` })
      const answered = yield* client.ask.elicit({ path: { id }, payload: yield* build(open.method) })
      return answered.call === undefined
        ? `answered ${id}`
        : `answered ${id}; collect the call's result with: mcpx-fx call --resume ${answered.call}`
    })).pipe(
      Effect.catchTags({
        AskInvalid: (e) => Effect.fail(new UsageError({ message: e.message })),
        AskNotFound: (e) => Effect.fail(new UsageError({ message: e.message }))
      }),
      Effect.flatMap(Output.text)
    )

const answer = Command.make(
  "answer",
  {
    globals: GlobalOptions.options,
    id: idArg,
    json: Args.text({ name: "json" }).pipe(
      Args.withDescription("An elicitation's form content (a JSON object); for a URL elicitation, {}. For other questions, the result.")
    )
  },
  ({ globals, id, json }) =>
    Effect.gen(function*() {
      yield* globalsFrom(globals)
      const value = yield* parseContent(json)
      return yield* send(
        id,
        (method) => Effect.succeed(method === Method.ElicitationCreate ? { action: "accept" as const, content: value } : { result: value })
      )
    })
).pipe(
  Command.withDescription(
    describe("Answer a question: accept an elicitation with its form's content.", `mcpx-fx elicit answer 3fJ9k2.elicitation_1 '{"name":"Ada"}'`)
  )
)

const refuse = (action: "decline" | "cancel") =>
  Command.make(action, { globals: GlobalOptions.options, id: idArg }, ({ globals, id }) =>
    Effect.gen(function*() {
      yield* globalsFrom(globals)
      return yield* send(id, (method) =>
        method === Method.ElicitationCreate
          ? Effect.succeed({ action })
          : Effect.fail(new UsageError({ message: `${id} is a ${method} question; only an elicitation can be ${action}d — answer it with a result` })))
    })).pipe(
      Command.withDescription(describe(`${action === "decline" ? "Decline" : "Cancel"} an elicitation.`, `mcpx-fx elicit ${action} 3fJ9k2.elicitation_1`))
    )

/** `mcpx-fx elicit`. */
export const command = Command.make("elicit", { globals: GlobalOptions.options }).pipe(
  Command.withSubcommands([list, answer, refuse("decline"), refuse("cancel")]),
  Command.withDescription(
    describe(
      "Answer the questions servers asked that are waiting in the daemon: those of `mcpx-fx call` runs that stopped " +
        "with exit 75, and those a shared server asked that mcpx-fx could not attribute to a caller.",
      "mcpx-fx elicit list"
    )
  )
)
