/**
 * Client and server capabilities per era, and their projection onto a given revision.
 *
 * Legacy capabilities are declared once in `initialize`; modern ones travel in every request's
 * `_meta` (client) and in `server/discover` (server). 2026-07-28 dropped the `tasks` key on both
 * sides (tasks became the extension `io.modelcontextprotocol/tasks`) and `roots.listChanged`
 * (there is no roots notification any more), and added `extensions`.
 */
import * as Schema from "effect/Schema"
import { isJsonObject, JsonObject, open, optionalKey } from "./Json.js"
import { atLeast, isModernRevision, type Revision } from "./Revision.js"

const flag = optionalKey(JsonObject)
const experimental = optionalKey(Schema.Record({ key: Schema.String, value: JsonObject }))
const extensions = optionalKey(Schema.Record({ key: Schema.String, value: JsonObject }))
const sampling = optionalKey(open({ context: flag, tools: flag }))
const elicitation = optionalKey(open({ form: flag, url: flag }))
const listChanged = optionalKey(open({ listChanged: optionalKey(Schema.Boolean) }))

/** A server's `capabilities.tasks` (2025-11-25): the task operations it serves, the requests it augments. */
export const ServerTasksCapability = open({
  list: flag,
  cancel: flag,
  requests: optionalKey(open({ tools: optionalKey(open({ call: flag })) }))
})
/** A server's `capabilities.tasks`. */
export type ServerTasksCapability = typeof ServerTasksCapability.Type

/** A client's `capabilities.tasks` (2025-11-25): the same, for the requests a server sends it. */
export const ClientTasksCapability = open({
  list: flag,
  cancel: flag,
  requests: optionalKey(
    open({
      sampling: optionalKey(open({ createMessage: flag })),
      elicitation: optionalKey(open({ create: flag }))
    })
  )
})
/** A client's `capabilities.tasks`. */
export type ClientTasksCapability = typeof ClientTasksCapability.Type

/** Client capabilities as `initialize` declares them (2024-11-05 … 2025-11-25, the union of all). */
export const LegacyClientCapabilities = open({
  experimental,
  roots: listChanged,
  sampling,
  elicitation,
  tasks: optionalKey(ClientTasksCapability)
})
/** Legacy client capabilities. */
export type LegacyClientCapabilities = typeof LegacyClientCapabilities.Type

/** Client capabilities as a modern request's `_meta` declares them (2026-07-28). */
export const ModernClientCapabilities = open({
  experimental,
  roots: flag,
  sampling,
  elicitation,
  extensions
})
/** Modern client capabilities. */
export type ModernClientCapabilities = typeof ModernClientCapabilities.Type

/** Server capabilities as `initialize` answers them (2024-11-05 … 2025-11-25, the union of all). */
export const LegacyServerCapabilities = open({
  experimental,
  logging: flag,
  completions: flag,
  prompts: listChanged,
  resources: optionalKey(open({ subscribe: optionalKey(Schema.Boolean), listChanged: optionalKey(Schema.Boolean) })),
  tools: listChanged,
  tasks: optionalKey(ServerTasksCapability)
})
/** Legacy server capabilities. */
export type LegacyServerCapabilities = typeof LegacyServerCapabilities.Type

/** Server capabilities as `server/discover` answers them (2026-07-28). */
export const ModernServerCapabilities = open({
  experimental,
  logging: flag,
  completions: flag,
  prompts: listChanged,
  resources: optionalKey(open({ subscribe: optionalKey(Schema.Boolean), listChanged: optionalKey(Schema.Boolean) })),
  tools: listChanged,
  extensions
})
/** Modern server capabilities. */
export type ModernServerCapabilities = typeof ModernServerCapabilities.Type

/** The extension id under which 2026-07-28 negotiates tasks. */
export const TasksExtensionId = "io.modelcontextprotocol/tasks"

const pick = (o: Record<string, unknown>, keys: ReadonlyArray<string>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const k of keys) if (Object.prototype.hasOwnProperty.call(o, k)) out[k] = o[k]
  return out
}

/**
 * Whether a client that declared `caps` can be asked nothing: no elicitation, sampling or roots
 * (a ping it is never asked; mcpx-fx answers those itself).
 */
export const asksNothing = (caps: JsonObject): boolean => !isJsonObject(caps.elicitation) && !isJsonObject(caps.sampling) && !isJsonObject(caps.roots)

const sub = (v: unknown, keys: ReadonlyArray<string>): Record<string, unknown> => (isJsonObject(v) ? pick(v, keys) : {})

/**
 * The client capabilities `revision` can express, taken from capabilities of any era: keys the
 * revision lacks are dropped, nested ones too. Elicitation needs care: before 2025-11-25 an
 * `elicitation: {}` means form mode, so a client that declared only URL mode declares nothing.
 */
export const clientCapabilitiesFor = (revision: Revision, caps: JsonObject): JsonObject => {
  const modern = isModernRevision(revision)
  const rich = atLeast(revision, "2025-11-25")
  const out: Record<string, unknown> = pick(caps, ["experimental"])
  if (caps.roots !== undefined) out.roots = modern ? {} : sub(caps.roots, ["listChanged"])
  if (caps.sampling !== undefined) out.sampling = rich ? sub(caps.sampling, ["context", "tools"]) : {}
  if (caps.elicitation !== undefined && atLeast(revision, "2025-06-18")) {
    const e = isJsonObject(caps.elicitation) ? caps.elicitation : {}
    const formOnly = Object.keys(e).length === 0 || e.form !== undefined
    if (rich) out.elicitation = sub(e, ["form", "url"])
    else if (formOnly) out.elicitation = {}
  }
  if (modern) Object.assign(out, pick(caps, ["extensions"]))
  else if (rich) Object.assign(out, pick(caps, ["tasks"]))
  return out
}

/**
 * The server capabilities `revision` can express: `completions` arrived in 2025-03-26, `tasks`
 * lived only in 2025-11-25, `extensions` only in the modern era.
 */
export const serverCapabilitiesFor = (revision: Revision, caps: JsonObject): JsonObject => {
  const keys = ["experimental", "logging", "prompts", "resources", "tools"]
  if (atLeast(revision, "2025-03-26")) keys.push("completions")
  if (isModernRevision(revision)) keys.push("extensions")
  else if (revision === "2025-11-25") keys.push("tasks")
  return pick(caps, keys)
}
