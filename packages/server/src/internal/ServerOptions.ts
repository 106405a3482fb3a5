/**
 * What the Server says about itself, and the defaults: kept apart from Server.ts, which is the
 * request handling.
 */
import type { Implementation } from "@mcpx-fx/protocol/Implementation"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type { CacheScope } from "@mcpx-fx/protocol/Result"
import * as TasksExtension from "@mcpx-fx/protocol/TasksExtension"

/** What the Server says about itself. */
export interface ServerOptions {
  readonly serverInfo: Implementation
  readonly instructions?: string
  /** Capabilities in the union shape of every era; each revision is sent what it can express. */
  readonly capabilities: JsonObject
  /** Caching hints of `server/discover`: the answer depends on nobody, so it may be public. */
  readonly discoverTtlMs: number
  readonly discoverCacheScope: CacheScope
  /** Caching hints of listings and reads: upstream lists change, so the default is not to cache. */
  readonly listTtlMs: number
  readonly listCacheScope: CacheScope
}

/** The defaults: every feature the Backend serves; list changes and resource updates are delivered (Subscriptions). */
export const DefaultOptions: ServerOptions = {
  serverInfo: { name: "mcpx-fx", version: "0.1.0" },
  capabilities: {
    tools: { listChanged: true },
    prompts: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    completions: {},
    // Each era gets its own: the extension for 2026-07-28, core tasks for 2025-11-25.
    extensions: { [TasksExtension.ExtensionId]: {} },
    tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } }
  },
  discoverTtlMs: 60_000,
  discoverCacheScope: "public",
  listTtlMs: 0,
  listCacheScope: "private"
}
