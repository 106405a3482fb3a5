import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import { Gateway } from "../src/Gateway.js"
import * as ToolSchemas from "../src/ToolSchemas.js"
import { era, layer as gatewayFor } from "./support/TestGateway.js"

describe("ToolSchemas", () => {
  it.scopedLive("gateway/schemas/a tool's schema is listed once and again only after a tools list_changed", () =>
    Effect.gen(function*() {
      const gateway = yield* Gateway
      const listings = yield* Ref.make(0)
      const counting = { ...gateway, listTools: (caller: Parameters<typeof gateway.listTools>[0]) => Effect.zipRight(Ref.update(listings, (n) => n + 1), gateway.listTools(caller)) }
      const lookup = yield* ToolSchemas.make(counting)
      const echo = yield* lookup("beta__echo")
      assert.deepInclude(echo as object, { type: "object" })
      yield* lookup("beta__echo")
      yield* lookup("beta__hello")
      assert.strictEqual(yield* Ref.get(listings), 1)
      assert.isUndefined(yield* lookup("beta__nothing"))
      assert.strictEqual(yield* Ref.get(listings), 2)
      // The upstream says its tools changed: the next lookup lists again.
      const changes = yield* gateway.changes
      yield* gateway.callTool({}, "beta__notify_changes", {})
      assert.strictEqual((yield* Queue.take(changes))._tag, "ToolsListChanged")
      const relisted = lookup("beta__echo").pipe(
        Effect.zipRight(Ref.get(listings)),
        Effect.repeat({ until: (n) => n >= 3 })
      )
      assert.strictEqual(yield* relisted, 3)
    }).pipe(Effect.provide(gatewayFor({ beta: era("legacy-32601") }))))
})
