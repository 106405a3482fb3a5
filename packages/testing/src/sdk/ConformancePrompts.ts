/** The conformance fixture's prompts, one of them asking a question (MRTR on `prompts/get`). */
import { acceptedContent, completable, inputRequired, type McpServer } from "@modelcontextprotocol/server"
import * as z from "zod"
import { PNG_BASE64, text } from "./ConformanceContent.js"
import { ContextAnswer } from "./ConformanceQuestions.js"

export const registerPrompts = (mcp: McpServer) => {
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
