/**
 * What the gateway knows of each upstream's tools without asking it again: the listing it last
 * gave in this process (kept until the server says its tools changed), the listing it gave in an
 * earlier process (the schema cache in the state dir), and which names it was found not to have.
 *
 * Three things read it: the check that a called tool exists before the call is sent (so a
 * mistyped name is refused with the closest names, whatever the upstream's era would have said),
 * the `Mcp-Param-*` check of a modern call (which needs only the called server's schema), and tool
 * search (which must not start a server nobody has started). Each asks about one server, so a slow
 * or hung server only ever delays what is asked of it.
 *
 * The filter of what hosts may see (`tools` / `excludeTools`) is compiled with the config
 * (internal/ToolPattern.ts); search ranks what it reads here with SearchIndex.ts.
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import { cacheKey } from "@mcpx-fx/upstream/era/EraCache"
import type { ServerDefinition } from "@mcpx-fx/upstream/ServerDefinition"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as SchemaStore from "./internal/SchemaStore.js"
import { StateDir } from "@mcpx-fx/config/StateDir"

/** A server as the catalog keys it: its name in memory, its process identity on disk. */
export interface CatalogServer {
  readonly name: string
  readonly definition: ServerDefinition
}

/** A server's tools (upstream names, unfiltered) and where the listing came from. */
export interface Known {
  readonly tools: ReadonlyArray<JsonObject>
  /** `live`: listed by this process since the last change; `stored`: from the state dir. */
  readonly source: "live" | "stored"
  /** When it was listed, epoch milliseconds. */
  readonly at: number
}

interface Entry extends Known {
  readonly byName: ReadonlyMap<string, JsonObject>
  /** Names looked up and not found since this listing; cleared with it. */
  readonly misses: Set<string>
}

const entryOf = (tools: ReadonlyArray<JsonObject>, source: Known["source"], at: number): Entry => ({
  tools,
  source,
  at,
  byName: new Map(tools.flatMap((t) => (typeof t.name === "string" ? [[t.name, t] as const] : []))),
  misses: new Set()
})

/** The catalog of upstream tools. */
export class ToolCatalog extends Context.Tag("@mcpx-fx/gateway/ToolCatalog")<ToolCatalog, {
  /** The listing this process saw since the server's last change, if any. Never lists. */
  readonly live: (server: string) => Effect.Effect<Option.Option<Known>>
  /** The listing kept in the state dir from an earlier listing (this process's or another's). */
  readonly stored: (server: CatalogServer) => Effect.Effect<Option.Option<Known>>
  /** Remembers a listing just had from the server (and stores it when it changed). */
  readonly remember: (server: CatalogServer, tools: ReadonlyArray<JsonObject>) => Effect.Effect<void>
  /**
   * Lists the server with `list` and remembers what it answered, unless the server said its tools
   * changed while the listing was under way: that answer may predate the change, so it is handed
   * back to the caller but not kept.
   */
  readonly refresh: <E, R>(
    server: CatalogServer,
    list: Effect.Effect<ReadonlyArray<JsonObject>, E, R>
  ) => Effect.Effect<ReadonlyArray<JsonObject>, E, R>
  /** Forgets the live listing (the server's tools changed, or it was reconfigured); the stored one stays. */
  readonly forget: (server: string) => Effect.Effect<void>
  /**
   * A tool by its upstream name. Answered from the live listing when it has the name or has already
   * been found without it; otherwise the server is listed with `list` (once: a name still missing is
   * remembered as missing until the next change), so an unknown name never re-lists anything else.
   */
  readonly lookup: <E>(
    server: CatalogServer,
    name: string,
    list: Effect.Effect<ReadonlyArray<JsonObject>, E>
  ) => Effect.Effect<Option.Option<JsonObject>, E>
  /** A tool by its upstream name from the live listing alone, in place: undefined when that listing does not have it. */
  readonly peek: (server: CatalogServer, name: string) => JsonObject | undefined
}>() {
  /** The catalog with its schema cache in the state directory. */
  static readonly layer: Layer.Layer<ToolCatalog, never, StateDir | FileSystem.FileSystem | Path.Path> = Layer.effect(
    ToolCatalog,
    Effect.flatMap(StateDir, (dir) => Effect.flatMap(SchemaStore.file(dir.path), make))
  )

  /** The catalog without a schema cache on disk (tests, embedded gateways). */
  static readonly layerMemory: Layer.Layer<ToolCatalog> = Layer.effect(ToolCatalog, Effect.flatMap(SchemaStore.memory, make))
}

function make(store: SchemaStore.SchemaStore) {
  return Effect.gen(function*() {
    const live = new Map<string, Entry>()
    // The stored listings, read once on first use and kept in step with every write after.
    let stored: SchemaStore.Entries | undefined
    // What was last stored per key, as text, so an unchanged listing is not written again.
    const storedText = new Map<string, string>()

    const readStored = Effect.suspend(() =>
      stored !== undefined ? Effect.succeed(stored) : Effect.map(store.read, (entries) => {
        stored = entries
        for (const [k, v] of entries) storedText.set(k, JSON.stringify(v.tools))
        return entries
      })
    )

    const remember = (server: CatalogServer, tools: ReadonlyArray<JsonObject>) =>
      Effect.gen(function*() {
        const at = yield* Clock.currentTimeMillis
        live.set(server.name, entryOf(tools, "live", at))
        yield* readStored
        const key = cacheKey(server.definition)
        const text = JSON.stringify(tools)
        if (storedText.get(key) === text) return
        storedText.set(key, text)
        stored = yield* store.update((entries) => void entries.set(key, { at, tools }))
      })

    // Bumped by every change a server tells of, so a listing begun before it is not kept after it.
    const changes = new Map<string, number>()
    const changesOf = (server: string) => changes.get(server) ?? 0

    const refresh = <E, R>(server: CatalogServer, lister: Effect.Effect<ReadonlyArray<JsonObject>, E, R>) =>
      Effect.suspend(() => {
        const before = changesOf(server.name)
        return Effect.tap(lister, (tools) => (changesOf(server.name) === before ? remember(server, tools) : Effect.void))
      })

    const list = <E>(server: CatalogServer, lister: Effect.Effect<ReadonlyArray<JsonObject>, E>) =>
      Effect.map(refresh(server, lister), (tools) => live.get(server.name) ?? entryOf(tools, "live", Date.now()))

    return ToolCatalog.of({
      live: (server) => Effect.sync(() => Option.fromNullable(live.get(server))),
      stored: (server) =>
        Effect.map(readStored, (entries) =>
          Option.map(Option.fromNullable(entries.get(cacheKey(server.definition))), (s): Known => ({
            tools: s.tools,
            source: "stored",
            at: s.at
          }))),
      remember,
      refresh,
      forget: (server) =>
        Effect.sync(() => {
          live.delete(server)
          changes.set(server, changesOf(server) + 1)
        }),
      peek: (server, name) => live.get(server.name)?.byName.get(name),
      lookup: (server, name, lister) =>
        Effect.suspend(() => {
          const entry = live.get(server.name)
          if (entry !== undefined) {
            const tool = entry.byName.get(name)
            if (tool !== undefined) return Effect.succeed(Option.some(tool))
            if (entry.misses.has(name)) return Effect.succeed(Option.none())
          }
          return Effect.map(list(server, lister), (fresh) => {
            const tool = fresh.byName.get(name)
            if (tool === undefined) fresh.misses.add(name)
            return Option.fromNullable(tool)
          })
        })
    })
  })
}
