/**
 * What a host's frame is held to before anything walks it (JsonRpc.decodeHostFrame): a nesting
 * bound, a batch-length bound, and numeric ids that a JavaScript number holds exactly.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as FrameScan from "../src/FrameScan.js"
import * as JsonRpc from "../src/JsonRpc.js"

const refused = (text: string, limits?: JsonRpc.FrameLimits): JsonRpc.FrameError => {
  const r = JsonRpc.decodeHostFrame(text, limits)
  if (Either.isRight(r)) throw new Error(`expected ${text.slice(0, 80)} to be refused`)
  return r.left
}

const nested = (levels: number): string =>
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":${"[".repeat(levels)}${"]".repeat(levels)}}}}`

describe("JsonRpc.decodeHostFrame", () => {
  it("refuses a frame nested past the bound with -32600 naming it, under the message's own id", () => {
    const e = refused(nested(5_000))
    assert.strictEqual(e.code, -32600)
    assert.include(e.reason, `${JsonRpc.MaxDepth} levels`)
    assert.strictEqual(e.id, 1)
    assert.strictEqual(JsonRpc.frameErrorResponse(e).id, 1)
    assert.include(JsonRpc.frameErrorResponse(e).error.message, "128")
  })

  it("reads a too-deep message's id wherever it stands, and leaves out one it cannot echo exactly", () => {
    const deep = `${"[".repeat(5_000)}${"]".repeat(5_000)}`
    const idAfter = (id: string) => `{"jsonrpc":"2.0","method":"tools/call","params":{"a":${deep}},"id":${id}}`
    assert.strictEqual(refused(idAfter(`"s-1"`)).id, "s-1")
    assert.strictEqual(refused(idAfter("7")).id, 7)
    assert.isUndefined(refused(idAfter("1e-400")).id)
    assert.isUndefined(refused(idAfter("9007199254740993")).id)
    // A batch is refused whole: no one id names it.
    assert.isUndefined(refused(`[${nested(5_000)}]`).id)
    // A notification has no id to answer under.
    assert.isUndefined(refused(`{"jsonrpc":"2.0","method":"x","params":{"a":${deep}}}`).id)
  })

  it("takes a frame exactly at the bound and refuses one level more", () => {
    // The envelope, params and arguments are 3 levels; the array adds the rest.
    assert.isTrue(Either.isRight(JsonRpc.decodeHostFrame(nested(JsonRpc.MaxDepth - 3))))
    assert.strictEqual(refused(nested(JsonRpc.MaxDepth - 2)).code, -32600)
  })

  it("counts brackets inside strings as text, not nesting", () => {
    const text = `{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"${"[{".repeat(1000)}\\"${"[".repeat(500)}"}}`
    assert.isTrue(Either.isRight(JsonRpc.decodeHostFrame(text)))
  })

  it("still says -32700 for text that is not JSON, however deep", () => {
    assert.strictEqual(refused("[".repeat(10_000)).code, -32700)
  })

  it("refuses a batch longer than maxBatch whole, naming the bound", () => {
    const batch = JSON.stringify(Array.from({ length: 101 }, (_, i) => JsonRpc.request(i, "ping")))
    const e = refused(batch, { maxBatch: 100 })
    assert.strictEqual(e.code, -32600)
    assert.include(e.reason, "at most 100")
    assert.include(e.reason, "101")
    const ok = JsonRpc.decodeHostFrame(JSON.stringify(JSON.parse(batch).slice(0, 100)), { maxBatch: 100 })
    assert.isTrue(Either.isRight(ok))
  })

  for (const id of ["1e400", "-1e400", "1e-400", "9007199254740993", "9007199254740992", "-9007199254740993", "0.1000000000000000055511151231257827"]) {
    it(`refuses the id ${id} with -32600 and no id`, () => {
      const e = refused(`{"jsonrpc":"2.0","id":${id},"method":"ping"}`)
      assert.strictEqual(e.code, -32600)
      assert.isUndefined(e.id)
      assert.include(e.reason, id)
    })
  }

  for (const id of ["0", "-0", "7", "9007199254740991", "-9007199254740991", "1.5", "1.0", "5e-1", "1E3", "0.1"]) {
    it(`takes the id ${id}, which a number holds exactly`, () => {
      const r = JsonRpc.decodeHostFrame(`{"jsonrpc":"2.0","id" : ${id},"method":"ping"}`)
      assert.isTrue(Either.isRight(r), id)
    })
  }

  it("refuses only the batch element whose id is inexact", () => {
    const r = JsonRpc.decodeHostFrame(
      `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1e400,"method":"ping"},{"jsonrpc":"2.0","id":"s","method":"ping"}]`
    )
    if (Either.isLeft(r) || r.right._tag !== "Batch") throw new Error("expected a batch")
    assert.deepStrictEqual(r.right.elements.map(Either.isRight), [true, false, true])
  })

  it("looks only at the message's own id, not at ids inside params", () => {
    const r = JsonRpc.decodeHostFrame(`{"jsonrpc":"2.0","id":2,"method":"x","params":{"id":1e400,"deep":{"id":9007199254740993}}}`)
    assert.isTrue(Either.isRight(r))
  })

  it("reads an escaped key as the key it spells", () => {
    assert.strictEqual(refused(`{"jsonrpc":"2.0","\\u0069d":1e400,"method":"ping"}`).code, -32600)
  })

  it("agrees with a number's own round trip for any safe integer and any double", () => {
    FastCheck.assert(FastCheck.property(FastCheck.maxSafeInteger(), (n) => FrameScan.isExactNumber(String(n))))
    FastCheck.assert(
      FastCheck.property(
        FastCheck.double({ noNaN: true, noDefaultInfinity: true }),
        (n) => Number.isInteger(n) && !Number.isSafeInteger(n) ? !FrameScan.isExactNumber(String(n)) : FrameScan.isExactNumber(JSON.stringify(n))
      )
    )
  })
})
