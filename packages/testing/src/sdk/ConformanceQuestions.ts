/**
 * The conformance fixture's tools that ask the client something (sampling, elicitation), and the
 * readers of the answers that the MRTR tools and prompts share.
 */
import { acceptedContent, type InputRequest, inputRequired, inputResponse, type McpServer, type ServerContext } from "@modelcontextprotocol/server"
import * as z from "zod"
import { done, noArgs } from "./ConformanceContent.js"

export const elicitName = (message: string): InputRequest =>
  inputRequired.elicit({
    message,
    requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] }
  })

export const NameAnswer = z.object({ name: z.string() })
export const OkAnswer = z.object({ ok: z.boolean() })
export const ColorAnswer = z.object({ color: z.string() })
export const ContextAnswer = z.object({ context: z.string() })

export const samplingText = (ctx: ServerContext, key: string): string | undefined => {
  const view = inputResponse(ctx.mcpReq.inputResponses, key)
  if (view.kind !== "sampling") return undefined
  const content = view.result.content
  const first = Array.isArray(content) ? content[0] : content
  return first !== undefined && first.type === "text" ? first.text : "(non-text sampling result)"
}

export const rootsOf = (ctx: ServerContext, key: string): ReadonlyArray<string> | undefined => {
  const view = inputResponse(ctx.mcpReq.inputResponses, key)
  return view.kind === "roots" ? view.roots.map((r) => r.uri) : undefined
}

export const elicitOutcome = (ctx: ServerContext, key: string): string | undefined => {
  const view = inputResponse(ctx.mcpReq.inputResponses, key)
  return view.kind === "elicit" ? `action=${view.action}, content=${JSON.stringify(view.content ?? {})}` : undefined
}

export const registerQuestionTools = (mcp: McpServer) => {
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
