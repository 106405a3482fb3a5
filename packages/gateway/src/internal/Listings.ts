/**
 * What the gateway shows of its servers' lists: each server's items under the host-visible names,
 * merged into one listing with a failure per server that could not answer, and the changes an
 * upstream announces turned into the gateway's own.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Effect from "effect/Effect"
import type * as Predicate from "effect/Predicate"
import type { Caller, GatewayChange, GatewayServer, Listing, ListingFailure } from "../GatewayModel.js"
import * as Names from "../Names.js"

export interface ListingDeps {
  readonly servers: () => ReadonlyArray<GatewayServer>
  readonly listServerTools: (server: GatewayServer, caller: Caller) => Effect.Effect<ReadonlyArray<JsonObject>, { readonly message: string }>
  readonly listAll: (
    server: GatewayServer,
    caller: Caller,
    method: string,
    key: string
  ) => Effect.Effect<ReadonlyArray<JsonObject>, { readonly message: string }>
  /** The server's tool patterns that match none of its tools, as warnings. */
  readonly unmatchedPatterns: (server: GatewayServer, tools: ReadonlyArray<JsonObject>) => Effect.Effect<ReadonlyArray<ListingFailure>>
  readonly visible: (server: GatewayServer, tool: JsonObject) => boolean
}

/** One list method across every server (or those `only` accepts); a server that fails is a failure, not an error. */
export const aggregate = (deps: ListingDeps) =>
(
  method: string,
  key: string,
  rename: (server: GatewayServer, item: JsonObject) => JsonObject
) =>
(caller: Caller, only?: Predicate.Predicate<GatewayServer>): Effect.Effect<Listing> =>
  Effect.forEach(
    only === undefined ? deps.servers() : deps.servers().filter(only),
    (server) =>
      (method === Method.ToolsList ? deps.listServerTools(server, caller) : deps.listAll(server, caller, method, key)).pipe(
        Effect.flatMap((items) =>
          Effect.map(method === Method.ToolsList ? deps.unmatchedPatterns(server, items) : Effect.succeed<ReadonlyArray<ListingFailure>>([]), (warnings) => ({
            items: (method === Method.ToolsList ? items.filter((t) => deps.visible(server, t)) : items).map((item) => rename(server, item)),
            failure: undefined,
            warnings
          }))
        ),
        Effect.catchAll((e) => Effect.succeed({ items: [], failure: { server: server.name, message: e.message } as ListingFailure, warnings: [] }))
      ),
    { concurrency: "unbounded" }
  ).pipe(
    Effect.map((parts) => ({
      items: parts.flatMap((p) => p.items),
      failures: parts.flatMap((p) => (p.failure === undefined ? [] : [p.failure])),
      warnings: parts.flatMap((p) => p.warnings)
    }))
  )

/** An item with its name (or URI) as hosts see it. */
export const renamed = (field: "name" | "uri" | "uriTemplate") => (server: GatewayServer, item: JsonObject): JsonObject => {
  const value = item[field]
  if (typeof value !== "string") return item
  return { ...item, [field]: field === "name" ? Names.qualify(server, value) : Names.qualifyUri(server, value) }
}

/** The gateway's change for an upstream's list_changed or resource update; none for anything else. */
export const changeOf = (server: GatewayServer, method: string, params: JsonObject | undefined): GatewayChange | undefined => {
  switch (method) {
    case Method.NotificationsToolsListChanged:
      return { _tag: "ToolsListChanged", server: server.name }
    case Method.NotificationsPromptsListChanged:
      return { _tag: "PromptsListChanged", server: server.name }
    case Method.NotificationsResourcesListChanged:
      return { _tag: "ResourcesListChanged", server: server.name }
    case Method.NotificationsResourcesUpdated:
      return typeof params?.uri === "string"
        ? { _tag: "ResourceUpdated", server: server.name, uri: Names.qualifyUri(server, params.uri) }
        : undefined
    default:
      return undefined
  }
}
