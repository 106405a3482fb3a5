import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { PreferenceAliases, Preferences } from "@mcpx-fx/upstream/era/Preference"
import * as Durations from "../src/internal/Duration.js"
import * as Settings from "../src/Settings.js"
import * as SettingsRegistry from "../src/SettingsRegistry.js"
import * as SettingsModel from "../src/SettingsModel.js"

const { Settings: SettingsTag } = Settings
const { SettingsError } = SettingsModel

/** Builds the service from explicit inputs and runs `f` against it. */
const withSettings = <A, E>(
  input: Settings.SettingsInput,
  f: (s: Settings.SettingsService) => Effect.Effect<A, E>
) => Effect.flatMap(SettingsTag, f).pipe(Effect.provide(SettingsTag.layer(input)))

/** The error building the service fails with. */
const refusal = (input: Settings.SettingsInput) => Effect.flip(Settings.make(input))

describe("Settings registry", () => {
  it("derives env vars and flags from the path", () => {
    assert.strictEqual(SettingsRegistry.envNameOf("upstream.protocol"), "MCPX_UPSTREAM_PROTOCOL")
    assert.strictEqual(SettingsRegistry.flagNameOf("upstream.protocol"), "--upstream-protocol")
    assert.strictEqual(SettingsRegistry.envNameOf("upstream.eraCache"), "MCPX_UPSTREAM_ERA_CACHE")
    assert.strictEqual(SettingsRegistry.flagNameOf("upstream.eraCache"), "--upstream-era-cache")
    assert.strictEqual(SettingsRegistry.envNameOf("transport.allowedOrigins"), "MCPX_TRANSPORT_ALLOWED_ORIGINS")
    assert.strictEqual(SettingsRegistry.flagNameOf("transport.allowedOrigins"), "--transport-allowed-origins")
    assert.strictEqual(SettingsRegistry.fileKeyOf("pool.max"), `settings["pool.max"]`)
  })

  it("gives every entry its derived names, and no two entries share one", () => {
    for (const s of SettingsRegistry.registry) {
      assert.strictEqual(s.env, SettingsRegistry.envNameOf(s.path))
      assert.strictEqual(s.flag, SettingsRegistry.flagNameOf(s.path))
      assert.isNotEmpty(s.description)
    }
    const envs = SettingsRegistry.registry.map((s) => s.env)
    const flags = SettingsRegistry.registry.map((s) => s.flag)
    assert.strictEqual(new Set(envs).size, envs.length)
    assert.strictEqual(new Set(flags).size, flags.length)
  })

  it("holds the settings the design names, with their defaults and hot/cold", () => {
    const expected: Record<string, readonly [text: string, hot: boolean]> = {
      "upstream.protocol": ["prefer-discover", true],
      "upstream.eraCache": ["true", false],
      "upstream.probeTimeout": ["2s", true],
      "pool.max": ["1", false],
      "pool.idleTimeout": ["5m", true],
      "pool.callTimeout": ["1m", true],
      "pool.startTimeout": ["30s", true],
      "transport.stdioDrain": ["5s", false],
      "transport.sseKeepAlive": ["15s", false],
      "transport.allowedOrigins": ["", false],
      "transport.allowedHosts": ["", false],
      "transport.maxBatch": ["100", false],
      "daemon.token": ["", false],
      "transport.sessionIdleTimeout": ["30m", false],
      "transport.maxSessions": ["1000", false],
      "daemon.address": ["127.0.0.1", false],
      "daemon.port": ["7717", false]
    }
    for (const [path, [text, hot]] of Object.entries(expected)) {
      assert.isTrue(SettingsRegistry.isSettingPath(path), path)
      const s = SettingsRegistry.registry.find((x) => x.path === path)!
      assert.strictEqual((s.format as (a: unknown) => string)(s.default), text, path)
      assert.strictEqual(s.hot, hot, path)
    }
  })
})

describe("Settings precedence and sources", () => {
  it.effect("reports defaults when nothing is set", () =>
    withSettings({}, (s) =>
      Effect.gen(function*() {
        const max: number = yield* s.get("pool.max")
        assert.strictEqual(max, 1)
        assert.strictEqual(yield* s.get("upstream.protocol"), "prefer-discover")
        assert.strictEqual(yield* s.get("daemon.port"), 7717)
        assert.isTrue(yield* s.get("upstream.eraCache"))
        assert.strictEqual(Duration.toMillis(yield* s.get("upstream.probeTimeout")), 2000)
        assert.deepStrictEqual(yield* s.get("transport.allowedOrigins"), [])
        const rows = yield* s.list
        assert.strictEqual(rows.length, SettingsRegistry.registry.length)
        for (const row of rows) assert.strictEqual(row.source, "default", row.path)
      })))

  it.effect("takes file < env < flag, and names the layer each value came from", () =>
    Effect.gen(function*() {
      const files = [{ file: "/p/.mcpx.json", values: { "pool.max": 2 } }]
      const env = { MCPX_POOL_MAX: "3" }
      const flags = { "--pool-max": "4" }
      const cases = [
        [{}, 1, "default"],
        [{ files }, 2, "file:/p/.mcpx.json"],
        [{ files, env }, 3, "env:MCPX_POOL_MAX"],
        [{ env }, 3, "env:MCPX_POOL_MAX"],
        [{ files, env, flags }, 4, "flag:--pool-max"],
        [{ files, flags }, 4, "flag:--pool-max"]
      ] as const
      for (const [input, value, source] of cases) {
        const r = yield* withSettings(input, (s) => s.resolve("pool.max"))
        assert.deepStrictEqual(r, { path: "pool.max", value, source })
      }
    }))

  it.effect("lets the nearest file win per key, and farther files fill the rest", () =>
    withSettings(
      {
        files: [
          { file: "/a/b/.mcpx.json", values: { "pool.max": 5 } },
          { file: "/a/.mcp.json", values: { "pool.max": 9, "daemon.port": 0 } }
        ]
      },
      (s) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* s.resolve("pool.max"), { path: "pool.max", value: 5, source: "file:/a/b/.mcpx.json" })
          assert.deepStrictEqual(yield* s.resolve("daemon.port"), { path: "daemon.port", value: 0, source: "file:/a/.mcp.json" })
        })
    ))

  it.effect("accepts flags with or without the leading dashes and treats an empty env var as unset", () =>
    withSettings({ env: { MCPX_DAEMON_PORT: "", MCPX_DAEMON_ADDRESS: "::1" }, flags: { "upstream-era-cache": "off" } }, (s) =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* s.resolve("daemon.port"), { path: "daemon.port", value: 7717, source: "default" })
        assert.deepStrictEqual(yield* s.resolve("daemon.address"), { path: "daemon.address", value: "::1", source: "env:MCPX_DAEMON_ADDRESS" })
        assert.deepStrictEqual(yield* s.resolve("upstream.eraCache"), {
          path: "upstream.eraCache",
          value: false,
          source: "flag:--upstream-era-cache"
        })
      })))

  it.effect("refuses a bad value in a lower layer even when a higher one overrides it", () =>
    Effect.gen(function*() {
      const e = yield* refusal({ env: { MCPX_POOL_MAX: "many" }, flags: { "--pool-max": "2" } })
      assert.strictEqual(e.message, `MCPX_POOL_MAX: expected a positive integer, got "many"`)
    }))

  it.effect("lists rows with JSON values, text, sources and derived names", () =>
    withSettings(
      {
        files: [{ file: "/f.json", values: { "pool.idleTimeout": 90_000 } }],
        env: { MCPX_TRANSPORT_ALLOWED_ORIGINS: "https://app.example.com,http://localhost:5173" }
      },
      (s) =>
        Effect.gen(function*() {
          const rows = yield* s.list
          assert.deepStrictEqual(rows.map((r) => r.path), SettingsRegistry.registry.map((r) => r.path))
          for (const row of rows) assert.isTrue(Schema.is(SettingsModel.SettingRow)(row), row.path)
          const idle = rows.find((r) => r.path === "pool.idleTimeout")!
          assert.strictEqual(idle.value, "90s")
          assert.strictEqual(idle.text, "90s")
          assert.strictEqual(idle.default, "5m")
          assert.strictEqual(idle.source, "file:/f.json")
          assert.strictEqual(idle.env, "MCPX_POOL_IDLE_TIMEOUT")
          assert.strictEqual(idle.flag, "--pool-idle-timeout")
          assert.isTrue(idle.hot)
          const origins = rows.find((r) => r.path === "transport.allowedOrigins")!
          assert.deepStrictEqual(origins.value, ["https://app.example.com", "http://localhost:5173"])
          assert.strictEqual(origins.text, "https://app.example.com,http://localhost:5173")
          assert.strictEqual(origins.source, "env:MCPX_TRANSPORT_ALLOWED_ORIGINS")
          const protocol = rows.find((r) => r.path === "upstream.protocol")!
          assert.isTrue(protocol.hot)
          assert.strictEqual(protocol.value, "prefer-discover")
        })
    ))

  it.effect("builds from an effect and reads through the module accessor", () =>
    Effect.gen(function*() {
      const port = yield* Settings.get("daemon.port").pipe(
        Effect.provide(SettingsTag.layerEffect(Effect.succeed({ flags: { "--daemon-port": "0" } })))
      )
      assert.strictEqual(port, 0)
      const defaults = yield* Settings.get("pool.scope").pipe(Effect.provide(SettingsTag.layerDefaults))
      assert.strictEqual(defaults, "global")
    }))
})

describe("upstream.protocol", () => {
  it.effect("normalises every alias and every case, from env, flag and file", () =>
    Effect.gen(function*() {
      const spellings: Array<readonly [string, string]> = [
        ...Preferences.map((p) => [p, p] as const),
        ...Preferences.map((p) => [p.toUpperCase(), p] as const),
        ...Object.entries(PreferenceAliases),
        ...Object.entries(PreferenceAliases).map(([alias, p]) => [` ${alias.toUpperCase()} `, p] as const)
      ]
      assert.isAtLeast(spellings.length, 20)
      for (const [spelling, canonical] of spellings) {
        const fromEnv = yield* withSettings({ env: { MCPX_UPSTREAM_PROTOCOL: spelling } }, (s) => s.get("upstream.protocol"))
        const fromFlag = yield* withSettings({ flags: { "--upstream-protocol": spelling } }, (s) => s.get("upstream.protocol"))
        const fromFile = yield* withSettings(
          { files: [{ file: "/c.json", values: { "upstream.protocol": spelling } }] },
          (s) => s.list
        )
        assert.strictEqual(fromEnv, canonical, spelling)
        assert.strictEqual(fromFlag, canonical, spelling)
        assert.strictEqual(fromFile.find((r) => r.path === "upstream.protocol")!.value, canonical, spelling)
      }
    }))

  it.effect("refuses an unknown value with the list of accepted ones", () =>
    Effect.gen(function*() {
      const e = yield* refusal({ env: { MCPX_UPSTREAM_PROTOCOL: "newest-first" } })
      assert.instanceOf(e, SettingsError)
      assert.strictEqual(e.source, "env:MCPX_UPSTREAM_PROTOCOL")
      assert.isTrue(e.message.startsWith(`MCPX_UPSTREAM_PROTOCOL: unknown upstream.protocol value "newest-first"; expected one of: `))
      for (const p of [...Preferences, ...Object.keys(PreferenceAliases)]) assert.include(e.message, p)

      const fromFile = yield* refusal({ files: [{ file: "/c.json", values: { "upstream.protocol": 7 } }] })
      assert.strictEqual(fromFile.key, `settings["upstream.protocol"]`)
      assert.include(fromFile.message, "/c.json: settings[\"upstream.protocol\"]: expected one of: prefer-discover")
      assert.include(fromFile.message, "got 7")
    }))
})

describe("durations", () => {
  it("parses the short forms and a bare number of milliseconds", () => {
    const cases: ReadonlyArray<readonly [string, number]> = [
      ["2s", 2_000],
      ["5m", 300_000],
      ["1500ms", 1_500],
      ["1500", 1_500],
      ["0", 0],
      ["1h", 3_600_000],
      ["1h30m", 5_400_000],
      ["1m30s", 90_000],
      ["1.5s", 1_500],
      ["1.1s", 1_100],
      [" 15s ", 15_000]
    ]
    for (const [text, ms] of cases) {
      const parsed = Durations.parse(text)
      assert.isTrue(Option.isSome(parsed), text)
      assert.strictEqual(Duration.toMillis(Option.getOrThrow(parsed)), ms, text)
    }
  })

  it("refuses what is not a duration", () => {
    for (const text of ["", "soon", "2x", "-1s", "2 s", "s", "1s2", "0.5ms", "1e3", "2S", "ms5"]) {
      assert.isTrue(Option.isNone(Durations.parse(text)), text)
    }
  })

  it("reports in the largest unit that divides exactly", () => {
    const cases: ReadonlyArray<readonly [number, string]> = [
      [0, "0s"],
      [1_500, "1500ms"],
      [2_000, "2s"],
      [90_000, "90s"],
      [300_000, "5m"],
      [3_600_000, "1h"],
      [5_400_000, "90m"]
    ]
    for (const [ms, text] of cases) assert.strictEqual(Durations.format(Duration.millis(ms)), text)
  })

  it.effect("reads durations from env, flag and file (a JSON number is milliseconds)", () =>
    withSettings(
      {
        files: [{ file: "/f.json", values: { "pool.callTimeout": 2500, "pool.startTimeout": "2m" } }],
        env: { MCPX_TRANSPORT_STDIO_DRAIN: "250ms" },
        flags: { "--upstream-probe-timeout": "1500" }
      },
      (s) =>
        Effect.gen(function*() {
          assert.strictEqual(Duration.toMillis(yield* s.get("pool.callTimeout")), 2500)
          assert.strictEqual(Duration.toMillis(yield* s.get("pool.startTimeout")), 120_000)
          assert.strictEqual(Duration.toMillis(yield* s.get("transport.stdioDrain")), 250)
          assert.strictEqual(Duration.toMillis(yield* s.get("upstream.probeTimeout")), 1500)
        })
    ))

  it.effect("names the source and the expected form when a duration is bad", () =>
    Effect.gen(function*() {
      const env = yield* refusal({ env: { MCPX_POOL_IDLE_TIMEOUT: "soon" } })
      assert.strictEqual(env.message, `MCPX_POOL_IDLE_TIMEOUT: expected a duration such as 2s, 5m or 1500ms, got "soon"`)
      const flag = yield* refusal({ flags: { "--transport-sse-keep-alive": "-5s" } })
      assert.strictEqual(flag.message, `--transport-sse-keep-alive: expected a duration such as 2s, 5m or 1500ms, got "-5s"`)
      const file = yield* refusal({ files: [{ file: "/f.json", values: { "pool.callTimeout": -1 } }] })
      assert.strictEqual(file.message, `/f.json: settings["pool.callTimeout"]: expected a duration such as 2s, 5m or 1500ms, got -1`)
    }))
})

describe("other value kinds", () => {
  it.effect("reads booleans in their usual spellings and refuses others", () =>
    Effect.gen(function*() {
      for (
        const [text, value] of [["true", true], ["1", true], ["YES", true], ["on", true], ["false", false], ["0", false], ["No", false], [
          "OFF",
          false
        ]] as const
      ) {
        assert.strictEqual(yield* withSettings({ env: { MCPX_UPSTREAM_ERA_CACHE: text } }, (s) => s.get("upstream.eraCache")), value, text)
      }
      const e = yield* refusal({ env: { MCPX_UPSTREAM_ERA_CACHE: "maybe" } })
      assert.strictEqual(e.message, `MCPX_UPSTREAM_ERA_CACHE: expected true or false, got "maybe"`)
    }))

  it.effect("reads integers with their bounds", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* withSettings({ flags: { "--daemon-port": "0" } }, (s) => s.get("daemon.port")), 0)
      assert.strictEqual(yield* withSettings({ flags: { "--daemon-port": "65535" } }, (s) => s.get("daemon.port")), 65535)
      const port = yield* refusal({ flags: { "--daemon-port": "70000" } })
      assert.strictEqual(port.message, `--daemon-port: expected a port number from 0 to 65535, got "70000"`)
      assert.strictEqual(port.source, "flag:--daemon-port")
      assert.strictEqual(port.key, "--daemon-port")
      for (const bad of ["0", "-1", "1.5", "abc", "2e3"]) {
        const e = yield* refusal({ env: { MCPX_POOL_MAX: bad } })
        assert.strictEqual(e.message, `MCPX_POOL_MAX: expected a positive integer, got ${JSON.stringify(bad)}`)
      }
      const file = yield* refusal({ files: [{ file: "/f.json", values: { "pool.max": 1.5 } }] })
      assert.strictEqual(file.message, `/f.json: settings["pool.max"]: expected a positive integer, got 1.5`)
    }))

  it.effect("reads exact origins, normalised as a browser sends them, and refuses anything else", () =>
    Effect.gen(function*() {
      const origins = yield* withSettings(
        { env: { MCPX_TRANSPORT_ALLOWED_ORIGINS: " https://App.Example.com:443 , http://localhost:3000/ ,https://app.example.com" } },
        (s) => s.get("transport.allowedOrigins")
      )
      assert.deepStrictEqual(origins, ["https://app.example.com", "http://localhost:3000"])
      const fromFile = yield* withSettings(
        { files: [{ file: "/f.json", values: { "transport.allowedOrigins": ["http://127.0.0.1:8080"] } }] },
        (s) => s.get("transport.allowedOrigins")
      )
      assert.deepStrictEqual(fromFile, ["http://127.0.0.1:8080"])
      const emptyFlag = yield* withSettings(
        { env: { MCPX_TRANSPORT_ALLOWED_ORIGINS: "https://a.example" }, flags: { "--transport-allowed-origins": "" } },
        (s) => s.resolve("transport.allowedOrigins")
      )
      assert.deepStrictEqual(emptyFlag.value, [])
      assert.strictEqual(emptyFlag.source, "flag:--transport-allowed-origins")
      for (const bad of ["https://a.example/app", "a.example", "*", "null", "ftp://a.example", "https://a.example?x=1"]) {
        const e = yield* refusal({ env: { MCPX_TRANSPORT_ALLOWED_ORIGINS: bad } })
        assert.include(e.message, "MCPX_TRANSPORT_ALLOWED_ORIGINS: expected exact origins such as https://app.example.com", bad)
      }
    }))

  it.effect("reads listen addresses and refuses what is not one", () =>
    Effect.gen(function*() {
      for (
        const [text, value] of [
          ["0.0.0.0", "0.0.0.0"],
          ["[::1]", "::1"],
          ["::", "::"],
          ["fe80::1:2", "fe80::1:2"],
          ["::ffff:127.0.0.1", "::ffff:127.0.0.1"],
          ["localhost", "localhost"],
          ["gw.internal", "gw.internal"]
        ]
      ) {
        assert.strictEqual(yield* withSettings({ env: { MCPX_DAEMON_ADDRESS: text } }, (s) => s.get("daemon.address")), value)
      }
      for (const bad of ["256.1.1.1", "1.2.3", "http://x", "a b", "-x", ":::", "1:2", "12345::1", ""]) {
        const e = yield* refusal({ flags: { "--daemon-address": bad } })
        assert.strictEqual(e.message, `--daemon-address: expected an IP address or host name, got ${JSON.stringify(bad)}`)
      }
    }))

  it.effect("refuses unknown file keys and unknown flags, naming what is accepted", () =>
    Effect.gen(function*() {
      const key = yield* refusal({ files: [{ file: "/f.json", values: { "pool.maxx": 2 } }] })
      assert.strictEqual(key.source, "file:/f.json")
      assert.isTrue(key.message.startsWith(`/f.json: settings["pool.maxx"]: unknown setting "pool.maxx"; expected one of: upstream.protocol,`))
      const flag = yield* refusal({ flags: { "--pool-maxx": "2" } })
      assert.isTrue(flag.message.startsWith("--pool-maxx: unknown setting flag; expected one of: --upstream-protocol,"))
    }))

  it("checks a config file's value the way the file layer will", () => {
    assert.isTrue(Option.isNone(SettingsRegistry.checkFileValue("pool.max", 3)))
    assert.deepStrictEqual(Option.getOrThrow(SettingsRegistry.checkFileValue("pool.max", "x")), `expected a positive integer, got "x"`)
    assert.isTrue(Option.isSome(SettingsRegistry.checkFileValue("nope", 1)))
  })
})

describe("Settings secrets", () => {
  it.effect("daemon.token is listed as set, never shown, from any source", () =>
    withSettings({ env: { MCPX_DAEMON_TOKEN: "a-token-of-some-length-123" } }, (s) =>
      Effect.gen(function*() {
        assert.strictEqual(yield* s.get("daemon.token"), "a-token-of-some-length-123")
        const row = (yield* s.list).find((r) => r.path === "daemon.token")
        assert.deepInclude(row, { value: "[redacted]", text: "[redacted]", default: "", source: "env:MCPX_DAEMON_TOKEN" })
        const set = yield* s.set("daemon.token", "another-token-of-length-456")
        assert.notInclude(JSON.stringify(set), "another-token")
      })))

  it.effect("a token shorter than 16 characters or with spaces is refused", () =>
    Effect.gen(function*() {
      for (const bad of ["short", "has a space in it somewhere"]) {
        const e = yield* refusal({ env: { MCPX_DAEMON_TOKEN: bad } })
        assert.strictEqual(e.key, "MCPX_DAEMON_TOKEN")
        assert.include(e.detail, "16")
      }
    }))

  it.effect("transport.allowedHosts takes names and name:port, and refuses a URL", () =>
    Effect.gen(function*() {
      const hosts = yield* withSettings({ env: { MCPX_TRANSPORT_ALLOWED_HOSTS: "MCP.example.com, box.lan:7717,[::1]:9" } }, (s) =>
        s.get("transport.allowedHosts"))
      assert.deepStrictEqual(hosts, ["mcp.example.com", "box.lan:7717", "[::1]:9"])
      const e = yield* refusal({ env: { MCPX_TRANSPORT_ALLOWED_HOSTS: "https://mcp.example.com" } })
      assert.strictEqual(e.key, "MCPX_TRANSPORT_ALLOWED_HOSTS")
    }))
})
