/**
 * The catalog's live listing and a change told while a listing is under way: the listing answered
 * before the change may predate it, so it is handed back but not kept, and the next lookup lists again.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { StdioDefinition } from "@mcpx-fx/upstream/ServerDefinition"
import { ToolCatalog } from "../src/ToolCatalog.js"

const server = { name: "beta", definition: StdioDefinition.make({ transport: "stdio", name: "beta", command: "beta-server" }) }
const tool = (name: string) => ({ name, inputSchema: { type: "object" } })

describe("ToolCatalog", () => {
  it.effect("gateway/catalog/a listing overtaken by a tools change is answered but not kept", () =>
    Effect.gen(function*() {
      const catalog = yield* ToolCatalog
      const gate = yield* Deferred.make<void>()
      const slow = Effect.as(Deferred.await(gate), [tool("old")])
      const listing = yield* Effect.fork(catalog.refresh(server, slow))
      yield* Effect.yieldNow()
      yield* catalog.forget("beta")
      yield* Deferred.succeed(gate, undefined)
      assert.deepStrictEqual((yield* Fiber.join(listing)).map((t) => t.name), ["old"])
      assert.isTrue(Option.isNone(yield* catalog.live("beta")))
      // With no change under it, a listing is kept, and lookups answer from it without listing.
      yield* catalog.refresh(server, Effect.succeed([tool("new")]))
      const live = yield* catalog.live("beta")
      assert.deepStrictEqual(Option.getOrThrow(Option.map(live, (k) => k.tools.map((t) => t.name))), ["new"])
      const found = yield* catalog.lookup(server, "new", Effect.die("listed again"))
      assert.isTrue(Option.isSome(found))
    }).pipe(Effect.provide(ToolCatalog.layerMemory)))

  it.effect("gateway/catalog/a lookup whose listing was overtaken lists again next time", () =>
    Effect.gen(function*() {
      const catalog = yield* ToolCatalog
      let lists = 0
      const gate = yield* Deferred.make<void>()
      const first = Effect.zipRight(Effect.sync(() => lists++), Effect.as(Deferred.await(gate), [tool("old")]))
      const lookup = yield* Effect.fork(catalog.lookup(server, "gone", first))
      yield* Effect.yieldNow()
      yield* catalog.forget("beta")
      yield* Deferred.succeed(gate, undefined)
      assert.isTrue(Option.isNone(yield* Fiber.join(lookup)))
      // The miss was not remembered from a listing that predates the change.
      const again = Effect.zipRight(Effect.sync(() => lists++), Effect.succeed([tool("gone")]))
      assert.isTrue(Option.isSome(yield* catalog.lookup(server, "gone", again)))
      assert.strictEqual(lists, 2)
    }).pipe(Effect.provide(ToolCatalog.layerMemory)))
})
