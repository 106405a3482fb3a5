/**
 * The conformance fixture's plain tools: the content types, logging, progress, list-change
 * triggers and the JSON Schema 2020-12 and Mcp-Param header inputs the server scenarios call.
 */
import { fromJsonSchema, type McpServer } from "@modelcontextprotocol/server"
import { done, noArgs, PNG_BASE64, text } from "./ConformanceContent.js"
import type { SurfaceContext } from "./V2Host.js"

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
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const registerContentTools = (mcp: McpServer, ctx: SurfaceContext) => {
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
