/**
 * Tool search, for configurations too large to list into a model's context. Under
 * `tools.expose: search` (or a server's own `"expose": "search"`) a host is shown three meta-tools
 * in place of those servers' tools — `mcpx_search` (ranked names and one-line descriptions),
 * `mcpx_describe` (one tool's full definition) and `mcpx_call` (runs any visible tool) — in both
 * eras, so thirty servers cost three tool definitions, not three hundred.
 *
 * Search reads what is known without starting anything (Gateway.knownTools: listings since each
 * server's last change, started servers, the schema cache in the state dir); `refresh` lists every
 * server, starting those that are not running. The names contain no `__`, so no namespaced tool
 * can take them.
 */
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as Effect from "effect/Effect"
import type { Gateway } from "./Gateway.js"
import type { Caller, GatewayServer, ListingFailure } from "./GatewayModel.js"
import type { ExposeMode } from "@mcpx-fx/config/SettingsRegistry"
import { type MatchKind, ranking, type Searchable } from "./SearchIndex.js"

/** The meta-tools' names. */
export const SearchName = "mcpx_search"
export const DescribeName = "mcpx_describe"
export const CallName = "mcpx_call"

/** The default and the largest number of results of one search. */
export const DefaultLimit = 10
export const MaxLimit = 100

/** One search hit. */
export interface Hit {
  readonly name: string
  readonly server: string
  readonly description: string
  readonly match: MatchKind
}

/** What a search found, and what it could not look at. */
export interface SearchResult {
  readonly tools: ReadonlyArray<Hit>
  /** Servers never listed (not started, not in the schema cache); `refresh` lists them. */
  readonly unlisted: ReadonlyArray<string>
  readonly failures: ReadonlyArray<ListingFailure>
}

/** What a search asks for. */
export interface SearchRequest {
  readonly query: string
  readonly limit?: number
  readonly refresh?: boolean
  /** Look at what is known only, listing no server (Gateway.knownTools); wins over `refresh`. */
  readonly cachedOnly?: boolean
}

const oneLine = (s: unknown): string => {
  const line = typeof s === "string" ? (s.split("\n")[0] ?? "").trim() : ""
  return line.length > 200 ? `${line.slice(0, 197)}...` : line
}

interface Item extends Searchable {
  readonly server: string
}

// One ranking (and so one cached index) per gateway: each has its own servers and tools.
const rankings = new WeakMap<Gateway["Type"], ReturnType<typeof ranking<Item>>>()
const rankingOf = (gateway: Gateway["Type"]) => {
  const existing = rankings.get(gateway)
  if (existing !== undefined) return existing
  const made = ranking<Item>()
  rankings.set(gateway, made)
  return made
}

/** Searches every visible tool. */
export const search = (gateway: Gateway["Type"], caller: Caller, request: SearchRequest): Effect.Effect<SearchResult> =>
  Effect.map(
    gateway.knownTools(caller, request.cachedOnly === true ? { refresh: false, cachedOnly: true } : { refresh: request.refresh === true }),
    (known) => {
      const items = known.items.map(({ server, tool }): Item => ({
        name: String(tool.name),
        tool: String(tool.name).slice(server.prefixed ? server.namespace.length + 2 : 0),
        namespace: server.namespace,
        description: typeof tool.description === "string" ? tool.description : "",
        server: server.name
      }))
      const limit = Math.min(MaxLimit, Math.max(1, Math.floor(request.limit ?? DefaultLimit)))
      return {
        tools: rankingOf(gateway).rank(items, request.query, limit).map((r) => ({
          name: r.item.name,
          server: r.item.server,
          description: oneLine(r.item.description),
          match: r.best
        })),
        unlisted: known.unlisted,
        failures: known.failures
      }
    }
  )

/** Whether a server's tools are behind the meta-tools. */
export const searched = (mode: ExposeMode) => (server: GatewayServer): boolean => (server.configured.expose ?? mode) === "search"

/** The three meta-tools' definitions. */
export const definitions: ReadonlyArray<JsonObject> = [
  {
    name: SearchName,
    title: "Search tools",
    description: "Search the tools of every connected server by name, namespace and description; returns the best matches " +
      "(name and one line each). Use mcpx_describe for a tool's arguments, then mcpx_call to run it.",
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", description: "Words to look for, e.g. \"github issues\"; empty lists every tool." },
        limit: { type: "integer", minimum: 1, maximum: MaxLimit, description: `How many results (default ${DefaultLimit}).` },
        refresh: { type: "boolean", description: "Also list servers not started yet (starts them; slower)." }
      },
      required: ["query"]
    },
    annotations: { readOnlyHint: true, openWorldHint: false }
  },
  {
    name: DescribeName,
    title: "Describe a tool",
    description: "The full definition of one tool found by mcpx_search: its description and input schema.",
    inputSchema: {
      type: "object",
      properties: { name: { type: "string", description: "The tool's name as mcpx_search gave it." } },
      required: ["name"]
    },
    annotations: { readOnlyHint: true, openWorldHint: false }
  },
  {
    name: CallName,
    title: "Call a tool",
    description: "Call a tool found by mcpx_search with its arguments; returns that tool's own result.",
    inputSchema: {
      type: "object",
      properties: {
        name: { type: "string", description: "The tool's name as mcpx_search gave it." },
        arguments: { type: "object", description: "The tool's arguments, as mcpx_describe's input schema says." }
      },
      required: ["name"]
    }
  }
]

const text = (t: string, structured: JsonObject): JsonObject => ({ content: [{ type: "text", text: t }], structuredContent: structured })

/** The result of `mcpx_search`: one line per hit, and the same as structured content. */
export const searchResult = (found: SearchResult): JsonObject => {
  const lines = found.tools.map((t) => (t.description === "" ? t.name : `${t.name} — ${t.description}`))
  const notes = [
    ...(found.unlisted.length > 0 ? [`not searched (never listed; refresh: true lists them): ${found.unlisted.join(", ")}`] : []),
    ...found.failures.map((f) => `${f.server} could not be listed: ${f.message}`)
  ]
  const body = lines.length === 0 ? "no tool matched" : lines.join("\n")
  return text(notes.length === 0 ? body : `${body}\n\n${notes.join("\n")}`, {
    tools: found.tools.map((t) => ({ ...t })),
    unlisted: [...found.unlisted],
    failures: found.failures.map((f) => ({ ...f }))
  })
}

/** The result of `mcpx_describe`. */
export const describeResult = (tool: JsonObject): JsonObject => text(JSON.stringify(tool, null, 2), { tool })

/** Reads a meta-tool's arguments, or says what is wrong with them. */
export const read = {
  search: (args: JsonObject): SearchRequest | string => {
    const query = args.query ?? ""
    if (typeof query !== "string") return "query must be a string"
    if (args.limit !== undefined && (typeof args.limit !== "number" || !Number.isInteger(args.limit) || args.limit < 1)) {
      return "limit must be a positive integer"
    }
    if (args.refresh !== undefined && typeof args.refresh !== "boolean") return "refresh must be true or false"
    return {
      query,
      ...(typeof args.limit === "number" ? { limit: args.limit } : {}),
      ...(args.refresh === true ? { refresh: true } : {})
    }
  },
  name: (args: JsonObject): string | { readonly error: string } =>
    typeof args.name === "string" && args.name !== "" ? args.name : { error: "name must be a tool's name" },
  call: (args: JsonObject): { readonly name: string; readonly arguments: JsonObject } | string => {
    if (typeof args.name !== "string" || args.name === "") return "name must be a tool's name"
    const a = args.arguments ?? {}
    if (!isJsonObject(a)) return "arguments must be an object"
    return { name: args.name, arguments: a }
  }
}
