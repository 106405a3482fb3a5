/**
 * The in-place twin of `abortable` (@mcpx-fx/cancel/Abortable), transport/internal/InPlace.ts,
 * over random sequences of: an abort, the call starting to wait, letting go of that wait, and the call finishing. The first
 * abort before the finish is the call's error; a wait is ended exactly once if the cut comes while
 * it is the one watched (at once if the call was cut already), and never after it was let go of,
 * replaced by a later wait, or the call finished.
 */
import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import { InPlaceCall } from "../../src/transport/internal/InPlace.js"

const step = FastCheck.oneof(
  FastCheck.record({ op: FastCheck.constant("abort" as const), error: FastCheck.integer({ min: 0, max: 9 }) }),
  FastCheck.record({ op: FastCheck.constant("letGo" as const), which: FastCheck.nat(5) }),
  FastCheck.record({ op: FastCheck.constantFrom("wait" as const, "finish" as const) })
)

describe("InPlaceCall (properties)", () => {
  it.prop("upstream/in-place/the first abort before the finish is the error; each wait is ended at most once", [
    FastCheck.array(step, { maxLength: 12 })
  ], ([steps]) => {
    const call = new InPlaceCall<number>()
    // The model: the error, whether the call is over, the one wait an abort would end, and how
    // many times each wait should have been ended.
    let cut: number | undefined
    let over = false
    let watched: number | undefined
    const expected: Array<number> = []
    const ended: Array<number> = []
    const letGos: Array<() => void> = []
    for (const s of steps) {
      if (s.op === "abort") {
        call.abort(s.error)
        if (!over && cut === undefined) {
          cut = s.error
          if (watched !== undefined) expected[watched]++
          watched = undefined
        }
      } else if (s.op === "wait") {
        const i = ended.length
        ended.push(0)
        expected.push(cut === undefined ? 0 : 1)
        if (cut === undefined) watched = i
        letGos.push(call.waitingOn(() => void ended[i]++))
      } else if (s.op === "letGo") {
        // Some earlier wait lets go; it stops being watched only if it still was.
        const i = letGos.length === 0 ? -1 : s.which % letGos.length
        letGos[i]?.()
        if (watched === i) watched = undefined
      } else {
        call.finish()
        over = true
        watched = undefined
      }
      assert.strictEqual(call.isCut, cut !== undefined)
      assert.deepStrictEqual(call.error, cut === undefined ? undefined : { error: cut })
      assert.deepStrictEqual(ended, expected)
    }
    return true
  }, { fastCheck: { numRuns: 1000 } })
})
