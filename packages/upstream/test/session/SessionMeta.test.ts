/**
 * The `_meta` an upstream request goes with: a caller's reserved keys never pass, its other keys
 * do, and mcpx-fx's own envelope is what the modern upstream reads, whatever the caller sent.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Meta from "@mcpx-fx/protocol/Meta"
import { stripReservedMeta, withModernMeta } from "../../src/session/internal/SessionMeta.js"

const fields: Meta.RequestMetaFields = {
  protocolVersion: "2026-07-28",
  clientCapabilities: { sampling: {} },
  clientInfo: { name: "mcpx-fx", version: "1" }
}

const callerMeta = {
  [Meta.ProtocolVersionKey]: "2099-01-01",
  [Meta.ClientInfoKey]: { name: "host", version: "9" },
  progressToken: 7,
  "example.com/trace": "t"
}

describe("SessionMeta", () => {
  it("sessionMeta/modern: the caller's unreserved keys, then mcpx-fx's envelope over its reserved ones", () => {
    const params = { name: "echo", arguments: { a: 1 }, _meta: callerMeta }
    const sent = withModernMeta(params, fields)
    assert.deepStrictEqual(sent, {
      name: "echo",
      arguments: { a: 1 },
      _meta: {
        progressToken: 7,
        "example.com/trace": "t",
        [Meta.ProtocolVersionKey]: "2026-07-28",
        [Meta.ClientCapabilitiesKey]: { sampling: {} },
        [Meta.ClientInfoKey]: { name: "mcpx-fx", version: "1" }
      }
    })
    // The caller's params are left as they were.
    assert.strictEqual(params._meta, callerMeta)
    assert.deepStrictEqual(withModernMeta({ name: "echo" }, fields), { name: "echo", _meta: Meta.requestMeta(fields) })
    assert.deepStrictEqual(withModernMeta(undefined, fields), { _meta: Meta.requestMeta(fields) })
  })

  it("sessionMeta/legacy: the caller's reserved keys go, its others stay, and an empty _meta goes too", () => {
    assert.deepStrictEqual(stripReservedMeta({ name: "echo", _meta: callerMeta }), {
      name: "echo",
      _meta: { progressToken: 7, "example.com/trace": "t" }
    })
    assert.deepStrictEqual(stripReservedMeta({ name: "echo", _meta: { [Meta.ProtocolVersionKey]: "2026-07-28" } }), { name: "echo" })
    assert.deepStrictEqual(stripReservedMeta({ name: "echo" }), { name: "echo" })
  })
})
