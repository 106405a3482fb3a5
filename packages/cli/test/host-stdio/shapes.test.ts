/**
 * Server core over the bundle's stdio: every result reaches the host in its own revision's shape,
 * whatever era the upstream spoke (here a dual upstream the gateway reaches over 2026-07-28).
 * One `mcpx-fx serve` per revision, shared by its tests.
 */
import { describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { All, open, speaking } from "../support/Revisions.js"
import { assertStructuredCall, assertToolsList } from "../support/Shapes.js"
import { era, SharedServe } from "../support/StdioServe.js"

const config = { servers: { alpha: era("dual"), beta: era("legacy-32601") }, settings: { "transport.stdioDrain": "5s" } }

describe.concurrent.each(All)("%s", (revision) => {
  layer(SharedServe.layer(config, (serve) => Effect.asVoid(open(serve, revision))))("stdio shapes", (it) => {
    it.effect(`${revision}/stdio/a tool result is shaped for the revision, from either upstream era`, () =>
      Effect.gen(function*() {
        const host = speaking(yield* SharedServe, revision)
        assertStructuredCall(revision, yield* host.call("modern-upstream", "alpha__structured"))
        assertStructuredCall(revision, yield* host.call("legacy-upstream", "beta__structured"))
      }))

    it.effect(`${revision}/stdio/tools/list is shaped for the revision`, () =>
      Effect.gen(function*() {
        const host = speaking(yield* SharedServe, revision)
        const reply = yield* host.request("list", "tools/list")
        assertToolsList(revision, reply, "alpha")
        assertToolsList(revision, reply, "beta")
      }))
  })
})
