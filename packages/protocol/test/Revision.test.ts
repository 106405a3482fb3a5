import { assert, describe, it } from "@effect/vitest"
import * as Revision from "../src/Revision.js"

describe("Revision", () => {
  it("keeps the legacy and modern lists apart", () => {
    for (const v of Revision.LegacyRevisions) assert.strictEqual(Revision.eraOf(v), "legacy")
    for (const v of Revision.ModernRevisions) assert.strictEqual(Revision.eraOf(v), "modern")
    assert.isFalse(Revision.isLegacyRevision("2026-07-28"))
    assert.isFalse(Revision.isModernRevision("2025-11-25"))
  })

  it("orders revisions by date", () => {
    const sorted = [...Revision.AllRevisions].sort(Revision.compare)
    assert.deepStrictEqual(sorted, [...Revision.AllRevisions])
    assert.isTrue(Revision.atLeast("2025-06-18", "2025-06-18"))
    assert.isFalse(Revision.atLeast("2025-03-26", "2025-06-18"))
  })

  it("picks the newest mutual version and ignores unknown ones", () => {
    assert.strictEqual(Revision.newestMutual(Revision.LegacyRevisions, ["2025-06-18", "2099-01-01", "2024-11-05"]), "2025-06-18")
    assert.strictEqual(Revision.newestMutual(Revision.ModernRevisions, ["2025-11-25"]), undefined)
  })

  it("allows batches only in 2025-03-26", () => {
    assert.deepStrictEqual(Revision.AllRevisions.filter(Revision.allowsBatches), ["2025-03-26"])
  })
})
