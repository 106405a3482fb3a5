/**
 * The ways a legacy (`@modelcontextprotocol/sdk` 1.x) server asks its client something in the
 * middle of a request, as real servers do: `elicitation/create`, `sampling/createMessage` and
 * `roots/list`, alone, several at once, one after the other, from a tool, a prompt and a
 * resource. Every question is related to the request that caused it, so over Streamable HTTP it
 * travels on that request's own SSE stream; over stdio nothing on the wire names the request.
 *
 * Each result says what the server was answered (the text a person typed, the action taken, the
 * model's words, the roots), so a test can tell whose answer reached which call.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { ElicitRequestFormParams } from "@modelcontextprotocol/sdk/types.js"
import * as z from "zod"

/** What a request handler is given about its request (the part these handlers use). */
interface Extra {
  readonly requestId: string | number
  readonly signal: AbortSignal
}

const text = (value: string) => ({ type: "text" as const, text: value })
const said = (value: string) => ({ content: [text(value)] })
const failed = (what: string, error: unknown) => ({
  isError: true,
  content: [text(`${what} failed: ${error instanceof Error ? error.message : String(error)}`)]
})

/** A one-field form: the question, and the field its answer must fill in. */
const form = (message: string, field: string, description: string): ElicitRequestFormParams => ({
  message,
  requestedSchema: { type: "object", properties: { [field]: { type: "string", description } }, required: [field] }
})

/** The accepted value of `field`, or why there is none (the action the client took). */
const answerOf = (answer: { readonly action: string; readonly content?: Record<string, unknown> | undefined }, field: string) => {
  const value = answer.content?.[field]
  return answer.action === "accept" && typeof value === "string"
    ? { given: true as const, value }
    : { given: false as const, action: answer.action }
}

const modelText = (result: { readonly content: unknown; readonly model: string }): string => {
  const blocks = Array.isArray(result.content) ? result.content : [result.content]
  const first = blocks[0] as { type?: string; text?: string } | undefined
  return first?.type === "text" ? `the model (${result.model}) said: ${first.text}` : `the model (${result.model}) answered without text`
}

/** Registers the asking tools, the asking prompt and the asking resource on `mcp`. */
export const registerQuestions = (mcp: McpServer): void => {
  const server = mcp.server
  const related = (extra: Extra) => ({ relatedRequestId: extra.requestId })
  const elicit = (extra: Extra, message: string, field: string, description: string) =>
    server.elicitInput(form(message, field, description), related(extra)).then((a) => answerOf(a, field))
  const sample = (extra: Extra, prompt: string) => server.createMessage({ messages: [{ role: "user", content: text(prompt) }], maxTokens: 50 }, related(extra))

  mcp.registerTool(
    "ask_name",
    { description: "Asks the client for a name (elicitation) and greets it", inputSchema: z.object({}) },
    async (_args, extra) => {
      try {
        const name = await elicit(extra, "What is your name?", "name", "Your name")
        return said(name.given ? `Hello, ${name.value}!` : `No name given (${name.action})`)
      } catch (error) {
        return failed("elicitation", error)
      }
    }
  )

  mcp.registerTool(
    "ask_sampling",
    {
      description: "Asks the client's model a question (sampling) and reports the answer",
      inputSchema: z.object({ prompt: z.string().optional() })
    },
    async ({ prompt }, extra) => {
      try {
        return said(`Asked "${prompt ?? "What is the capital of France?"}": ${modelText(await sample(extra, prompt ?? "What is the capital of France?"))}`)
      } catch (error) {
        return failed("sampling", error)
      }
    }
  )

  mcp.registerTool(
    "ask_roots",
    { description: "Asks the client for its roots and lists them", inputSchema: z.object({}) },
    async (_args, extra) => {
      try {
        const { roots } = await server.listRoots(undefined, related(extra))
        return said(`Roots: ${roots.map((r) => r.uri).join(", ") || "(none)"}`)
      } catch (error) {
        return failed("roots/list", error)
      }
    }
  )

  mcp.registerTool(
    "ask_two",
    { description: "Asks for a name and the model's greeting at once (two questions in flight together)", inputSchema: z.object({}) },
    async (_args, extra) => {
      try {
        const [name, greeting] = await Promise.all([
          elicit(extra, "What is your name?", "name", "Your name"),
          sample(extra, "Write a greeting")
        ])
        return said(`name: ${name.given ? name.value : `none (${name.action})`}; ${modelText(greeting)}`)
      } catch (error) {
        return failed("asking two questions", error)
      }
    }
  )

  mcp.registerTool(
    "ask_twice",
    { description: "Asks for a name, then for a colour (two questions, one after the other)", inputSchema: z.object({}) },
    async (_args, extra) => {
      try {
        const name = await elicit(extra, "What is your name?", "name", "Your name")
        if (!name.given) return said(`No name given (${name.action})`)
        const color = await elicit(extra, `Hello ${name.value}, what is your favourite colour?`, "color", "A colour")
        return said(color.given ? `${name.value} likes ${color.value}` : `${name.value} gave no colour (${color.action})`)
      } catch (error) {
        return failed("elicitation", error)
      }
    }
  )

  mcp.registerTool(
    "ask_then_wait",
    {
      description: "Asks for a name, then works until the call is cancelled (for tests that abandon a call)",
      inputSchema: z.object({})
    },
    async (_args, extra) => {
      const name = await elicit(extra, "What is your name?", "name", "Your name")
      await new Promise<void>((resolve) => extra.signal.addEventListener("abort", () => resolve(), { once: true }))
      return said(`cancelled after ${name.given ? name.value : name.action}`)
    }
  )

  // With no argsSchema the SDK's typings and its runtime disagree on the callback's arguments;
  // an optional argument keeps them in step.
  mcp.registerPrompt(
    "ask_prompt",
    {
      description: "Asks what the prompt should be about (elicitation from prompts/get)",
      argsSchema: { audience: z.string().optional().describe("Who the prompt is for") }
    },
    async ({ audience }, extra) => {
      const topic = await elicit(extra, "What should the prompt be about?", "topic", "A topic")
      const about = topic.given ? `Tell me about ${topic.value}` : `Tell me anything (no topic: ${topic.action})`
      return { messages: [{ role: "user", content: text(audience === undefined ? about : `${about}, for ${audience}`) }] }
    }
  )

  mcp.registerResource(
    "asked",
    "legacy://asked",
    { description: "A resource whose read asks for a word (elicitation from resources/read)", mimeType: "text/plain" },
    async (uri, extra) => {
      const word = await elicit(extra, "Which word should the resource hold?", "word", "A word")
      return { contents: [{ uri: uri.href, mimeType: "text/plain", text: word.given ? `You said: ${word.value}` : `You said nothing (${word.action})` }] }
    }
  )
}
