/**
 * Server rows (`/v1/status`, `/v1/servers`) quote what an upstream said when it failed to start: a
 * lane's cooldown keeps its last failure. It is redacted as the rest of the row is.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { call, dependencies, webHandler } from "./support/ApiHarness.js"

/** A server whose process says where it failed, secrets and all, and exits. */
const leaky = {
  command: process.execPath,
  args: ["-e", "process.stderr.write('GET https://api.example.com/x?token=tok-0123456789&api_key=key-0123456789 refused'); process.exit(4)"]
}

type Row = { readonly name: string; readonly pool: { readonly lanes: ReadonlyArray<{ readonly cooldown?: { readonly lastFailure: string } }> } | null }

const lastFailures = (rows: ReadonlyArray<Row>) =>
  rows.filter((r) => r.name === "leaky").flatMap((r) => r.pool?.lanes ?? []).flatMap((l) => (l.cooldown === undefined ? [] : [l.cooldown.lastFailure]))

describe("/v1 server rows", () => {
  it.scopedLive("v1/servers and v1/status: a cooldown's last failure shows no token= or api_key= value", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const failed = yield* call(web.handler, "POST", "/v1/call", { tool: "leaky__anything" })
      assert.strictEqual(failed.status, 502, JSON.stringify(failed.body))
      for (const path of ["/v1/servers", "/v1/status"]) {
        const { body } = yield* call(web.handler, "GET", path)
        const failures = lastFailures(body.servers as ReadonlyArray<Row>)
        assert.isNotEmpty(failures, `${path}: ${JSON.stringify(body.servers)}`)
        for (const f of failures) {
          assert.include(f, "token=[redacted]", path)
          assert.notInclude(f, "0123456789", path)
        }
      }
    }).pipe(Effect.provide(dependencies({ leaky }))))
})
