import { assert, describe, it } from "@effect/vitest"
import * as Option from "effect/Option"
import type { EraRecord } from "../../src/era/EraCache.js"
import type { Preference } from "../../src/era/Preference.js"
import { type Plan, plan, type PlanInput, readsCache } from "../../src/era/ProbePlan.js"

const at = Date.UTC(2026, 0, 2, 3, 4, 5)
const modern: EraRecord = { era: "modern", version: "2026-07-28", at, source: "probe" }
const legacy: EraRecord = { era: "legacy", version: "2025-11-25", at, source: "probe" }
const exclusive = (r: EraRecord): EraRecord => ({ ...r, exclusive: true })

const input = (preference: Preference, extra: Partial<PlanInput> = {}): PlanInput => ({
  transport: "stdio",
  preference,
  ignoreCache: false,
  distrustCache: false,
  ...extra
})

/** The order of attempts, in words: what is sent first, what follows a refusal, and whence the era. */
const order = (p: Plan): string => {
  const other = p.first === "discover" ? "initialize" : "discover"
  const next = p.then === "fail" ? "fail" : other
  const stdio = p.bound === undefined ? "" : ` [alongside after ${p.bound} bound${p.restart ? ", restart legacy-only" : ""}]`
  return `${p.first} -> ${next} (${p.source})${stdio}${p.sseFallback ? " [+sse]" : ""}`
}

const orderOf = (preference: Preference, cached: Option.Option<EraRecord>, extra: Partial<PlanInput> = {}) => order(plan(input(preference, extra), cached))

describe("ProbePlan", () => {
  // preference × cache state → the order of attempts on a stdio server.
  const table: ReadonlyArray<readonly [Preference, string, Option.Option<EraRecord>, string]> = [
    ["prefer-discover", "no record", Option.none(), "discover -> initialize (probe) [alongside after probe bound, restart legacy-only]"],
    ["prefer-discover", "modern", Option.some(modern), "discover -> initialize (cache) [alongside after cached bound, restart legacy-only]"],
    ["prefer-discover", "legacy (dual)", Option.some(legacy), "discover -> initialize (probe) [alongside after probe bound, restart legacy-only]"],
    ["prefer-discover", "legacy only", Option.some(exclusive(legacy)), "initialize -> discover (cache)"],
    ["follow", "no record", Option.none(), "discover -> initialize (probe) [alongside after probe bound, restart legacy-only]"],
    ["follow", "legacy only", Option.some(exclusive(legacy)), "initialize -> discover (cache)"],
    ["prefer-initialize", "no record", Option.none(), "initialize -> discover (probe)"],
    ["prefer-initialize", "legacy", Option.some(legacy), "initialize -> discover (cache)"],
    ["prefer-initialize", "modern (dual)", Option.some(modern), "initialize -> discover (probe)"],
    ["prefer-initialize", "modern only", Option.some(exclusive(modern)), "discover -> initialize (cache) [alongside after cached bound, restart legacy-only]"],
    ["force-initialize", "no record", Option.none(), "initialize -> fail (forced)"],
    ["force-initialize", "modern only", Option.some(exclusive(modern)), "initialize -> fail (forced)"],
    ["force-discover", "no record", Option.none(), "discover -> fail (forced)"],
    ["force-discover", "legacy only", Option.some(exclusive(legacy)), "discover -> fail (forced)"]
  ]
  for (const [preference, state, cached, expected] of table) {
    it(`upstream/probe-plan/stdio/${preference}/${state}`, () => {
      assert.strictEqual(orderOf(preference, cached), expected)
    })
  }

  it("upstream/probe-plan/http: no bound and no restart; initialize may move to HTTP+SSE", () => {
    const http = { transport: "http" } as const
    assert.strictEqual(orderOf("prefer-discover", Option.none(), http), "discover -> initialize (probe) [+sse]")
    assert.strictEqual(orderOf("prefer-initialize", Option.none(), http), "initialize -> discover (probe) [+sse]")
    assert.strictEqual(orderOf("force-initialize", Option.none(), http), "initialize -> fail (forced) [+sse]")
    // force-discover never sends initialize.
    assert.strictEqual(orderOf("force-discover", Option.none(), http), "discover -> fail (forced)")
  })

  it("upstream/probe-plan/http: a server cached on HTTP+SSE is opened there", () => {
    const sse = Option.some<EraRecord>({ ...legacy, transport: "http+sse" })
    assert.strictEqual(plan(input("prefer-initialize", { transport: "http" }), sse).wire, "http+sse")
    assert.strictEqual(plan(input("prefer-initialize", { transport: "http" }), Option.some(legacy)).wire, undefined)
  })

  it("upstream/probe-plan/a distrusted record is forgotten, the normal order used, and still compared with", () => {
    const p = plan(input("prefer-discover", { distrustCache: true }), Option.some(modern))
    assert.strictEqual(order(p), "discover -> initialize (probe) [alongside after probe bound, restart legacy-only]")
    assert.isTrue(p.forget)
    assert.deepStrictEqual(Option.getOrThrow(p.consulted), modern)
    assert.strictEqual(p.notes.at(-1), "the cached era failed: forgetting it and probing again")
    // Nothing to forget without a record.
    assert.isFalse(plan(input("prefer-discover", { distrustCache: true }), Option.none()).forget)
  })

  it("upstream/probe-plan/force and ignoreCache neither read nor write the cache", () => {
    assert.isFalse(readsCache({ preference: "force-discover", ignoreCache: false }))
    assert.isFalse(readsCache({ preference: "prefer-discover", ignoreCache: true }))
    assert.isTrue(readsCache({ preference: "follow", ignoreCache: false }))
    const ignored = plan(input("prefer-initialize", { ignoreCache: true }), Option.some(legacy))
    assert.strictEqual(order(ignored), "initialize -> discover (probe)")
    assert.isFalse(ignored.writes)
    assert.deepStrictEqual(ignored.notes, [])
  })

  it("upstream/probe-plan/the notes tell what the cache said and why it was not followed", () => {
    const p = plan(input("prefer-initialize"), Option.some(modern))
    assert.deepStrictEqual(p.notes, [
      "era cache says modern 2026-07-28 (learned 2026-01-02T03:04:05.000Z)",
      "prefer-initialize tries legacy first, and the cache does not say the server refuses it: probing in the normal order"
    ])
    // Not consulted, so a legacy result would not be stale.
    assert.isTrue(Option.isNone(p.consulted))
    assert.isTrue(p.writes)
  })
})
