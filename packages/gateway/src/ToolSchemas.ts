/**
 * The input schemas of the tools hosts see, for checking a modern `tools/call`'s `Mcp-Param-*`
 * headers against its tool's `x-mcp-header` annotations. Listing every upstream for every call
 * would start servers the call never touches, so the listing is kept until a server says its tool
 * list changed, and a name it does not hold is looked up afresh once.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import type { Gateway } from "./Gateway.js"

/** Looks up a tool's `inputSchema` by the name hosts call it by; undefined when no server offers it. */
export type SchemaLookup = (tool: string) => Effect.Effect<unknown>

const schemasOf = (items: ReadonlyArray<JsonObject>): ReadonlyMap<string, unknown> =>
  new Map(items.flatMap((t) => (typeof t.name === "string" ? [[t.name, t.inputSchema] as const] : [])))

/** A lookup over `gateway`, forgotten on every tools list_changed for as long as the scope lasts. */
export const make = (gateway: Gateway["Type"]): Effect.Effect<SchemaLookup, never, Scope.Scope> =>
  Effect.gen(function*() {
    const known = yield* Ref.make<ReadonlyMap<string, unknown> | undefined>(undefined)
    const changes = yield* gateway.changes
    yield* Queue.take(changes).pipe(
      Effect.flatMap((change) => (change._tag === "ToolsListChanged" ? Ref.set(known, undefined) : Effect.void)),
      Effect.forever,
      Effect.forkScoped
    )
    const refresh = Effect.flatMap(gateway.listTools({}), (listing) => {
      const schemas = schemasOf(listing.items)
      return Effect.as(Ref.set(known, schemas), schemas)
    })
    return (tool) =>
      Effect.gen(function*() {
        const cached = yield* Ref.get(known)
        if (cached !== undefined && cached.has(tool)) return cached.get(tool)
        return (yield* refresh).get(tool)
      })
  })
