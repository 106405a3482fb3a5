/**
 * The tools, prompts and resources the official conformance suite's server scenarios call
 * (`@modelcontextprotocol/conformance` 0.2.0-alpha.12), written for `@modelcontextprotocol/server`
 * 2.x by reading what each scenario checks, plus the greeting tools every SDK fixture has.
 *
 * Every question a tool asks is written once, the 2026 way (`inputRequired(...)`): a modern
 * request gets `input_required` (MRTR) and retries with `inputResponses`/`requestState`, and on
 * a 2025-era connection the SDK's legacy shim sends the same questions as real server→client
 * requests (`elicitation/create`, `sampling/createMessage`, `roots/list`) and re-enters the
 * handler. That is also what keeps the `test_input_required_result_*` names meaningful on the
 * legacy-only variant, where a gateway has to translate them for a modern host.
 */
import { randomBytes } from "node:crypto"
import {
  acceptedContent,
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  completable,
  createRequestStateCodec,
  fromJsonSchema,
  type InputRequest,
  inputRequired,
  type InputRequiredResult,
  inputResponse,
  McpServer,
  ResourceTemplate,
  type ServerContext
} from "@modelcontextprotocol/server"
import * as z from "zod"
import { registerGreetings } from "./Greetings.js"
import { registerTaskMethods } from "./TaskMethods.js"
import { TaskStore } from "./TaskStore.js"
import { registerTaskTools } from "./TaskTools.js"
import type { Surface, SurfaceContext } from "./V2Host.js"

/** A 1×1 red PNG. */
const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

/** A valid, very short WAV file: 8 kHz, 8-bit mono, eight samples of silence. */
const WAV_BASE64 = (() => {
  const samples = Buffer.alloc(8, 128)
  const header = Buffer.alloc(44)
  header.write("RIFF", 0)
  header.writeUInt32LE(36 + samples.length, 4)
  header.write("WAVEfmt ", 8)
  header.writeUInt32LE(16, 16)
  header.writeUInt16LE(1, 20)
  header.writeUInt16LE(1, 22)
  header.writeUInt32LE(8000, 24)
  header.writeUInt32LE(8000, 28)
  header.writeUInt16LE(1, 32)
  header.writeUInt16LE(8, 34)
  header.write("data", 36)
  header.writeUInt32LE(samples.length, 40)
  return Buffer.concat([header, samples]).toString("base64")
})()

/**
 * `x-mcp-header` is an MCP extension keyword (SEP-2243) that JSON Schema typings do not know;
 * a named constant keeps it out of the literal's excess-property check.
 */
const mirroredRegion = { type: "string" as const, "x-mcp-header": "Region" }

const text = (value: string) => ({ type: "text" as const, text: value })
const done = (value: string) => ({ content: [text(value)] })
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const noArgs = z.object({})

/** What this fixture keeps in a `requestState`: which tool minted it and how far the flow got. */
interface FlowState {
  readonly tool: string
  readonly round: number
  readonly name?: string
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The capabilities the caller declared: per request on the 2026 era (the `_meta` envelope),
 * from `initialize` on a 2025-era connection.
 */
const declaredCapabilities = (mcp: McpServer, ctx: ServerContext): ClientCapabilities => {
  const envelope: Record<string, unknown> = { ...ctx.mcpReq.envelope }
  const fromEnvelope = envelope[CLIENT_CAPABILITIES_META_KEY]
  return isRecord(fromEnvelope) ? fromEnvelope : (mcp.server.getClientCapabilities() ?? {})
}

const elicitName = (message: string): InputRequest =>
  inputRequired.elicit({
    message,
    requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] }
  })

const NameAnswer = z.object({ name: z.string() })
const OkAnswer = z.object({ ok: z.boolean() })
const ColorAnswer = z.object({ color: z.string() })
const ContextAnswer = z.object({ context: z.string() })

const samplingText = (ctx: ServerContext, key: string): string | undefined => {
  const view = inputResponse(ctx.mcpReq.inputResponses, key)
  if (view.kind !== "sampling") return undefined
  const content = view.result.content
  const first = Array.isArray(content) ? content[0] : content
  return first !== undefined && first.type === "text" ? first.text : "(non-text sampling result)"
}

const rootsOf = (ctx: ServerContext, key: string): ReadonlyArray<string> | undefined => {
  const view = inputResponse(ctx.mcpReq.inputResponses, key)
  return view.kind === "roots" ? view.roots.map((r) => r.uri) : undefined
}

const elicitOutcome = (ctx: ServerContext, key: string): string | undefined => {
  const view = inputResponse(ctx.mcpReq.inputResponses, key)
  return view.kind === "elicit" ? `action=${view.action}, content=${JSON.stringify(view.content ?? {})}` : undefined
}

export const conformanceSurface = (): Surface => {
  // One key per process: every round of a flow comes back to this process (HTTP) or never
  // leaves it (the legacy shim re-enters in-process), and a restart invalidates old flows.
  const codec = createRequestStateCodec<FlowState>({ key: randomBytes(32), ttlSeconds: 600 })
  // One task table per process: a modern HTTP request gets a fresh instance, its tasks/get another.
  const tasks = new TaskStore({ ttlMs: 300_000, pollIntervalMs: 200, pageSize: 20 })

  const stateFor = (ctx: ServerContext, tool: string): FlowState | undefined => {
    const state = ctx.mcpReq.requestState<FlowState>()
    return state !== undefined && state.tool === tool ? state : undefined
  }

  const registerContentTools = (mcp: McpServer, ctx: SurfaceContext) => {
    mcp.registerTool(
      "test_simple_text",
      { description: "Returns simple text content", inputSchema: noArgs },
      () => done("This is a simple text response for testing.")
    )
    mcp.registerTool("test_image_content", { description: "Returns a PNG image", inputSchema: noArgs }, () => ({
      content: [{ type: "image", data: PNG_BASE64, mimeType: "image/png" }]
    }))
    mcp.registerTool("test_audio_content", { description: "Returns a WAV clip", inputSchema: noArgs }, () => ({
      content: [{ type: "audio", data: WAV_BASE64, mimeType: "audio/wav" }]
    }))
    mcp.registerTool("test_embedded_resource", { description: "Returns an embedded resource", inputSchema: noArgs }, () => ({
      content: [
        {
          type: "resource",
          resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." }
        }
      ]
    }))
    mcp.registerTool(
      "test_multiple_content_types",
      { description: "Returns text, image and resource content", inputSchema: noArgs },
      () => ({
        content: [
          text("Multiple content types test:"),
          { type: "image", data: PNG_BASE64, mimeType: "image/png" },
          {
            type: "resource",
            resource: {
              uri: "test://mixed-content-resource",
              mimeType: "application/json",
              text: JSON.stringify({ test: "data", value: 123 })
            }
          }
        ]
      })
    )
    mcp.registerTool("test_error_handling", { description: "Always returns an error result", inputSchema: noArgs }, () => ({
      isError: true,
      content: [text("This tool intentionally returns an error for testing")]
    }))
    mcp.registerTool(
      "test_tool_with_logging",
      { description: "Sends three log messages while it runs", inputSchema: noArgs },
      async (_args, handlerCtx) => {
        await handlerCtx.mcpReq.log("info", "Tool execution started")
        await pause(50)
        await handlerCtx.mcpReq.log("info", "Tool processing data")
        await pause(50)
        await handlerCtx.mcpReq.log("info", "Tool execution completed")
        return done("Tool with logging executed successfully")
      }
    )
    mcp.registerTool(
      "test_logging_tool",
      { description: "Logs one message; the SDK drops it unless the request set a log level", inputSchema: noArgs },
      async (_args, handlerCtx) => {
        await handlerCtx.mcpReq.log("info", "test_logging_tool ran")
        return done("Logging tool executed")
      }
    )
    mcp.registerTool(
      "test_tool_with_progress",
      { description: "Reports progress 0, 50 and 100 of 100", inputSchema: noArgs },
      async (_args, handlerCtx) => {
        const progressToken = handlerCtx.mcpReq._meta?.progressToken
        for (const progress of [0, 50, 100]) {
          if (progressToken !== undefined) {
            await handlerCtx.mcpReq.notify({
              method: "notifications/progress",
              params: { progressToken, progress, total: 100 }
            })
          }
          if (progress < 100) await pause(50)
        }
        return done("Tool with progress executed successfully")
      }
    )
    mcp.registerTool(
      "test_trigger_tool_change",
      { description: "Announces a tools list change to every listening client", inputSchema: noArgs },
      () => {
        ctx.notify.toolsChanged()
        return done("tools/list_changed published")
      }
    )
    mcp.registerTool(
      "test_trigger_prompt_change",
      { description: "Announces a prompts list change to every listening client", inputSchema: noArgs },
      () => {
        ctx.notify.promptsChanged()
        return done("prompts/list_changed published")
      }
    )
    mcp.registerTool(
      "json_schema_2020_12_tool",
      {
        description: "Tool with JSON Schema 2020-12 features",
        inputSchema: fromJsonSchema({
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "object",
          $defs: {
            address: {
              $anchor: "addressDef",
              type: "object",
              properties: { street: { type: "string" }, city: { type: "string" } }
            }
          },
          properties: {
            name: { type: "string" },
            address: { $ref: "#/$defs/address" },
            contactMethod: { type: "string", enum: ["phone", "email"] },
            phone: { type: "string" },
            email: { type: "string" }
          },
          allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
          if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
          then: { required: ["phone"] },
          else: { required: ["email"] },
          additionalProperties: false
        })
      },
      (args) => done(`json_schema_2020_12_tool received ${JSON.stringify(args)}`)
    )
    mcp.registerTool(
      "test_custom_headers",
      {
        description: "Takes a region that clients mirror into the Mcp-Param-Region header",
        inputSchema: fromJsonSchema<{ region: string }>({
          type: "object",
          properties: { region: mirroredRegion },
          required: ["region"]
        })
      },
      ({ region }) => done(`region=${region}`)
    )
  }

  const registerQuestionTools = (mcp: McpServer) => {
    mcp.registerTool(
      "test_sampling",
      { description: "Asks the client's LLM to answer a prompt", inputSchema: z.object({ prompt: z.string() }) },
      ({ prompt }, ctx) => {
        const answer = samplingText(ctx, "llm")
        if (answer !== undefined) return done(`LLM response: ${answer}`)
        return inputRequired({
          inputRequests: {
            llm: inputRequired.createMessage({
              messages: [{ role: "user", content: { type: "text", text: prompt } }],
              maxTokens: 100
            })
          }
        })
      }
    )
    mcp.registerTool(
      "test_elicitation",
      { description: "Asks the user for a username and email", inputSchema: z.object({ message: z.string() }) },
      ({ message }, ctx) => {
        const outcome = elicitOutcome(ctx, "user")
        if (outcome !== undefined) return done(`User response: ${outcome}`)
        return inputRequired({
          inputRequests: {
            user: inputRequired.elicit({
              message,
              requestedSchema: {
                type: "object",
                properties: {
                  username: { type: "string", description: "User's response" },
                  email: { type: "string", description: "User's email address" }
                },
                required: ["username", "email"]
              }
            })
          }
        })
      }
    )
    mcp.registerTool(
      "test_elicitation_sep1034_defaults",
      { description: "Elicits every primitive type with a default value (SEP-1034)", inputSchema: noArgs },
      (_args, ctx) => {
        const outcome = elicitOutcome(ctx, "defaults")
        if (outcome !== undefined) return done(`Elicitation completed: ${outcome}`)
        return inputRequired({
          inputRequests: {
            defaults: inputRequired.elicit({
              message: "Please review these defaults",
              requestedSchema: {
                type: "object",
                properties: {
                  name: { type: "string", default: "John Doe" },
                  age: { type: "integer", default: 30 },
                  score: { type: "number", default: 95.5 },
                  status: { type: "string", enum: ["active", "inactive", "pending"], default: "active" },
                  verified: { type: "boolean", default: true }
                }
              }
            })
          }
        })
      }
    )
    mcp.registerTool(
      "test_elicitation_sep1330_enums",
      { description: "Elicits all five enum schema variants (SEP-1330)", inputSchema: noArgs },
      (_args, ctx) => {
        const outcome = elicitOutcome(ctx, "enums")
        if (outcome !== undefined) return done(`Elicitation completed: ${outcome}`)
        return inputRequired({
          inputRequests: {
            enums: inputRequired.elicit({
              message: "Pick some options",
              requestedSchema: {
                type: "object",
                properties: {
                  untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
                  titledSingle: {
                    type: "string",
                    oneOf: [
                      { const: "value1", title: "First Option" },
                      { const: "value2", title: "Second Option" },
                      { const: "value3", title: "Third Option" }
                    ]
                  },
                  legacyEnum: {
                    type: "string",
                    enum: ["opt1", "opt2", "opt3"],
                    enumNames: ["Option One", "Option Two", "Option Three"]
                  },
                  untitledMulti: { type: "array", items: { type: "string", enum: ["option1", "option2", "option3"] } },
                  titledMulti: {
                    type: "array",
                    items: {
                      anyOf: [
                        { const: "value1", title: "First Choice" },
                        { const: "value2", title: "Second Choice" },
                        { const: "value3", title: "Third Choice" }
                      ]
                    }
                  }
                }
              }
            })
          }
        })
      }
    )
    mcp.registerTool(
      "test_missing_capability",
      { description: "Needs sampling; refused with -32021 when the client did not declare it", inputSchema: noArgs },
      (_args, ctx) => {
        const answer = samplingText(ctx, "probe")
        if (answer !== undefined) return done(`sampling answered: ${answer}`)
        return inputRequired({
          inputRequests: {
            probe: inputRequired.createMessage({
              messages: [{ role: "user", content: { type: "text", text: "Say anything" } }],
              maxTokens: 10
            })
          }
        })
      }
    )
    mcp.registerTool(
      "test_streaming_elicitation",
      { description: "Asks a question; the answer channel is the result, never a request on the stream", inputSchema: noArgs },
      (_args, ctx) => {
        const answer = acceptedContent(ctx.mcpReq.inputResponses, "confirm", OkAnswer)
        if (answer !== undefined) return done(`confirmed=${answer.ok}`)
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: "Continue?",
              requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] }
            })
          }
        })
      }
    )
  }

  const registerMrtrTools = (mcp: McpServer) => {
    mcp.registerTool(
      "test_input_required_result_elicitation",
      { description: "MRTR: asks for a name, then greets", inputSchema: noArgs },
      (_args, ctx) => {
        const answer = acceptedContent(ctx.mcpReq.inputResponses, "user_name", NameAnswer)
        if (answer !== undefined) return done(`Hello, ${answer.name}!`)
        return inputRequired({ inputRequests: { user_name: elicitName("What is your name?") } })
      }
    )
    mcp.registerTool(
      "test_input_required_result_sampling",
      { description: "MRTR: asks the client's LLM a question", inputSchema: noArgs },
      (_args, ctx) => {
        const answer = samplingText(ctx, "capital_question")
        if (answer !== undefined) return done(`The model said: ${answer}`)
        return inputRequired({
          inputRequests: {
            capital_question: inputRequired.createMessage({
              messages: [{ role: "user", content: { type: "text", text: "What is the capital of France?" } }],
              maxTokens: 100
            })
          }
        })
      }
    )
    mcp.registerTool(
      "test_input_required_result_list_roots",
      { description: "MRTR: asks for the client's roots", inputSchema: noArgs },
      (_args, ctx) => {
        const roots = rootsOf(ctx, "client_roots")
        if (roots !== undefined) return done(`Client roots: ${roots.join(", ") || "(none)"}`)
        return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } })
      }
    )
    const tool = "test_input_required_result_request_state"
    mcp.registerTool(tool, { description: "MRTR: round-trips a signed requestState", inputSchema: noArgs }, async (_args, ctx) => {
      const state = stateFor(ctx, tool)
      const answer = acceptedContent(ctx.mcpReq.inputResponses, "confirm", OkAnswer)
      if (state !== undefined && answer !== undefined) return done(`state-ok: round ${state.round} verified, ok=${answer.ok}`)
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({
            message: "Please confirm",
            requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] }
          })
        },
        requestState: await codec.mint({ tool, round: 1 })
      })
    })
    const multiple = "test_input_required_result_multiple_inputs"
    mcp.registerTool(
      multiple,
      { description: "MRTR: asks for elicitation, sampling and roots at once", inputSchema: noArgs },
      async (_args, ctx) => {
        const name = acceptedContent(ctx.mcpReq.inputResponses, "user_name", NameAnswer)
        const greeting = samplingText(ctx, "greeting")
        const roots = rootsOf(ctx, "client_roots")
        if (stateFor(ctx, multiple) !== undefined && name !== undefined && greeting !== undefined && roots !== undefined) {
          return done(`${greeting} ${name.name} (roots: ${roots.join(", ") || "none"})`)
        }
        const missing: Record<string, InputRequest> = {}
        if (name === undefined) missing["user_name"] = elicitName("What is your name?")
        if (greeting === undefined) {
          missing["greeting"] = inputRequired.createMessage({
            messages: [{ role: "user", content: { type: "text", text: "Generate a greeting" } }],
            maxTokens: 50
          })
        }
        if (roots === undefined) missing["client_roots"] = inputRequired.listRoots()
        // Re-asking everything when the state is missing keeps one rule: a complete result
        // needs all three answers from one flow.
        const inputRequests: Record<string, InputRequest> = Object.keys(missing).length === 0
          ? {
            user_name: elicitName("What is your name?"),
            greeting: inputRequired.createMessage({
              messages: [{ role: "user", content: { type: "text", text: "Generate a greeting" } }],
              maxTokens: 50
            }),
            client_roots: inputRequired.listRoots()
          }
          : missing
        return inputRequired({ inputRequests, requestState: await codec.mint({ tool: multiple, round: 1 }) })
      }
    )
    const multiRound = "test_input_required_result_multi_round"
    mcp.registerTool(
      multiRound,
      { description: "MRTR: two questions over two rounds with evolving requestState", inputSchema: noArgs },
      async (_args, ctx): Promise<InputRequiredResult | ReturnType<typeof done>> => {
        const state = stateFor(ctx, multiRound)
        if (state?.round === 2 && state.name !== undefined) {
          const color = acceptedContent(ctx.mcpReq.inputResponses, "step2", ColorAnswer)
          if (color !== undefined) return done(`${state.name} likes ${color.color}`)
        }
        if (state?.round === 1) {
          const name = acceptedContent(ctx.mcpReq.inputResponses, "step1", NameAnswer)
          if (name !== undefined) {
            return inputRequired({
              inputRequests: {
                step2: inputRequired.elicit({
                  message: "Step 2: What is your favorite color?",
                  requestedSchema: { type: "object", properties: { color: { type: "string" } }, required: ["color"] }
                })
              },
              requestState: await codec.mint({ tool: multiRound, round: 2, name: name.name })
            })
          }
        }
        return inputRequired({
          inputRequests: { step1: elicitName("Step 1: What is your name?") },
          requestState: await codec.mint({ tool: multiRound, round: 1 })
        })
      }
    )
    const tampered = "test_input_required_result_tampered_state"
    mcp.registerTool(
      tampered,
      { description: "MRTR: HMAC-signed requestState; a tampered echo is refused with -32602", inputSchema: noArgs },
      async (_args, ctx) => {
        const answer = acceptedContent(ctx.mcpReq.inputResponses, "confirm", OkAnswer)
        if (stateFor(ctx, tampered) !== undefined && answer !== undefined) return done("state verified")
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: "Please confirm",
              requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] }
            })
          },
          requestState: await codec.mint({ tool: tampered, round: 1 })
        })
      }
    )
    mcp.registerTool(
      "test_input_required_result_capabilities",
      { description: "MRTR: asks only for what the client declared it can answer", inputSchema: noArgs },
      (_args, ctx) => {
        const caps = declaredCapabilities(mcp, ctx)
        const answered = [
          elicitOutcome(ctx, "user_name"),
          samplingText(ctx, "greeting"),
          rootsOf(ctx, "client_roots")?.join(", ")
        ].filter((x) => x !== undefined)
        if (answered.length > 0) return done(`answers: ${answered.join("; ")}`)
        const inputRequests: Record<string, InputRequest> = {}
        if (caps.elicitation !== undefined) inputRequests["user_name"] = elicitName("What is your name?")
        if (caps.sampling !== undefined) {
          inputRequests["greeting"] = inputRequired.createMessage({
            messages: [{ role: "user", content: { type: "text", text: "Generate a greeting" } }],
            maxTokens: 50
          })
        }
        if (caps.roots !== undefined) inputRequests["client_roots"] = inputRequired.listRoots()
        return Object.keys(inputRequests).length === 0
          ? done("the client declared no capability to ask through")
          : inputRequired({ inputRequests })
      }
    )
  }

  const registerPrompts = (mcp: McpServer) => {
    mcp.registerPrompt("test_simple_prompt", { description: "A prompt without arguments" }, () => ({
      messages: [{ role: "user", content: text("This is a simple prompt for testing.") }]
    }))
    mcp.registerPrompt(
      "test_prompt_with_arguments",
      {
        description: "A prompt with two arguments (arg1 completes)",
        argsSchema: z.object({
          arg1: completable(
            z.string().describe("First test argument"),
            (value) => ["paris", "park", "party", "test", "testing"].filter((v) => v.startsWith(value))
          ),
          arg2: z.string().describe("Second test argument")
        })
      },
      ({ arg1, arg2 }) => ({
        messages: [{ role: "user", content: text(`Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`) }]
      })
    )
    mcp.registerPrompt(
      "test_prompt_with_embedded_resource",
      {
        description: "A prompt that embeds a resource",
        argsSchema: z.object({ resourceUri: z.string().describe("URI of the resource to embed") })
      },
      ({ resourceUri }) => ({
        messages: [
          {
            role: "user",
            content: {
              type: "resource",
              resource: { uri: resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." }
            }
          },
          { role: "user", content: text("Please process the embedded resource above.") }
        ]
      })
    )
    mcp.registerPrompt("test_prompt_with_image", { description: "A prompt with an image" }, () => ({
      messages: [
        { role: "user", content: { type: "image", data: PNG_BASE64, mimeType: "image/png" } },
        { role: "user", content: text("Please analyze the image above.") }
      ]
    }))
    mcp.registerPrompt(
      "test_input_required_result_prompt",
      { description: "MRTR on prompts/get: asks for context first" },
      (ctx) => {
        const answer = acceptedContent(ctx.mcpReq.inputResponses, "user_context", ContextAnswer)
        if (answer !== undefined) {
          return { messages: [{ role: "user", content: text(`Use this context: ${answer.context}`) }] }
        }
        return inputRequired({
          inputRequests: {
            user_context: inputRequired.elicit({
              message: "What context should the prompt use?",
              requestedSchema: { type: "object", properties: { context: { type: "string" } }, required: ["context"] }
            })
          }
        })
      }
    )
  }

  const registerResources = (mcp: McpServer, era: SurfaceContext["era"]) => {
    mcp.registerResource(
      "static-text",
      "test://static-text",
      { description: "A static text resource", mimeType: "text/plain" },
      (uri) => ({
        contents: [{ uri: uri.href, mimeType: "text/plain", text: "This is the content of the static text resource." }]
      })
    )
    mcp.registerResource(
      "static-binary",
      "test://static-binary",
      { description: "A static binary resource (PNG)", mimeType: "image/png" },
      (uri) => ({ contents: [{ uri: uri.href, mimeType: "image/png", blob: PNG_BASE64 }] })
    )
    mcp.registerResource(
      "watched-resource",
      "test://watched-resource",
      { description: "A resource clients may subscribe to", mimeType: "text/plain" },
      (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "Watched resource content." }] })
    )
    mcp.registerResource(
      "template-data",
      new ResourceTemplate("test://template/{id}/data", { list: undefined }),
      { description: "Data for an id", mimeType: "application/json" },
      (uri, variables) => {
        const id = String(variables["id"])
        return {
          contents: [
            {
              uri: uri.href,
              mimeType: "application/json",
              text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` })
            }
          ]
        }
      }
    )
    // 2026-07-28 removed resources/(un)subscribe (listen streams replace them), so only 2025-era
    // instances take these requests; the modern instance must answer them -32601.
    if (era === "legacy") {
      const subscribed = new Set<string>()
      mcp.server.registerCapabilities({ resources: { subscribe: true } })
      mcp.server.setRequestHandler("resources/subscribe", (request) => {
        subscribed.add(request.params.uri)
        return {}
      })
      mcp.server.setRequestHandler("resources/unsubscribe", (request) => {
        subscribed.delete(request.params.uri)
        return {}
      })
    }
  }

  return (ctx) => {
    const mcp = new McpServer(
      { name: ctx.fixture, version: "1.0.0" },
      { capabilities: { logging: {} }, requestState: { verify: codec.verify } }
    )
    registerGreetings(mcp, ctx)
    registerContentTools(mcp, ctx)
    registerQuestionTools(mcp)
    registerMrtrTools(mcp)
    registerPrompts(mcp)
    registerResources(mcp, ctx.era)
    registerTaskMethods(mcp, ctx.era, tasks)
    // Last: the task gate takes over tools/call from what McpServer installed for every tool above.
    registerTaskTools(mcp, ctx, tasks)
    return mcp
  }
}
