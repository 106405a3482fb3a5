/**
 * The conformance fixture's MRTR tools (`test_input_required_result_*`): questions answered by a
 * retry with `inputResponses`, and flows carried across rounds in a signed `requestState`.
 */
import {
  acceptedContent,
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type InputRequest,
  inputRequired,
  type InputRequiredResult,
  type McpServer,
  type RequestStateCodec,
  type ServerContext
} from "@modelcontextprotocol/server"
import { done, noArgs } from "./ConformanceContent.js"
import { ColorAnswer, elicitName, elicitOutcome, NameAnswer, OkAnswer, rootsOf, samplingText } from "./ConformanceQuestions.js"

/** What this fixture keeps in a `requestState`: which tool minted it and how far the flow got. */
export interface FlowState {
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

const stateFor = (ctx: ServerContext, tool: string): FlowState | undefined => {
  const state = ctx.mcpReq.requestState<FlowState>()
  return state !== undefined && state.tool === tool ? state : undefined
}

export const registerMrtrTools = (mcp: McpServer, codec: RequestStateCodec<FlowState>) => {
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
