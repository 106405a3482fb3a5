/**
 * An elicitation asked at the terminal, field by field, on a scripted terminal: values of every
 * type a form may ask for, an answer that does not fit asked again with the reason, a required
 * field left empty, a default, `!decline`, `!cancel`, Ctrl-D, and a URL elicitation.
 */
import * as Terminal from "@effect/platform/Terminal"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Prompt from "../src/Prompt.js"

const key = (name: string, input?: string): Terminal.UserInput => ({
  input: Option.fromNullable(input),
  key: { name, ctrl: false, meta: false, shift: false }
})

// "\n" is Enter, "\b" Backspace, anything else is typed.
const keysOf = (typed: string): ReadonlyArray<Terminal.UserInput> =>
  [...typed].map((c) => (c === "\n" ? key("return") : c === "\b" ? key("backspace") : key(c.toLowerCase(), c)))

/**
 * A terminal that answers each prompt with the next of `sessions` (the keys typed while it is
 * shown; null is Ctrl-D), and keeps what was drawn.
 */
const scripted = (sessions: ReadonlyArray<string | null>) => {
  const left = [...sessions]
  let drawn = ""
  const terminal = Terminal.Terminal.of({
    columns: Effect.succeed(80),
    rows: Effect.succeed(24),
    isTTY: Effect.succeed(true),
    readLine: Effect.fail(new Terminal.QuitException()),
    readInput: Effect.gen(function*() {
      const mailbox = yield* Mailbox.make<Terminal.UserInput>()
      const session = left.shift()
      if (typeof session === "string") yield* mailbox.offerAll(keysOf(session))
      else yield* mailbox.end
      return mailbox
    }),
    display: (text) => Effect.sync(() => void (drawn += text))
  })
  return { terminal, drawn: () => drawn }
}

const said: Array<string> = []
const say = (line: string) => Effect.sync(() => void said.push(line))

const ask = (params: JsonObject, sessions: ReadonlyArray<string | null>) => {
  const t = scripted(sessions)
  return Prompt.askElicitation(params, say).pipe(
    Effect.provideService(Terminal.Terminal, t.terminal),
    Effect.map((result) => ({ result, drawn: t.drawn() }))
  )
}

const form: JsonObject = {
  message: "Tell me about you",
  requestedSchema: {
    type: "object",
    properties: {
      name: { type: "string", title: "Your name" },
      age: { type: "integer" },
      subscribe: { type: "boolean", default: false },
      color: { type: "string", enum: ["red", "green", "blue"] },
      tags: { type: "array", items: { enum: ["a", "b", "c"] } }
    },
    required: ["name", "age"]
  }
}

describe("Prompt", () => {
  it.effect("cli/prompt/a form is asked field by field, each answer read as its field's type", () =>
    Effect.gen(function*() {
      const { result, drawn } = yield* ask(form, ["Grace\n", "36\n", "yes\n", "2\n", "a, c\n"])
      assert.deepStrictEqual(result, { action: "accept", content: { name: "Grace", age: 36, subscribe: true, color: "green", tags: ["a", "c"] } })
      assert.include(drawn, "Your name (string, required)")
      assert.include(drawn, "1) red  2) green  3) blue")
      assert.include(said.at(-1) ?? "", "Tell me about you")
    }))

  it.effect("cli/prompt/an answer that does not fit is asked again with the reason; empty keeps the default, or is refused when required", () =>
    Effect.gen(function*() {
      const { result, drawn } = yield* ask(form, ["Ada\n", "\nabc\n\b\b\b4.5\n\b\b\b7\n", "\n", "\n", "\n"])
      assert.deepStrictEqual(result, { action: "accept", content: { name: "Ada", age: 7, subscribe: false } })
      assert.include(drawn, "this field is required")
      assert.include(drawn, "a number is expected")
      assert.include(drawn, "a whole number is expected")
    }))

  it.effect("cli/prompt/!decline declines, !cancel and Ctrl-D cancel", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual((yield* ask(form, ["Ada\n", "!decline\n"])).result, { action: "decline" })
      assert.deepStrictEqual((yield* ask(form, ["!cancel\n"])).result, { action: "cancel" })
      assert.deepStrictEqual((yield* ask(form, ["Ada\n", null])).result, { action: "cancel" })
    }))

  it.effect("cli/prompt/a URL elicitation shows the URL and asks for consent", () =>
    Effect.gen(function*() {
      const url = { mode: "url", message: "Sign in", url: "https://example.com/auth" }
      assert.deepStrictEqual((yield* ask(url, ["\n"])).result, { action: "accept" })
      assert.include(said.at(-1) ?? "", "https://example.com/auth")
      assert.deepStrictEqual((yield* ask(url, ["!decline\n"])).result, { action: "decline" })
      assert.deepStrictEqual((yield* ask(url, [null])).result, { action: "cancel" })
    }))
})
