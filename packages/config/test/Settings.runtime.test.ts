import { assert, describe, it } from "@effect/vitest"
import { AcceptedPreferenceNames } from "@mcpx-fx/upstream/era/Preference"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Settings from "../src/Settings.js"
import * as SettingsModel from "../src/SettingsModel.js"

const withSettings = <A, E>(input: Settings.SettingsInput, f: (s: Settings.SettingsService) => Effect.Effect<A, E>) =>
  Effect.flatMap(Settings.Settings, f).pipe(Effect.provide(Settings.Settings.layer(input)))

describe("Settings runtime overrides", () => {
  it.effect("settings/runtime/a hot setting is applied and wins over a flag", () =>
    withSettings({ flags: { "--pool-call-timeout": "30s" } }, (s) =>
      Effect.gen(function*() {
        const result = yield* s.set("pool.callTimeout", "90s")
        assert.isTrue(Schema.is(SettingsModel.SetResult)(result))
        assert.deepInclude(result, { path: "pool.callTimeout", value: "90s", text: "90s", applied: true, restartRequired: false, source: "runtime" })
        assert.strictEqual(Duration.toMillis(yield* s.get("pool.callTimeout")), 90_000)
        const row = (yield* s.list).find((r) => r.path === "pool.callTimeout")!
        assert.strictEqual(row.source, "runtime")
        assert.strictEqual(row.text, "90s")
      })))

  it.effect("settings/runtime/the generation moves with every change of an effective value, and only then", () =>
    withSettings({}, (s) =>
      Effect.gen(function*() {
        const start = s.generation()
        yield* s.get("pool.callTimeout")
        yield* s.set("daemon.port", 8123)
        assert.strictEqual(s.generation(), start, "reads and a refused cold setting change nothing")
        yield* s.set("pool.callTimeout", "90s")
        const afterSet = s.generation()
        assert.notStrictEqual(afterSet, start)
        yield* s.unset("pool.callTimeout")
        const afterUnset = s.generation()
        assert.notStrictEqual(afterUnset, afterSet)
        yield* s.replaceFiles([{ file: "/config.json", values: { "pool.callTimeout": "5s" } }])
        assert.notStrictEqual(s.generation(), afterUnset)
        assert.strictEqual(Duration.toMillis(yield* s.get("pool.callTimeout")), 5000)
      })))

  it.effect("settings/runtime/unset brings back the flag's value", () =>
    withSettings({ flags: { "--pool-call-timeout": "30s" } }, (s) =>
      Effect.gen(function*() {
        yield* s.set("pool.callTimeout", 5000)
        const dropped = yield* s.unset("pool.callTimeout")
        assert.deepStrictEqual(dropped, { path: "pool.callTimeout", removed: true, value: "30s", text: "30s", source: "flag:--pool-call-timeout" })
        assert.strictEqual(Duration.toMillis(yield* s.get("pool.callTimeout")), 30_000)
        const again = yield* s.unset("pool.callTimeout")
        assert.isFalse(again.removed)
      })))

  it.effect("settings/runtime/a cold setting is checked, not stored, and says a restart is needed", () =>
    withSettings({ env: { MCPX_DAEMON_PORT: "9000" } }, (s) =>
      Effect.gen(function*() {
        const result = yield* s.set("daemon.port", 8123)
        assert.deepInclude(result, { path: "daemon.port", value: 8123, applied: false, restartRequired: true, source: "env:MCPX_DAEMON_PORT" })
        assert.include(result.note, "MCPX_DAEMON_PORT")
        assert.strictEqual(yield* s.get("daemon.port"), 9000)
        const bad = yield* Effect.flip(s.set("daemon.port", 70000))
        assert.strictEqual(bad._tag, "InvalidSettingValue")
      })))

  it.effect("settings/runtime/upstream.protocol aliases are normalised", () =>
    withSettings({}, (s) =>
      Effect.gen(function*() {
        const result = yield* s.set("upstream.protocol", "LEGACY")
        assert.strictEqual(result.value, "prefer-initialize")
        assert.isTrue(result.applied)
        assert.strictEqual(yield* s.get("upstream.protocol"), "prefer-initialize")
      })))

  it.effect("settings/runtime/an unknown upstream.protocol value is refused with the list", () =>
    withSettings({}, (s) =>
      Effect.gen(function*() {
        const e = yield* Effect.flip(s.set("upstream.protocol", "newest-first"))
        assert.strictEqual(e._tag, "InvalidSettingValue")
        if (e._tag !== "InvalidSettingValue") return
        for (const name of AcceptedPreferenceNames) assert.include(e.detail, name)
        assert.strictEqual(yield* s.get("upstream.protocol"), "prefer-discover")
      })))

  it.effect("settings/runtime/an unknown path is refused with the closest paths", () =>
    withSettings({}, (s) =>
      Effect.gen(function*() {
        const e = yield* Effect.flip(s.set("pool.calltimeout", "1s"))
        assert.strictEqual(e._tag, "UnknownSetting")
        if (e._tag !== "UnknownSetting") return
        assert.include(e.suggestions, "pool.callTimeout")
        const u = yield* Effect.flip(s.unset("nope"))
        assert.strictEqual(u.path, "nope")
        assert.include(u.message, "upstream.protocol")
      })))
})
