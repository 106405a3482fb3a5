/**
 * The input schema of the tool a modern `tools/call` names, for checking its `Mcp-Param-*` headers
 * against the tool's `x-mcp-header` annotations. Only the called tool's server is asked, through
 * the ToolCatalog (its listing is kept until that server's tools change, and a name it lacks is
 * remembered as missing), so a call to one server never waits on another being started or listed.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { Gateway } from "./Gateway.js"

/** Looks up a tool's `inputSchema` by the name hosts call it by; undefined when no server offers it. */
export type SchemaLookup = (tool: string) => Effect.Effect<unknown>

/**
 * A lookup over `gateway`. A tool that cannot be described (unknown, hidden, its server down) has
 * no schema to check against: the call itself then says what is wrong.
 */
export const make = (gateway: Gateway["Type"]): Effect.Effect<SchemaLookup, never, Scope.Scope> =>
  Effect.succeed((tool) => {
    // Nearly every call names a tool the live listing has: its schema is read in place.
    const known = gateway.peekTool(tool)
    if (known !== undefined) return Effect.succeed(known.inputSchema)
    return gateway.describeTool({}, tool, { suggest: false }).pipe(
      Effect.option,
      Effect.map((described) => Option.getOrUndefined(Option.map(described, (t) => t.inputSchema)))
    )
  })
