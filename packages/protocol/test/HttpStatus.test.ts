import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as HttpStatus from "../src/HttpStatus.js"
import * as JsonRpc from "../src/JsonRpc.js"

describe("HttpStatus.modernStatus", () => {
  it("is 200 for a result", () => {
    assert.strictEqual(HttpStatus.modernStatus(JsonRpc.success(1, {})), 200)
  })

  // Seed 002: the six client errors are 400, -32601 is 404, and every other code 200.
  const table: ReadonlyArray<readonly [number, number]> = [
    [-32020, 400],
    [-32021, 400],
    [-32022, 400],
    [-32602, 400],
    [-32600, 400],
    [-32700, 400],
    [-32601, 404],
    [-32002, 200],
    [-32603, 200],
    [-32000, 200],
    [-32001, 200],
    [-32019, 200],
    [-32042, 200],
    [1, 200],
    [-1, 200]
  ]
  for (const [code, status] of table) {
    it(`maps ${code} to ${status}`, () => {
      assert.strictEqual(HttpStatus.modernStatus(JsonRpc.failure(1, code, "m")), status)
      assert.strictEqual(HttpStatus.statusForErrorCode(code), status)
    })
  }

  it("is the same for an id-less error", () => {
    assert.strictEqual(HttpStatus.modernStatus(JsonRpc.failure(undefined, -32700, "m")), 400)
  })

  it.prop("is a function of the code alone, and always one of the documented statuses", [
    FastCheck.integer(),
    FastCheck.oneof(FastCheck.string(), FastCheck.integer())
  ], ([code, id]) => {
    const s = HttpStatus.modernStatus(JsonRpc.failure(id, code, "m", { any: "data" }))
    assert.strictEqual(s, HttpStatus.statusForErrorCode(code))
    assert.oneOf(s, [200, 400, 404])
  })
})
