/**
 * A tool's arguments checked against its `inputSchema` before the upstream is called, for the
 * callers that are not MCP hosts (`POST /v1/call`, `/v1/ask`, and so `mcpx-fx call`): a wrong type
 * or a missing field is their mistake to fix, named by field, rather than a tool result with
 * `isError` (or -32602) after the server was started. `/mcp` passes arguments through unchanged:
 * there the upstream's own answer is the protocol's.
 *
 * The check is ajv's; a schema it cannot compile (an external `$ref`, a draft it does not know)
 * checks nothing, and the upstream decides.
 */
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import type { ErrorObject, ValidateFunction } from "ajv"
import * as Effect from "effect/Effect"
import { BadArguments } from "./ApiErrors.js"
import type { Gateway } from "@mcpx-fx/gateway/Gateway"
import type { Resolution } from "@mcpx-fx/gateway/CallResolution"
import type { Caller, GatewayCallError } from "@mcpx-fx/gateway/GatewayModel"

type GatewayService = Gateway["Type"]

// Loaded at the first check: most commands never call a tool, and ajv is a large module.
const validators = Effect.cached(Effect.promise(async () => {
  const [{ Ajv2020 }, { Ajv }] = await Promise.all([import("ajv/dist/2020.js"), import("ajv")])
  // Formats are not checked (hosts and servers disagree on them); unknown keywords are allowed, as
  // JSON Schema allows them.
  // Two tools may well give their schemas the same $id: none is kept by the instance.
  const options = { strict: false, validateFormats: false, logger: false, allErrors: false, addUsedSchema: false } as const
  const compiled = new WeakMap<object, ValidateFunction | null>()
  const drafts = [new Ajv2020(options), new Ajv(options)]
  return (schema: JsonObject): ValidateFunction | null => {
    const known = compiled.get(schema)
    if (known !== undefined) return known
    // 2020-12 is MCP's default dialect; a draft-07 schema (which ajv's 2020 instance does not
    // know by its $schema) is compiled by the draft-07 instance.
    const { $schema: _, ...body } = schema
    let validate: ValidateFunction | null = null
    for (const ajv of drafts) {
      try {
        validate = ajv.compile(body)
        break
      } catch {
        continue
      }
    }
    compiled.set(schema, validate)
    return validate
  }
})).pipe(Effect.runSync)

const describe = (tool: string, error: ErrorObject): BadArguments => {
  const path = error.instancePath.split("/").slice(1).map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~")).join(".")
  const params: Record<string, unknown> = error.params
  const child = typeof params.missingProperty === "string"
    ? params.missingProperty
    : typeof params.additionalProperty === "string"
    ? params.additionalProperty
    : undefined
  const field = [path, child].filter((p) => p !== undefined && p !== "").join(".")
  const what = error.keyword === "required"
    ? "is required"
    : error.keyword === "additionalProperties"
    ? "is not an argument of this tool"
    : error.message ?? "does not fit the tool's inputSchema"
  return new BadArguments({
    tool,
    detail: field === "" ? `arguments ${what}` : `${field} ${what}`,
    ...(field === "" ? {} : { field })
  })
}

/** Arguments that fit their tool, and the tool's resolution for the call to use. */
export interface Checked {
  readonly args: JsonObject
  /**
   * The call's one resolution (CallResolution.ts), made by this check as the call's own caller:
   * handed to `Gateway.callTool`, it is not made again (unless a reload came in between).
   */
  readonly resolution: Resolution
}

/**
 * `args` as a JSON object that fits `tool`'s inputSchema, with the tool's resolution, or
 * BadArguments naming the first field that does not. The tool is resolved as the call would
 * resolve it (an unknown one fails here the same way, with the closest names).
 */
export const check = (
  gateway: GatewayService,
  caller: Caller,
  tool: string,
  args: unknown
): Effect.Effect<Checked, BadArguments | GatewayCallError> =>
  Effect.gen(function*() {
    if (!isJsonObject(args)) {
      return yield* new BadArguments({ tool, detail: `arguments must be a JSON object, got ${Array.isArray(args) ? "an array" : typeof args}` })
    }
    const resolution = gateway.peekTool(tool) ?? (yield* gateway.resolveTool(caller, tool))
    const checked: Checked = { args, resolution }
    const schema = resolution.inputSchema
    if (!isJsonObject(schema)) return checked
    const validate = (yield* validators)(schema)
    if (validate === null || validate(args)) return checked
    const first = validate.errors?.[0]
    return yield* first === undefined ? new BadArguments({ tool, detail: "arguments do not fit the tool's inputSchema" }) : describe(tool, first)
  })
