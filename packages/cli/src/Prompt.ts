/**
 * Asking a person at a terminal what an upstream asked (`mcpx-fx call` on a tool that elicits): a
 * form is asked field by field from its schema (type, enum, default, required), a URL elicitation
 * shows the URL and asks for consent. `!decline` declines, `!cancel`, Ctrl-C or Ctrl-D cancels.
 * Prompts go to stderr; stdout stays the command's output.
 *
 * Each field is an @effect/cli text prompt, which does the line editing and asks again, with the
 * reason, until the answer fits. Its typed prompts (select, confirm, integer) are not used: they
 * cannot take `!decline` or leave an optional field empty, and every field must offer both.
 * Only a terminal is asked (Asking.ts): piped stdin never comes here.
 */
import * as Prompt from "@effect/cli/Prompt"
import * as Terminal from "@effect/platform/Terminal"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** What the person said to one field: a value, nothing (keep it empty), or a way out. */
export type FieldInput =
  | { readonly _tag: "Value"; readonly value: string | number | boolean | ReadonlyArray<string> }
  | { readonly _tag: "Empty" }
  | { readonly _tag: "Invalid"; readonly reason: string }
  | { readonly _tag: "Decline" }
  | { readonly _tag: "Cancel" }

const enumOf = (property: JsonObject): ReadonlyArray<string> | undefined => {
  if (Array.isArray(property.enum)) return property.enum.map(String)
  // Titled single-select (2025-11-25): oneOf of {const, title}.
  if (Array.isArray(property.oneOf)) {
    const values = property.oneOf.flatMap((o) => (isJsonObject(o) && o.const !== undefined ? [String(o.const)] : []))
    return values.length > 0 ? values : undefined
  }
  if (property.type === "array" && isJsonObject(property.items)) return enumOf(property.items)
  return undefined
}

/** Reads one line typed for a field of `property` (a JSON Schema primitive, as elicitation forms allow). */
export const parseField = (property: JsonObject, line: string): FieldInput => {
  const text = line.trim()
  if (text === "!decline") return { _tag: "Decline" }
  if (text === "!cancel") return { _tag: "Cancel" }
  if (text === "") return { _tag: "Empty" }
  const options = enumOf(property)
  const pick = (choice: string): string | undefined => {
    if (options === undefined) return choice
    const n = Number(choice)
    if (Number.isInteger(n) && n >= 1 && n <= options.length) return options[n - 1]
    return options.includes(choice) ? choice : undefined
  }
  switch (property.type) {
    case "boolean": {
      const yes = ["y", "yes", "true"].includes(text.toLowerCase())
      const no = ["n", "no", "false"].includes(text.toLowerCase())
      return yes || no ? { _tag: "Value", value: yes } : { _tag: "Invalid", reason: "answer yes or no" }
    }
    case "integer":
    case "number": {
      const n = Number(text)
      if (!Number.isFinite(n)) return { _tag: "Invalid", reason: "a number is expected" }
      if (property.type === "integer" && !Number.isInteger(n)) return { _tag: "Invalid", reason: "a whole number is expected" }
      return { _tag: "Value", value: n }
    }
    case "array": {
      const picked = text.split(",").map((s) => s.trim()).filter((s) => s.length > 0).map(pick)
      return picked.some((p) => p === undefined)
        ? { _tag: "Invalid", reason: `choose from ${options?.join(", ")}` }
        : { _tag: "Value", value: picked as ReadonlyArray<string> }
    }
    default: {
      const value = pick(text)
      return value === undefined ? { _tag: "Invalid", reason: `choose one of ${options?.join(", ")}` } : { _tag: "Value", value }
    }
  }
}

/** How a field is introduced: its title or name, its type or choices, and whether it is needed. */
export const describeField = (name: string, property: JsonObject, required: boolean): string => {
  const title = typeof property.title === "string" ? property.title : name
  const options = enumOf(property)
  const kind = options !== undefined
    ? options.map((o, i) => `${i + 1}) ${o}`).join("  ")
    : typeof property.type === "string"
    ? property.type
    : "text"
  const description = typeof property.description === "string" ? ` — ${property.description}` : ""
  const fallback = property.default !== undefined ? ` [${JSON.stringify(property.default)}]` : ""
  return `${title} (${kind}${required ? ", required" : ""})${description}${fallback}`
}

/** Asks one field until the answer fits it (or is a way out); what was answered. */
const askField = (name: string, property: JsonObject, required: boolean) =>
  Prompt.text({
    message: describeField(name, property, required),
    validate: (line) => {
      const input = parseField(property, line)
      if (input._tag === "Invalid") return Effect.fail(input.reason)
      if (input._tag === "Empty" && required && property.default === undefined) return Effect.fail("this field is required")
      return Effect.succeed(line)
    }
  }).pipe(Prompt.map((line) => parseField(property, line)))

/** Asks an elicitation at the terminal; the ElicitResult to answer it with. */
export const askElicitation = (params: JsonObject, say: (line: string) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const message = typeof params.message === "string" ? params.message : "The server asks:"
    yield* say(`? ${message}   (!decline to decline, !cancel or Ctrl-D to cancel)`)
    if (params.mode === "url") {
      yield* say(`  open: ${String(params.url)}`)
      const input = parseField({ type: "string" }, yield* Prompt.text({ message: "press Enter when done (or !decline)" }))
      return input._tag === "Decline" ? { action: "decline" } : input._tag === "Cancel" ? { action: "cancel" } : { action: "accept" }
    }
    const schema = isJsonObject(params.requestedSchema) ? params.requestedSchema : {}
    const properties = isJsonObject(schema.properties) ? schema.properties : {}
    const required = Array.isArray(schema.required) ? schema.required.map(String) : []
    const content: Record<string, unknown> = {}
    for (const [name, raw] of Object.entries(properties)) {
      const property = isJsonObject(raw) ? raw : {}
      const input = yield* askField(name, property, required.includes(name))
      if (input._tag === "Decline") return { action: "decline" }
      if (input._tag === "Cancel") return { action: "cancel" }
      if (input._tag === "Value") content[name] = input.value
      else if (property.default !== undefined) content[name] = property.default
    }
    return { action: "accept", content }
  }).pipe(
    // Ctrl-C and Ctrl-D end a prompt with QuitException: the person walked away from the form.
    Effect.catchTag("QuitException", () => Effect.succeed({ action: "cancel" }))
  )

/**
 * This process's terminal for prompts: keys from stdin, drawn on stderr (the platform's terminal
 * draws on stdout, which is the command's output). Raw mode is held only while a prompt reads.
 */
export const terminal: Effect.Effect<Terminal.Terminal, never, Scope.Scope> = Effect.map(NodeTerminal.make(), (keys) =>
  Terminal.Terminal.of({
    ...keys,
    columns: Effect.sync(() => process.stderr.columns ?? 0),
    rows: Effect.sync(() => process.stderr.rows ?? 0),
    isTTY: Effect.sync(() => process.stderr.isTTY === true),
    display: (text) => Effect.sync(() => void process.stderr.write(text))
  }))
