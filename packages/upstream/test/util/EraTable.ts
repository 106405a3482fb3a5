/**
 * Seed 000's table: what each `upstream.protocol` value ends with against a server that speaks
 * only the old era (era-server legacy-32601), both (dual) or only the new one (modern-only).
 */
import type { Preference } from "../../src/era/Preference.js"

export const eraTable: ReadonlyArray<readonly [Preference, string, "legacy" | "modern" | "fails"]> = [
  ["prefer-discover", "legacy-32601", "legacy"],
  ["prefer-discover", "dual", "modern"],
  ["prefer-discover", "modern-only", "modern"],
  ["prefer-initialize", "legacy-32601", "legacy"],
  ["prefer-initialize", "dual", "legacy"],
  ["prefer-initialize", "modern-only", "modern"],
  ["force-discover", "legacy-32601", "fails"],
  ["force-discover", "dual", "modern"],
  ["force-discover", "modern-only", "modern"],
  ["force-initialize", "legacy-32601", "legacy"],
  ["force-initialize", "dual", "legacy"],
  ["force-initialize", "modern-only", "fails"],
  ["follow", "legacy-32601", "legacy"],
  ["follow", "dual", "modern"],
  ["follow", "modern-only", "modern"]
]
