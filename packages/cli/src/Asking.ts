/**
 * `mcpx-fx call` on a tool that may ask: the call goes through `/v1/ask` (or the same operations
 * in-process) and is followed until it completes. A question is put to the person at the terminal
 * when there is one; otherwise the command stops with exit 75, printing each question and the
 * exact commands that answer it — the call waits in the daemon for `questions.ttl`, or, with no
 * daemon to keep it, is cancelled upstream.
 */
import * as Terminal from "@effect/platform/Terminal"
import * as Method from "@mcpx-fx/protocol/Method"
import * as Ask from "@mcpx-fx/daemon/Ask"
import { choices } from "@mcpx-fx/gateway/QuestionFit"
import type * as AskApi from "@mcpx-fx/daemon/AskApi"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Prompt from "./Prompt.js"
import { QuestionsPending } from "./QuestionsPending.js"

/** Where an asking call stands. */
export type Status = typeof AskApi.AskStatus.Type

/** How a call that may ask is carried out: over the daemon's `/v1/ask`, or in this process. */
export interface Route<E> {
  /** Whether the call outlives this process (a daemon keeps it) once the command stops. */
  readonly keeps: boolean
  readonly begin: (request: typeof AskApi.AskRequest.Type) => Effect.Effect<Status, E>
  readonly poll: (id: string) => Effect.Effect<Status, E>
  readonly answer: (id: string, answers: JsonObject) => Effect.Effect<Status, E>
  readonly abandon: (id: string) => Effect.Effect<void>
}

// In a file of its own: ExitCode.ts knows it at every start, while the rest of this file is loaded
// only when `call` runs.
export { QuestionsPending }

/** What the CLI can be asked: form and URL elicitations (it has no model for sampling, no roots of its own). */
export const Capabilities: JsonObject = { elicitation: { form: {}, url: {} } }

const itemsOf = (property: JsonObject): JsonObject => (isJsonObject(property.items) ? property.items : {})

const fieldsOf = (params: JsonObject): ReadonlyArray<string> => {
  const schema = isJsonObject(params.requestedSchema) ? params.requestedSchema : {}
  const properties = isJsonObject(schema.properties) ? schema.properties : {}
  const required = Array.isArray(schema.required) ? schema.required.map(String) : []
  const list = (values: ReadonlyArray<unknown>) => values.map((v) => JSON.stringify(v)).join(", ")
  return Object.entries(properties).map(([name, p]) => {
    const property = isJsonObject(p) ? p : {}
    const one = choices(property)
    const many = property.type === "array" ? choices(itemsOf(property)) : undefined
    const kind = one !== undefined
      ? `one of ${list(one)}`
      : many !== undefined
      ? `a list of ${list(many)}`
      : String(property.type ?? "value")
    const description = typeof property.description === "string" ? ` — ${property.description}` : ""
    return `${name} (${kind}${required.includes(name) ? ", required" : ""})${description}`
  })
}

// A string of a format `elicit answer` would refuse as "...": a sample of that format instead.
const formatSamples: Readonly<Record<string, string>> = {
  email: "name@example.com",
  uri: "https://example.com",
  date: "2025-01-01",
  "date-time": "2025-01-01T00:00:00Z"
}

const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined)

/** A value of one form field that `elicit answer` accepts as it is: its default, else the first choice or a placeholder within bounds. */
const sampleValue = (property: JsonObject): unknown => {
  if (property.default !== undefined) return property.default
  const one = choices(property)
  if (one !== undefined && one.length > 0) return one[0]
  switch (property.type) {
    case "number":
    case "integer": {
      const min = num(property.minimum)
      const max = num(property.maximum)
      const v = min !== undefined && min > 0 ? min : max !== undefined && max < 0 ? max : 0
      return property.type === "integer" ? Math.ceil(v) : v
    }
    case "boolean":
      return true
    case "array": {
      const options = choices(itemsOf(property)) ?? []
      const count = Math.min(options.length, Math.max(1, num(property.minItems) ?? 0), num(property.maxItems) ?? options.length)
      return options.slice(0, count)
    }
    default: {
      const sample = typeof property.format === "string" ? formatSamples[property.format] : undefined
      if (sample !== undefined) return sample
      const length = Math.min(Math.max(3, num(property.minLength) ?? 0), num(property.maxLength) ?? Infinity)
      return ".".repeat(length)
    }
  }
}

/**
 * An `elicit answer` content, accepted as it is: for a form, a value of each field for the person
 * to edit; for a URL elicitation, `{}` (accepting is consent only).
 */
export const answerTemplate = (params: JsonObject): string => {
  if (params.mode === "url") return "{}"
  const schema = isJsonObject(params.requestedSchema) ? params.requestedSchema : {}
  const properties = isJsonObject(schema.properties) ? schema.properties : {}
  return JSON.stringify(Object.fromEntries(Object.entries(properties).map(([name, p]) => [name, sampleValue(isJsonObject(p) ? p : {})])))
}

/** The text printed for questions the command cannot ask here: each question, then how to answer it. */
export const describePending = (status: Status, kept: boolean): string => {
  const lines: Array<string> = [`${status.tool} is waiting for ${status.questions.length === 1 ? "an answer" : "answers"}:`]
  for (const q of status.questions) {
    const message = typeof q.params.message === "string" ? q.params.message : q.method
    lines.push(``, `  ${message}`)
    if (q.method === Method.ElicitationCreate && q.params.mode === "url") lines.push(`    open: ${String(q.params.url)}`)
    for (const field of q.method === Method.ElicitationCreate ? fieldsOf(q.params) : []) lines.push(`    field: ${field}`)
    if (kept) {
      const content = q.method === Method.ElicitationCreate ? ` '${answerTemplate(q.params)}'` : ""
      lines.push(
        `    answer:  mcpx-fx elicit answer ${q.id}${content}`,
        `    decline: mcpx-fx elicit decline ${q.id}`,
        `    cancel:  mcpx-fx elicit cancel ${q.id}`
      )
    }
  }
  lines.push(``)
  if (kept) {
    const until = status.expiresAt === undefined ? "" : ` until ${new Date(status.expiresAt).toISOString()}`
    lines.push(`The call is kept by the daemon${until}. Then collect its result: mcpx-fx call --resume ${status.id}`)
  } else {
    lines.push(
      "No daemon is running, so nothing can keep the call: it was cancelled upstream. With `mcpx-fx daemon` " +
        "running, the question could be answered later with `mcpx-fx elicit`; on a terminal, mcpx-fx asks it."
    )
  }
  return lines.join("\n")
}

const say = (line: string) => Console.error(line)

/** Asks a round's questions at the terminal; the answers by key. */
const askHere = (status: Status, terminal: Terminal.Terminal) =>
  Effect.gen(function*() {
    const answers: Record<string, unknown> = {}
    for (const q of status.questions) {
      if (q.method === Method.ElicitationCreate) answers[q.key] = yield* Prompt.askElicitation(q.params, say)
    }
    return answers
  }).pipe(Effect.provideService(Terminal.Terminal, terminal))

/**
 * Follows a call from `status` to its result. `interactive`: questions are asked at the terminal;
 * otherwise the first question stops the command (exit 75) — after cancelling the call when no
 * daemon keeps it.
 */
export const follow = <E>(route: Route<E>, first: Status, interactive: boolean, json: boolean) =>
  Effect.scoped(Effect.gen(function*() {
    const terminal = interactive ? yield* Prompt.terminal : undefined
    let status = first
    for (;;) {
      switch (status.status) {
        case "complete":
          return status
        case "running":
          status = yield* route.poll(status.id)
          continue
        case "input_required": {
          if (terminal === undefined || status.questions.some((q) => q.method !== Method.ElicitationCreate)) {
            if (!route.keeps) yield* route.abandon(status.id)
            yield* json ? Console.log(JSON.stringify(status, null, 2)) : say(describePending(status, route.keeps))
            return yield* new QuestionsPending({ tool: status.tool, kept: route.keeps })
          }
          const answers = yield* askHere(status, terminal)
          status = yield* route.answer(status.id, answers)
          continue
        }
      }
    }
  }))

/** The in-process route: the same operations as `/v1/ask`, on this invocation's gateway. */
export const inProcess = (gateway: Parameters<typeof Ask.begin>[0], pending: Parameters<typeof Ask.begin>[1]): Route<Ask.AskError> => ({
  keeps: false,
  begin: (request) => Ask.begin(gateway, pending, request),
  poll: (id) => Ask.poll(pending, id),
  answer: (id, answers) => Ask.answer(pending, id, { answers }),
  abandon: (id) => Effect.ignore(Ask.abandon(pending, id))
})
