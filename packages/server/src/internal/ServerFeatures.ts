/**
 * The features both eras share (listings, calls, reads, completions), dispatched to the Backend:
 * what a request asks for once its era's envelope is dealt with (Server.ts).
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Method from "@mcpx-fx/protocol/Method"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { Backend, Caller, Listing } from "../Backend.js"
import { type HandleError, InvalidParams, MethodNotFound } from "../ServerErrors.js"
import { CompleteParams, decodeParams, forwardMeta, ListParams, nameParams, PromptParams, ReadParams } from "./ServerParams.js"

/** Where a listing's per-server failures are reported, in the result's `_meta`. */
export const ListingFailuresKey = "dev.mcpx/listingFailures"

/** The dispatch over `backend`. */
export const make = (backend: Backend["Type"]) => {
  const listing = (
    list: (caller: Caller) => Effect.Effect<Listing>,
    key: string,
    caller: Caller,
    params: JsonObject
  ): Effect.Effect<JsonObject, InvalidParams> =>
    Effect.flatMap(decodeParams(ListParams, params), (p) =>
      // mcpx-fx hands out the whole aggregated list and never a cursor, so any cursor is one it
      // did not issue.
      p.cursor !== undefined
        ? Effect.fail(new InvalidParams({ detail: `unknown cursor ${JSON.stringify(p.cursor)}` }))
        : Effect.map(list(caller), (l) =>
          l.failures.length === 0
            ? { [key]: [...l.items] }
            : { [key]: [...l.items], _meta: { [ListingFailuresKey]: l.failures.map((f) => ({ ...f })) } }))

  /** The features both eras share, dispatched to the Backend. */
  const feature = (caller: Caller, method: string, params: JsonObject): Effect.Effect<JsonObject, HandleError> => {
    const meta = forwardMeta(params)
    switch (method) {
      case Method.ToolsList:
        return listing(backend.listTools, "tools", caller, params)
      case Method.PromptsList:
        return listing(backend.listPrompts, "prompts", caller, params)
      case Method.ResourcesList:
        return listing(backend.listResources, "resources", caller, params)
      case Method.ResourcesTemplatesList:
        return listing(backend.listResourceTemplates, "resourceTemplates", caller, params)
      case Method.ToolsCall: {
        // Read in place: every tool call comes this way.
        const p = nameParams(params)
        return Either.isLeft(p) ? Effect.fail(p.left) : backend.callTool(caller, p.right.name, p.right.arguments ?? {}, meta)
      }
      case Method.PromptsGet:
        return Effect.flatMap(decodeParams(PromptParams, params), (p) => backend.getPrompt(caller, p.name, p.arguments ?? {}, meta))
      case Method.ResourcesRead:
        return Effect.flatMap(decodeParams(ReadParams, params), (p) => backend.readResource(caller, p.uri, meta))
      case Method.CompletionComplete: {
        const rest: Record<string, unknown> = { ...params }
        delete rest._meta
        return Effect.flatMap(decodeParams(CompleteParams, params), () => backend.complete(caller, rest, meta))
      }
      default:
        return Effect.fail(new MethodNotFound({ method, detail: `${method} is not served by mcpx-fx` }))
    }
  }

  return feature
}
