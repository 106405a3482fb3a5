import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import {
  AcceptedPreferenceNames,
  normalizePreference,
  type Preference,
  PreferenceAliases,
  PreferenceFromString,
  Preferences,
  usesEraCache
} from "../../src/era/Preference.js"

describe("Preference", () => {
  it("upstream/preference/canonical-values-pass-through", () => {
    for (const p of Preferences) assert.deepStrictEqual(normalizePreference(p), Either.right(p))
  })

  it("upstream/preference/every-alias-normalises-case-insensitively", () => {
    const expected: Record<string, Preference> = {
      modern: "prefer-discover",
      "prefer-modern": "prefer-discover",
      "prefer-stateless": "prefer-discover",
      "prefer-newest": "prefer-discover",
      legacy: "prefer-initialize",
      "prefer-legacy": "prefer-initialize",
      "prefer-session": "prefer-initialize",
      "prefer-oldest": "prefer-initialize",
      "force-modern": "force-discover",
      "force-stateless": "force-discover",
      "force-legacy": "force-initialize",
      "force-session": "force-initialize"
    }
    assert.deepStrictEqual(Object.keys(PreferenceAliases).sort(), Object.keys(expected).sort())
    for (const [alias, canonical] of Object.entries(expected)) {
      assert.deepStrictEqual(normalizePreference(alias.toUpperCase()), Either.right(canonical))
      assert.deepStrictEqual(Schema.decodeUnknownSync(PreferenceFromString)(` ${alias} `), canonical)
    }
  })

  it("upstream/preference/unknown-values-are-refused-with-the-list", () => {
    const refused = normalizePreference("newest-please")
    assert.isTrue(Either.isLeft(refused))
    const message = Either.getLeft(refused).pipe((o) => (o._tag === "Some" ? o.value : ""))
    assert.include(message, "newest-please")
    for (const name of AcceptedPreferenceNames) assert.include(message, name)
    assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(PreferenceFromString)("newest-please")))
  })

  it("upstream/preference/force-values-bypass-the-era-cache", () => {
    assert.isFalse(usesEraCache("force-discover"))
    assert.isFalse(usesEraCache("force-initialize"))
    assert.isTrue(usesEraCache("prefer-discover"))
    assert.isTrue(usesEraCache("prefer-initialize"))
    assert.isTrue(usesEraCache("follow"))
  })
})
