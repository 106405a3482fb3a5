/**
 * The tools every official-SDK fixture exposes, written once for `@modelcontextprotocol/server`
 * 2.x: `hello` (names the fixture and the era that answered), `echo`, `boom` (an `isError`
 * result) and `ask_name` (a question for the client).
 *
 * `ask_name` is written the 2026 way, returning `inputRequired(...)`: a modern request gets an
 * `input_required` result (MRTR) and retries with `inputResponses`, while on a 2025-era
 * connection the SDK's legacy shim turns the same return into a real server→client
 * `elicitation/create` and re-enters the handler with the answer.
 */
import { acceptedContent, inputRequired, inputResponse, type McpServer, type ServerContext } from "@modelcontextprotocol/server"
import * as z from "zod"
import type { SurfaceContext } from "./V2Host.js"

const NameForm = z.object({ name: z.string().describe("Your name") })

/**
 * The protocol revision the request was served at, as the SDK reports it. A stateless legacy
 * instance never saw `initialize`, so there only the request's own version header can tell.
 */
export const revisionOf = (mcp: McpServer, ctx: ServerContext): string =>
  mcp.server.getNegotiatedProtocolVersion() ?? ctx.http?.req?.headers.get("mcp-protocol-version") ?? "unknown"

export const registerGreetings = (mcp: McpServer, ctx: SurfaceContext): void => {
  mcp.registerTool(
    "hello",
    { description: "Says which server answered and over which protocol era", inputSchema: z.object({}) },
    (_args, handlerCtx) => ({
      content: [{ type: "text", text: `hello from ${ctx.fixture} over ${ctx.era} (${revisionOf(mcp, handlerCtx)})` }]
    })
  )

  mcp.registerTool(
    "echo",
    { description: "Returns its message unchanged", inputSchema: z.object({ message: z.string() }) },
    ({ message }) => ({ content: [{ type: "text", text: message }] })
  )

  mcp.registerTool(
    "boom",
    { description: "Always fails with an isError result", inputSchema: z.object({}) },
    () => ({ isError: true, content: [{ type: "text", text: `boom from ${ctx.fixture}` }] })
  )

  mcp.registerTool(
    "ask_name",
    { description: "Asks the client for a name (elicitation) and greets it", inputSchema: z.object({}) },
    (_args, handlerCtx) => {
      const responses = handlerCtx.mcpReq.inputResponses
      const answer = acceptedContent(responses, "name", NameForm)
      if (answer !== undefined) return { content: [{ type: "text", text: `Hello, ${answer.name}!` }] }
      const view = inputResponse(responses, "name")
      if (view.kind === "elicit") {
        return { content: [{ type: "text", text: `No name given (${view.action})` }] }
      }
      return inputRequired({
        inputRequests: { name: inputRequired.elicit({ message: "What is your name?", requestedSchema: NameForm }) }
      })
    }
  )
}
