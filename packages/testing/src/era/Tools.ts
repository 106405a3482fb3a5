/**
 * The fixture's tools and its one resource, written once for both eras. Era differences (how a
 * question is asked, how a result is dressed) stay with the callers in Legacy.ts and Modern.ts;
 * a tool only learns which era served it and, for `ask_name`, how it may ask.
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as AskName from "./AskName.js"
import type { Context, Served } from "./Context.js"
import { cancelled, error, type Outcome, text } from "./Outcome.js"
import type { JsonObject } from "./Wire.js"

const object = (properties: JsonObject, required: ReadonlyArray<string> = []): JsonObject => ({
  type: "object",
  properties,
  ...(required.length > 0 ? { required } : {})
})

export const tools: ReadonlyArray<JsonObject> = [
  {
    name: "hello",
    description: "Says which mode, era and negotiated version served the call.",
    inputSchema: object({})
  },
  {
    name: "echo",
    description: "Returns its message.",
    inputSchema: object({ message: { type: "string" } }, ["message"]),
    annotations: { readOnlyHint: true }
  },
  {
    name: "slow",
    description: "Answers after `ms` milliseconds; a cancellation stops it without an answer.",
    inputSchema: object({ ms: { type: "integer", minimum: 0 } }, ["ms"])
  },
  {
    name: "boom",
    description: "Always fails as a tool error (isError: true).",
    inputSchema: object({})
  },
  {
    name: "ask_name",
    description: "Asks the client for a name by elicitation, the way the serving era asks.",
    inputSchema: object({})
  },
  {
    name: "structured",
    description: "Returns structuredContent, a resource_link and an audio block.",
    inputSchema: object({}),
    outputSchema: object(
      { mode: { type: "string" }, era: { type: "string" }, version: { type: "string" }, items: { type: "array" } },
      ["mode", "era", "version", "items"]
    )
  },
  {
    // Served by each era's own code (Legacy.ts, Modern.ts); listed so a gateway that checks a name
    // against the listing before calling lets it through.
    name: "notify_changes",
    description: "Sends tools list_changed, and resources/updated for each subscribed resource.",
    inputSchema: object({})
  }
]

/** `--header-tools`: the tool whose `region` argument is mirrored into `Mcp-Param-<headerName>`. */
export const HeaderTool = "weather"

const headerTool = (headerName: string): JsonObject => ({
  name: HeaderTool,
  description: `Says the weather for a region; over modern HTTP the region travels in Mcp-Param-${headerName} too.`,
  inputSchema: object({ region: { type: "string", "x-mcp-header": headerName }, days: { type: "integer" } }, ["region"])
})

/** What this run lists: the fixed tools, and the header tool under `--header-tools`. */
export const toolsOf = (ctx: Context): ReadonlyArray<JsonObject> =>
  ctx.options.headerName === undefined ? tools : [...tools, headerTool(ctx.options.headerName)]

export const ReadmeUri = "era://readme"

export const resources: ReadonlyArray<JsonObject> = [
  { uri: ReadmeUri, name: "readme", mimeType: "text/plain", description: "What this fixture is." }
]

export const readResource = (ctx: Context, uri: string): JsonObject | undefined =>
  uri === ReadmeUri
    ? { contents: [{ uri, mimeType: "text/plain", text: `era-server in mode ${ctx.options.mode}` }] }
    : undefined

// 44 bytes: a valid, empty 8 kHz mono WAV, so the block decodes for clients that check it.
const silentWav = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="

/** How `ask_name` may reach the client; the transport and era decide which. */
export type Asking = AskName.Asking

export interface Call {
  readonly name: string
  readonly args: JsonObject
  readonly served: Served
  readonly signal: AbortSignal
  readonly asking: Asking
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
export const sleep = (ms: number, signal: AbortSignal): Promise<boolean> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve(false)
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort)
      resolve(true)
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      resolve(false)
    }
    signal.addEventListener("abort", onAbort, { once: true })
  })

export const call = async (ctx: Context, c: Call): Promise<Outcome> => {
  const { era, version } = c.served
  switch (c.name) {
    case "hello":
      return text(`hello from ${ctx.options.mode} over ${era} ${version}`)
    case "echo": {
      const message = c.args["message"]
      return typeof message === "string" ? text(message) : text("echo needs a string `message`", true)
    }
    case "slow": {
      const ms = c.args["ms"]
      if (typeof ms !== "number" || !Number.isInteger(ms) || ms < 0) {
        return text("slow needs a non-negative integer `ms`", true)
      }
      return (await sleep(ms, c.signal)) ? text(`slept ${ms}ms`) : cancelled
    }
    case "boom":
      return text("boom: this tool always fails", true)
    case HeaderTool:
      if (ctx.options.headerName === undefined) return error(ErrorCode.InvalidParams, `unknown tool: ${c.name}`)
      return text(`weather for ${String(c.args["region"])} over ${era} ${version}`)
    case "ask_name":
      return AskName.run(ctx, c.asking, c.signal)
    case "structured": {
      const structuredContent = { mode: ctx.options.mode, era, version, items: [1, 2, 3] }
      return {
        _tag: "result",
        result: {
          content: [
            { type: "text", text: JSON.stringify(structuredContent) },
            { type: "resource_link", uri: ReadmeUri, name: "readme", mimeType: "text/plain" },
            { type: "audio", data: silentWav, mimeType: "audio/wav" }
          ],
          structuredContent
        }
      }
    }
    default:
      return error(ErrorCode.InvalidParams, `unknown tool: ${c.name}`)
  }
}
