/**
 * The headers a modern request mirrors on HTTP (MCP-Protocol-Version, Mcp-Method, Mcp-Name and
 * Mcp-Param-* from the tool's `x-mcp-header` annotations), and the tool index that remembers
 * those annotations between a listing and a call, filled from each listing (which leaves out the
 * tools whose annotations cannot be sent).
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as HeaderCodec from "@mcpx-fx/protocol/HeaderCodec"
import * as HeaderParams from "@mcpx-fx/protocol/HeaderParams"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { Connection } from "./Transport.js"

/** Tool name → input schema, as last listed, for `Mcp-Param-*`. */
export type ToolHeaderIndex = Map<string, JsonObject>

/** A modern request could not be given its mirrored headers (e.g. a version that is not header-safe). */
export class UnsendableRequest extends Schema.TaggedError<UnsendableRequest>("@mcpx-fx/upstream/UnsendableRequest")(
  "UnsendableRequest",
  { method: Schema.String, reason: Schema.String }
) {
  override get message(): string {
    return `cannot send ${this.method} to a 2026-07-28 server: ${this.reason}`
  }
}

/** The mirrored headers of one modern request whose params already carry `_meta`. */
export const modernHeaders = (
  method: string,
  params: JsonObject | undefined,
  tools: ToolHeaderIndex
): Either.Either<Record<string, string>, UnsendableRequest> => {
  const name = method === Method.ToolsCall && typeof params?.name === "string" ? params.name : undefined
  const inputSchema = name === undefined ? undefined : tools.get(name)
  return HeaderCodec.outgoingHeaders(
    params === undefined ? { method } : { method, params },
    inputSchema === undefined ? {} : { inputSchema }
  ).pipe(Either.mapLeft((e) => new UnsendableRequest({ method, reason: e.reason })))
}

// Over HTTP a tool with invalid x-mcp-header annotations cannot be called correctly, so the
// specification has clients leave it out of the listing and say why.
export const keepSendableTools = (server: string, wire: Connection["wire"], result: JsonObject) =>
  Effect.gen(function*() {
    if (wire === "stdio" || !Array.isArray(result.tools)) return result
    const { excluded, kept } = HeaderParams.partitionTools(result.tools)
    for (const e of excluded) yield* Effect.logWarning(`${server}: left out tool ${e.name}: ${e.reason}`)
    return excluded.length === 0 ? result : { ...result, tools: kept }
  })

// Remember each tool's x-mcp-header annotations so later calls can mirror Mcp-Param-* headers.
export const recordToolHeaders = (index: ToolHeaderIndex, result: JsonObject): void => {
  if (!Array.isArray(result.tools)) return
  for (const tool of result.tools) {
    if (isJsonObject(tool) && typeof tool.name === "string" && isJsonObject(tool.inputSchema)) {
      index.set(tool.name, tool.inputSchema)
    }
  }
}
