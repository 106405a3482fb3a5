/**
 * The stdio reader's line splitter: LF and CRLF, a line split across chunks (a multi-byte character
 * too), an unterminated last line kept for the next chunk, and the size cap.
 */
import { assert, describe, it } from "@effect/vitest"
import { makeLineSplitter } from "../../src/transport/internal/lines.js"
import { FrameTooLarge } from "../../src/transport/Transport.js"

const bytes = (s: string) => new TextEncoder().encode(s)

describe("lines", () => {
  it("upstream/lines/LF and CRLF end lines; the rest waits for the next chunk", () => {
    const s = makeLineSplitter(100)
    assert.deepStrictEqual(s.push(bytes("a\r\nb\nc")), ["a", "b"])
    assert.deepStrictEqual(s.push(bytes("d\n")), ["cd"])
    assert.deepStrictEqual(s.push(bytes("")), [])
  })

  it("upstream/lines/a character split across chunks is decoded whole", () => {
    const s = makeLineSplitter(100)
    const arrow = bytes("→\n")
    assert.deepStrictEqual(s.push(arrow.slice(0, 1)), [])
    assert.deepStrictEqual(s.push(arrow.slice(1)), ["→"])
  })

  it("upstream/lines/a line over the cap, ended or not, is FrameTooLarge", () => {
    assert.instanceOf(makeLineSplitter(4).push(bytes("12345\n")), FrameTooLarge)
    assert.instanceOf(makeLineSplitter(4).push(bytes("12345")), FrameTooLarge)
    assert.deepStrictEqual(makeLineSplitter(4).push(bytes("1234\n")), ["1234"])
  })
})
