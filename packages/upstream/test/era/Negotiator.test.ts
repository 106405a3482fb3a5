import * as Revision from "@mcpx-fx/protocol/Revision"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import {
  DisjointVersionsError,
  Negotiator,
  UnacceptableVersionError,
  UnsupportedRequestedVersionError,
  VersionsExhaustedError
} from "../../src/era/Negotiator.js"

const ALL_NEWEST_FIRST = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]

describe("Negotiator", () => {
  describe("supported versions and first offers", () => {
    it.effect("lists every revision mcpx-fx can produce, per era, newest first", () =>
      Effect.gen(function*() {
        const n = yield* Negotiator
        assert.deepStrictEqual(n.supported.legacy, ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
        assert.deepStrictEqual(n.supported.modern, ["2026-07-28"])
        for (const v of n.supported.legacy) assert.strictEqual(Revision.eraOf(v), "legacy")
        for (const v of n.supported.modern) assert.strictEqual(Revision.eraOf(v), "modern")
      }).pipe(Effect.provide(Negotiator.layer)))

    it.effect("offers the newest modern version to discover and the newest legacy one to initialize", () =>
      Effect.gen(function*() {
        const n = yield* Negotiator
        assert.strictEqual(n.firstOffer("modern"), "2026-07-28")
        assert.strictEqual(n.firstOffer("legacy"), "2025-11-25")
        const negotiation = yield* n.begin
        assert.strictEqual(yield* negotiation.offer("modern"), "2026-07-28")
        assert.strictEqual(yield* negotiation.offer("legacy"), "2025-11-25")
        // Offering the same version again (e.g. resending after a transport retry) is not a new try.
        assert.strictEqual(yield* negotiation.offer("modern"), "2026-07-28")
        assert.deepStrictEqual(yield* negotiation.tried, ["2026-07-28", "2025-11-25"])
        assert.isTrue(Option.isNone(yield* negotiation.negotiated))
      }).pipe(Effect.provide(Negotiator.layer)))

    it.effect("sorts and deduplicates a narrowed version set", () =>
      Effect.gen(function*() {
        const n = yield* Negotiator
        assert.deepStrictEqual(n.supported.legacy, ["2025-06-18", "2025-03-26"])
        assert.strictEqual(n.firstOffer("legacy"), "2025-06-18")
      }).pipe(Effect.provide(Negotiator.layerVersions({
        legacy: ["2025-03-26", "2025-06-18", "2025-03-26"],
        modern: ["2026-07-28"]
      }))))

    it.effect("finds the newest mutual version, per era or across both, ignoring unknown versions", () =>
      Effect.gen(function*() {
        const n = yield* Negotiator
        const theirs = ["2099-01-01", "2025-06-18", "2026-07-28", "2024-11-05"]
        assert.deepStrictEqual(Option.getOrThrow(n.newestMutual(theirs)), "2026-07-28")
        assert.deepStrictEqual(Option.getOrThrow(n.newestMutual(theirs, "legacy")), "2025-06-18")
        assert.deepStrictEqual(Option.getOrThrow(n.newestMutual(theirs, "modern")), "2026-07-28")
        assert.isTrue(Option.isNone(n.newestMutual(["2025-11-25"], "modern")))
        assert.isTrue(Option.isNone(n.newestMutual(["2099-01-01", "1.0"])))
        assert.isTrue(Option.isNone(n.newestMutual([])))
      }).pipe(Effect.provide(Negotiator.layer)))
  })

  describe("-32022 (unsupported version) handling", () => {
    interface Case {
      readonly name: string
      /** which opening requests were sent before the refusal */
      readonly sent: ReadonlyArray<Revision.Era>
      readonly refusedEra: Revision.Era
      readonly data: unknown
      readonly expect:
        | { readonly _tag: "Retry" | "SwitchEra"; readonly era: Revision.Era; readonly version: string; readonly reason?: string }
        | { readonly _tag: "DisjointVersionsError" | "VersionsExhaustedError" }
    }
    const cases: ReadonlyArray<Case> = [
      {
        name: "modern refusal listing only legacy versions: fall back to initialize with the newest mutual one",
        sent: ["modern"],
        refusedEra: "modern",
        data: { supported: ["2025-06-18", "2025-11-25"], requested: "2026-07-28" },
        expect: { _tag: "SwitchEra", era: "legacy", version: "2025-11-25", reason: "other-era-only" }
      },
      {
        name: "modern refusal listing an older legacy version and an unknown one",
        sent: ["modern"],
        refusedEra: "modern",
        data: { supported: ["2024-10-07", "2025-03-26"] },
        expect: { _tag: "SwitchEra", era: "legacy", version: "2025-03-26", reason: "other-era-only" }
      },
      {
        name: "modern refusal for a version we did not pick (inline request): retry with the newest mutual one",
        sent: [],
        refusedEra: "modern",
        data: { supported: ["2026-07-28"], requested: "2027-01-01" },
        expect: { _tag: "Retry", era: "modern", version: "2026-07-28" }
      },
      {
        name: "modern refusal with a disjoint list",
        sent: ["modern"],
        refusedEra: "modern",
        data: { supported: ["2027-01-01", "2024-10-07"] },
        expect: { _tag: "DisjointVersionsError" }
      },
      {
        name: "modern refusal with an empty list",
        sent: ["modern"],
        refusedEra: "modern",
        data: { supported: [] },
        expect: { _tag: "DisjointVersionsError" }
      },
      {
        name: "modern refusal without data.supported: fall back to initialize (digest §2.5)",
        sent: ["modern"],
        refusedEra: "modern",
        data: undefined,
        expect: { _tag: "SwitchEra", era: "legacy", version: "2025-11-25", reason: "no-supported-list" }
      },
      {
        name: "modern refusal whose supported is not a list of strings",
        sent: ["modern"],
        refusedEra: "modern",
        data: { supported: "2025-11-25" },
        expect: { _tag: "SwitchEra", era: "legacy", version: "2025-11-25", reason: "no-supported-list" }
      },
      {
        name: "initialize refused by a modern-only server: switch to discover",
        sent: ["legacy"],
        refusedEra: "legacy",
        data: { supported: ["2026-07-28"], requested: "2025-11-25" },
        expect: { _tag: "SwitchEra", era: "modern", version: "2026-07-28", reason: "other-era-only" }
      },
      {
        name: "initialize refused listing older legacy versions: retry initialize with the newest mutual one",
        sent: ["legacy"],
        refusedEra: "legacy",
        data: { supported: ["2024-11-05", "2025-06-18"], requested: "2025-11-25" },
        expect: { _tag: "Retry", era: "legacy", version: "2025-06-18" }
      },
      {
        name: "initialize refused after discover was already refused: the modern version is not tried again",
        sent: ["modern", "legacy"],
        refusedEra: "legacy",
        data: { supported: ["2026-07-28"] },
        expect: { _tag: "VersionsExhaustedError" }
      }
    ]

    for (const c of cases) {
      it.effect(c.name, () =>
        Effect.gen(function*() {
          const negotiation = yield* (yield* Negotiator).begin
          for (const era of c.sent) yield* negotiation.offer(era)
          const before = yield* negotiation.tried
          const outcome = yield* Effect.either(negotiation.onUnsupportedVersion(c.refusedEra, c.data))
          if (Either.isLeft(outcome)) {
            assert.strictEqual(outcome.left._tag, c.expect._tag)
            assert.deepStrictEqual(yield* negotiation.tried, before)
            return
          }
          const step = outcome.right
          assert.strictEqual(step._tag, c.expect._tag)
          assert.deepStrictEqual(
            { era: step.era, version: step.version, reason: step._tag === "SwitchEra" ? step.reason : undefined },
            {
              era: "era" in c.expect ? c.expect.era : undefined,
              version: "version" in c.expect ? c.expect.version : undefined,
              reason: "reason" in c.expect ? c.expect.reason : undefined
            }
          )
          // The chosen version counts as tried, and is what the next offer for that era returns.
          assert.deepStrictEqual(yield* negotiation.tried, [...before, step.version])
          assert.strictEqual(yield* negotiation.offer(step.era), step.version)
        }).pipe(Effect.provide(Negotiator.layer)))
    }

    it.effect("modern refusal listing the version we just sent: re-send it once, then fail", () =>
      Effect.gen(function*() {
        const negotiation = yield* (yield* Negotiator).begin
        assert.strictEqual(yield* negotiation.offer("modern"), "2026-07-28")
        const data = { supported: ["2026-07-28", "2025-11-25"], requested: "2026-07-28" }
        const again = yield* negotiation.onUnsupportedVersion("modern", data)
        assert.deepStrictEqual({ _tag: again._tag, era: again.era, version: again.version }, {
          _tag: "Retry",
          era: "modern",
          version: "2026-07-28"
        })
        assert.strictEqual(yield* negotiation.offer("modern"), "2026-07-28")
        assert.deepStrictEqual(yield* negotiation.tried, ["2026-07-28"])
        const error = yield* Effect.flip(negotiation.onUnsupportedVersion("modern", data))
        assert.instanceOf(error, VersionsExhaustedError)
        assert.deepStrictEqual(error.tried, ["2026-07-28"])
      }).pipe(Effect.provide(Negotiator.layer)))

    it.effect("a refused version the server does not list is never re-sent", () =>
      Effect.gen(function*() {
        const negotiation = yield* (yield* Negotiator).begin
        yield* negotiation.offer("legacy")
        const step = yield* negotiation.onUnsupportedVersion("legacy", { supported: ["2025-06-18"] })
        assert.strictEqual(step.version, "2025-06-18")
        // Now refused with a list that names only the first version: that one was not the refused one.
        const error = yield* Effect.flip(negotiation.onUnsupportedVersion("legacy", { supported: ["2025-11-25"] }))
        assert.strictEqual(error._tag, "VersionsExhaustedError")
      }).pipe(Effect.provide(Negotiator.layer)))

    it.effect("tries each version once and re-sends one once, then fails naming what was tried", () =>
      Effect.gen(function*() {
        const negotiation = yield* (yield* Negotiator).begin
        assert.strictEqual(yield* negotiation.offer("legacy"), "2025-11-25")
        // A confused server that keeps listing versions and refusing them.
        const data = { supported: ["2025-06-18", "2025-03-26", "2025-11-25"] }
        const first = yield* negotiation.onUnsupportedVersion("legacy", data)
        assert.strictEqual(first.version, "2025-06-18")
        const second = yield* negotiation.onUnsupportedVersion("legacy", data)
        assert.strictEqual(second.version, "2025-03-26")
        const again = yield* negotiation.onUnsupportedVersion("legacy", data)
        assert.strictEqual(again.version, "2025-03-26")
        const error = yield* Effect.flip(negotiation.onUnsupportedVersion("legacy", data))
        assert.instanceOf(error, VersionsExhaustedError)
        assert.deepStrictEqual(error.tried, ["2025-11-25", "2025-06-18", "2025-03-26"])
        assert.deepStrictEqual(yield* negotiation.tried, ["2025-11-25", "2025-06-18", "2025-03-26"])
        assert.include(error.message, "2025-11-25, 2025-06-18, 2025-03-26")
      }).pipe(Effect.provide(Negotiator.layer)))

    it.effect("a -32022 for the retried version gets one re-send, then fails instead of looping", () =>
      Effect.gen(function*() {
        const negotiation = yield* (yield* Negotiator).begin
        yield* negotiation.offer("modern")
        const data = { supported: ["2025-11-25"] }
        const fallBack = yield* negotiation.onUnsupportedVersion("modern", data)
        assert.strictEqual(fallBack._tag, "SwitchEra")
        assert.strictEqual(fallBack.version, "2025-11-25")
        const again = yield* negotiation.onUnsupportedVersion("legacy", data)
        assert.strictEqual(again.version, "2025-11-25")
        const error = yield* Effect.flip(negotiation.onUnsupportedVersion("legacy", data))
        assert.strictEqual(error._tag, "VersionsExhaustedError")
      }).pipe(Effect.provide(Negotiator.layer)))

    it.effect("tracks tried versions per negotiation, not per Negotiator", () =>
      Effect.gen(function*() {
        const n = yield* Negotiator
        const a = yield* n.begin
        yield* a.offer("modern")
        const b = yield* n.begin
        assert.deepStrictEqual(yield* b.tried, [])
        const step = yield* b.onUnsupportedVersion("modern", { supported: ["2026-07-28"] })
        assert.strictEqual(step._tag, "Retry")
        // b's re-send is b's own: a still has its one re-send, and then no more.
        yield* b.onUnsupportedVersion("modern", { supported: ["2026-07-28"] })
        assert.strictEqual((yield* a.onUnsupportedVersion("modern", { supported: ["2026-07-28"] }))._tag, "Retry")
        assert.strictEqual((yield* Effect.flip(a.onUnsupportedVersion("modern", { supported: ["2026-07-28"] })))._tag, "VersionsExhaustedError")
      }).pipe(Effect.provide(Negotiator.layer)))

    it.effect("the disjoint-versions error names both lists", () =>
      Effect.gen(function*() {
        const negotiation = yield* (yield* Negotiator).begin
        yield* negotiation.offer("modern")
        const error = yield* Effect.flip(negotiation.onUnsupportedVersion("modern", { supported: ["2027-01-01", "2027-06-30"] }))
        assert.instanceOf(error, DisjointVersionsError)
        assert.deepStrictEqual(error.ours, ALL_NEWEST_FIRST)
        assert.deepStrictEqual(error.theirs, ["2027-01-01", "2027-06-30"])
        assert.strictEqual(
          error.message,
          "no protocol version in common with the server: mcpx-fx supports " +
            "2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05; the server supports 2027-01-01, 2027-06-30"
        )
      }).pipe(Effect.provide(Negotiator.layer)))

    it.effect("the disjoint-versions error survives a trip over the wire", () =>
      Effect.gen(function*() {
        const error = new DisjointVersionsError({ ours: ["2026-07-28"], theirs: [] })
        const json = JSON.parse(JSON.stringify(yield* Schema.encode(DisjointVersionsError)(error)))
        assert.deepStrictEqual(json, { _tag: "DisjointVersionsError", ours: ["2026-07-28"], theirs: [] })
        const back = yield* Schema.decodeUnknown(DisjointVersionsError)(json)
        assert.instanceOf(back, DisjointVersionsError)
        assert.strictEqual(back.message, "no protocol version in common with the server: mcpx-fx supports 2026-07-28; the server supports (none)")
      }))
  })

  describe("initialize (client side)", () => {
    it.effect("an echoed version is negotiated", () =>
      Effect.gen(function*() {
        const negotiation = yield* (yield* Negotiator).begin
        const offered = yield* negotiation.offer("legacy")
        assert.strictEqual(yield* negotiation.acceptInitialize(offered), "2025-11-25")
        assert.deepStrictEqual(Option.getOrThrow(yield* negotiation.negotiated), "2025-11-25")
      }).pipe(Effect.provide(Negotiator.layer)))

    for (const answered of ["2025-06-18", "2025-03-26", "2024-11-05"] as const) {
      it.effect(`an older answer (${answered}) we support is negotiated, not the offered version`, () =>
        Effect.gen(function*() {
          const negotiation = yield* (yield* Negotiator).begin
          assert.strictEqual(yield* negotiation.offer("legacy"), "2025-11-25")
          assert.strictEqual(yield* negotiation.acceptInitialize(answered), answered)
          assert.deepStrictEqual(Option.getOrThrow(yield* negotiation.negotiated), answered)
        }).pipe(Effect.provide(Negotiator.layer)))
    }

    const refusals: ReadonlyArray<readonly [string, unknown, string]> = [
      ["a newer version we do not know", "2099-01-01", "2099-01-01"],
      ["a modern version (initialize cannot negotiate one)", "2026-07-28", "2026-07-28"],
      ["an older unknown version", "2024-10-07", "2024-10-07"],
      ["no version at all", undefined, "undefined"],
      ["a number", 20251125, "20251125"]
    ]
    for (const [name, answered, shown] of refusals) {
      it.effect(`an answer with ${name} is refused, naming both versions`, () =>
        Effect.gen(function*() {
          const negotiation = yield* (yield* Negotiator).begin
          yield* negotiation.offer("legacy")
          const error = yield* Effect.flip(negotiation.acceptInitialize(answered))
          assert.instanceOf(error, UnacceptableVersionError)
          assert.strictEqual(error.offered, "2025-11-25")
          assert.strictEqual(error.answered, shown)
          assert.include(error.message, "initialize 2025-11-25")
          assert.include(error.message, `protocol version ${shown}`)
          assert.include(error.message, "2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05")
          assert.isTrue(Option.isNone(yield* negotiation.negotiated))
        }).pipe(Effect.provide(Negotiator.layer)))
    }

    it.effect("a known revision outside a narrowed set is refused", () =>
      Effect.gen(function*() {
        const negotiation = yield* (yield* Negotiator).begin
        assert.strictEqual(yield* negotiation.offer("legacy"), "2025-03-26")
        const error = yield* Effect.flip(negotiation.acceptInitialize("2025-06-18"))
        assert.deepStrictEqual(error.ours, ["2025-03-26", "2024-11-05"])
        assert.strictEqual(yield* negotiation.acceptInitialize("2024-11-05"), "2024-11-05")
      }).pipe(Effect.provide(Negotiator.layerVersions({ legacy: ["2024-11-05", "2025-03-26"], modern: ["2026-07-28"] }))))

    it.effect("after a retry, the refusal error names the version actually offered last", () =>
      Effect.gen(function*() {
        const negotiation = yield* (yield* Negotiator).begin
        yield* negotiation.offer("legacy")
        yield* negotiation.onUnsupportedVersion("legacy", { supported: ["2025-03-26"] })
        const error = yield* Effect.flip(negotiation.acceptInitialize("2099-01-01"))
        assert.strictEqual(error.offered, "2025-03-26")
      }).pipe(Effect.provide(Negotiator.layer)))
  })

  describe("discover (client side)", () => {
    it.effect("the newest mutual modern version from supportedVersions is negotiated", () =>
      Effect.gen(function*() {
        const negotiation = yield* (yield* Negotiator).begin
        yield* negotiation.offer("modern")
        assert.strictEqual(yield* negotiation.acceptDiscover(["2027-01-01", "2026-07-28"]), "2026-07-28")
        assert.deepStrictEqual(Option.getOrThrow(yield* negotiation.negotiated), "2026-07-28")
      }).pipe(Effect.provide(Negotiator.layer)))

    it.effect("a DiscoverResult with no mutual modern version fails naming both lists", () =>
      Effect.gen(function*() {
        const negotiation = yield* (yield* Negotiator).begin
        yield* negotiation.offer("modern")
        const error = yield* Effect.flip(negotiation.acceptDiscover(["2027-01-01", "2025-11-25"]))
        assert.instanceOf(error, DisjointVersionsError)
        assert.deepStrictEqual(error.ours, ["2026-07-28"])
        assert.deepStrictEqual(error.theirs, ["2027-01-01", "2025-11-25"])
        assert.include(error.message, "mcpx-fx supports 2026-07-28; the server supports 2027-01-01, 2025-11-25")
        assert.isTrue(Option.isNone(yield* negotiation.negotiated))
      }).pipe(Effect.provide(Negotiator.layer)))
  })

  describe("server side", () => {
    it.effect("answers a host's initialize with its own version when we support it", () =>
      Effect.gen(function*() {
        const n = yield* Negotiator
        for (const v of Revision.LegacyRevisions) assert.strictEqual(n.answerInitialize(v), v)
      }).pipe(Effect.provide(Negotiator.layer)))

    it.effect("counter-offers the newest legacy version otherwise", () =>
      Effect.gen(function*() {
        const n = yield* Negotiator
        for (const requested of ["2026-07-28", "2099-01-01", "2024-10-07", "", undefined, null, 42]) {
          assert.strictEqual(n.answerInitialize(requested), "2025-11-25", String(requested))
        }
      }).pipe(Effect.provide(Negotiator.layer)))

    it.effect("a narrowed set counter-offers its own newest legacy version", () =>
      Effect.gen(function*() {
        const n = yield* Negotiator
        assert.strictEqual(n.answerInitialize("2025-11-25"), "2025-06-18")
        assert.strictEqual(n.answerInitialize("2025-03-26"), "2025-03-26")
      }).pipe(Effect.provide(Negotiator.layerVersions({ legacy: ["2025-06-18", "2025-03-26"], modern: ["2026-07-28"] }))))

    it.effect("accepts a modern request's version only when it is one we serve", () =>
      Effect.gen(function*() {
        const n = yield* Negotiator
        assert.strictEqual(yield* n.acceptModernRequest("2026-07-28"), "2026-07-28")
        const legacy = yield* Effect.flip(n.acceptModernRequest("2025-11-25"))
        assert.instanceOf(legacy, UnsupportedRequestedVersionError)
        assert.strictEqual(legacy.requested, "2025-11-25")
        assert.deepStrictEqual(legacy.supported, ALL_NEWEST_FIRST)
        const missing = yield* Effect.flip(n.acceptModernRequest(undefined))
        assert.strictEqual(missing.requested, "")
        assert.include(missing.message, "unsupported protocol version (none)")
      }).pipe(Effect.provide(Negotiator.layer)))
  })
})
