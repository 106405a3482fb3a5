import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { HttpDefinition, StdioDefinition } from "@mcpx-fx/upstream/ServerDefinition"
import * as Config from "../src/Config.js"
import * as ConfigFile from "../src/ConfigFile.js"
import * as Expand from "../src/internal/Expand.js"
import * as Jsonc from "../src/internal/Jsonc.js"
import * as Settings from "../src/Settings.js"

const { ConfigError } = ConfigFile

/** A fresh directory under os.tmpdir(), removed when the test's scope closes. */
const tempDir = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  return yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "mcpx-config-" }))
})

/** Writes files (relative path → text) under `root`, creating directories as needed. */
const writeFiles = (root: string, files: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    for (const [rel, text] of Object.entries(files)) {
      const file = path.join(root, rel)
      yield* fs.makeDirectory(path.dirname(file), { recursive: true })
      yield* fs.writeFileString(file, text)
    }
  })

/** Loads one explicitly named file, so nothing outside the temp dir can take part. */
const loadOne = (text: string, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    yield* writeFiles(dir, { "mcpx.json": text })
    const file = `${dir}/mcpx.json`
    const loaded = yield* Config.load({ configFlag: file, env, cwd: dir, home: dir })
    return { dir, file, loaded }
  })

/** The ConfigError that loading one file fails with. */
const errorOf = (text: string, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    yield* writeFiles(dir, { "mcpx.json": text })
    const file = `${dir}/mcpx.json`
    const error = yield* Effect.flip(Config.load({ configFlag: file, env, cwd: dir, home: dir }))
    assert.instanceOf(error, ConfigError)
    assert.strictEqual(error._tag, "ConfigError")
    assert.strictEqual(error.file, file)
    return { file, error }
  })

const serverNamed = (loaded: Config.LoadedConfig, name: string) => {
  const s = loaded.servers.find((x) => x.name === name)
  assert.isDefined(s, name)
  return s!
}

describe("JSONC", () => {
  it("strips comments outside strings and keeps comment-like text inside them", () => {
    const text = `{
      // a line comment
      "url": "http://x/a//b", /* a block
      comment */ "glob": "/* not a comment */",
      "quote": "say \\"//hi\\"", "slash": "\\\\" // after an escaped backslash
    }`
    assert.deepStrictEqual(Either.getOrThrow(Jsonc.parse(text)), {
      url: "http://x/a//b",
      glob: "/* not a comment */",
      quote: `say "//hi"`,
      slash: "\\"
    })
  })

  it("drops trailing commas in objects and arrays, even with comments before the bracket", () => {
    const text = `{ "a": [1, 2, ], "b": { "c": ",]", }, "d": [3, // three
      ], }`
    assert.deepStrictEqual(Either.getOrThrow(Jsonc.parse(text)), { a: [1, 2], b: { c: ",]" }, d: [3] })
  })

  it("keeps offsets, so a syntax error points at the line and column in the file", () => {
    const text = `{\n  // note\n  "a": 1,\n  "b" 2\n}`
    const e = Either.getLeft(Jsonc.parse(text))
    assert.isTrue(Option.isSome(e))
    const err = Option.getOrThrow(e)
    assert.strictEqual(err.line, 4)
    assert.strictEqual(err.column, 7)
  })

  it("refuses an unterminated block comment, pointing at where it opens", () => {
    const e = Option.getOrThrow(Either.getLeft(Jsonc.parse(`{ "a": 1 }\n  /* never closed`)))
    assert.deepStrictEqual(e, { message: "unterminated /* comment", line: 2, column: 3 })
  })

  it("ignores a byte-order mark", () => {
    assert.deepStrictEqual(Either.getOrThrow(Jsonc.parse(`\uFEFF{"a":1}`)), { a: 1 })
  })
})

describe("${VAR} expansion", () => {
  it("expands variables, defaults and $$", () => {
    const env = { TOKEN: "t0k", EMPTY: "" }
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["Bearer ${TOKEN}", "Bearer t0k"],
      ["${TOKEN}${TOKEN}", "t0kt0k"],
      ["${MISSING:-fallback}", "fallback"],
      ["${EMPTY:-fallback}", "fallback"],
      ["${EMPTY}", ""],
      ["${TOKEN:-x}", "t0k"],
      ["cost: $$5 and $HOME", "cost: $5 and $HOME"],
      ["$${TOKEN}", "${TOKEN}"],
      ["no vars", "no vars"]
    ]
    for (const [input, output] of cases) assert.strictEqual(Either.getOrThrow(Expand.expand(input, env)), output, input)
  })

  it("names an unset variable and quotes a malformed reference", () => {
    assert.deepStrictEqual(Option.getOrThrow(Either.getLeft(Expand.expand("a ${NOPE} b", {}))), { _tag: "Unset", name: "NOPE" } as const)
    assert.deepStrictEqual(Option.getOrThrow(Either.getLeft(Expand.expand("x ${1BAD} y", {}))), { _tag: "Malformed", text: "${1BAD}" } as const)
    assert.deepStrictEqual(Option.getOrThrow(Either.getLeft(Expand.expand("x ${OPEN", {}))), { _tag: "Malformed", text: "${" } as const)
  })
})

describe("namespaceOf", () => {
  it("keeps [A-Za-z0-9_], replaces the rest, and never leaves __ or a trailing _", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["github", "github"],
      ["my_server", "my_server"],
      ["my-server", "my_server"],
      ["my.server", "my_server"],
      ["a b c", "a_b_c"],
      ["a--b", "a_b"],
      ["a__b", "a_b"],
      ["srv-", "srv"],
      ["__x", "_x"],
      ["über", "_ber"],
      ["1st", "1st"],
      ["GitHub", "GitHub"],
      ["---", ""]
    ]
    for (const [name, ns] of cases) assert.strictEqual(ConfigFile.namespaceOf(name), ns, name)
  })
})

describe("search path", () => {
  it.effect("walks up from the working directory, .mcpx.json before .mcp.json before .vscode/mcp.json, then the user file", () =>
    Effect.gen(function*() {
      const search = yield* ConfigFile.searchPath({ env: {}, cwd: "/a/b", home: "/home/u" })
      assert.isFalse(search.explicit)
      assert.deepStrictEqual(search.candidates, [
        "/a/b/.mcpx.json",
        "/a/b/.mcp.json",
        "/a/b/.vscode/mcp.json",
        "/a/.mcpx.json",
        "/a/.mcp.json",
        "/a/.vscode/mcp.json",
        "/.mcpx.json",
        "/.mcp.json",
        "/.vscode/mcp.json",
        "/home/u/.config/mcpx-fx/config.json"
      ])
      const xdg = yield* ConfigFile.searchPath({ env: { XDG_CONFIG_HOME: "/xdg" }, cwd: "/", home: "/home/u" })
      assert.deepStrictEqual(xdg.candidates, ["/.mcpx.json", "/.mcp.json", "/.vscode/mcp.json", "/xdg/mcpx-fx/config.json"])
      // XDG says a relative value is invalid and must be ignored.
      const relative = yield* ConfigFile.searchPath({ env: { XDG_CONFIG_HOME: "xdg" }, cwd: "/", home: "/home/u" })
      assert.strictEqual(relative.candidates[relative.candidates.length - 1], "/home/u/.config/mcpx-fx/config.json")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("uses only the file named by --config, else by MCPX_CONFIG, resolved from the working directory", () =>
    Effect.gen(function*() {
      const flag = yield* ConfigFile.searchPath({ configFlag: "conf/x.json", env: { MCPX_CONFIG: "/env.json" }, cwd: "/w", home: "/h" })
      // An Option is read out: chai's deep equality takes None for any Some.
      assert.deepStrictEqual({ ...flag, namedBy: Option.getOrThrow(flag.namedBy) }, { explicit: true, namedBy: "--config", candidates: ["/w/conf/x.json"] })
      const env = yield* ConfigFile.searchPath({ env: { MCPX_CONFIG: "/env.json" }, cwd: "/w", home: "/h" })
      assert.deepStrictEqual({ ...env, namedBy: Option.getOrThrow(env.namedBy) }, { explicit: true, namedBy: "MCPX_CONFIG", candidates: ["/env.json"] })
      const emptyEnv = yield* ConfigFile.searchPath({ env: { MCPX_CONFIG: "" }, cwd: "/w", home: "/h" })
      assert.isFalse(emptyEnv.explicit)
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("discovery and merge", () => {
  it.scoped("merges every found file, nearest wins per server, and reports where each came from", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* writeFiles(root, {
        ".mcp.json": JSON.stringify({
          mcpServers: {
            alpha: { command: "alpha-root" },
            beta: { command: "beta-root" },
            gamma: { url: "http://127.0.0.1:1/mcp" }
          },
          settings: { "pool.max": 9, "daemon.port": 0 }
        }),
        "proj/.mcp.json": `{ "mcpServers": { "beta": { "command": "beta-proj-mcp" }, "delta": { "command": "delta-proj" } } }`,
        "proj/.mcpx.json": `{
          // the nearer name at this level
          "mcpServers": {
            "beta": { "command": "beta-proj", },
            "gamma": { "disabled": true },
          },
          "settings": { "pool.max": 3 },
        }`,
        "proj/sub/README": "not config",
        "xdg/mcpx-fx/config.json": JSON.stringify({ mcpServers: { alpha: { command: "alpha-user" }, epsilon: { command: "eps" } } })
      })
      const loaded = yield* Config.load({ env: { XDG_CONFIG_HOME: `${root}/xdg` }, cwd: `${root}/proj/sub`, home: root })
      assert.isFalse(loaded.explicit)
      const ours = loaded.files.filter((f) => f.startsWith(root))
      assert.deepStrictEqual(ours, [
        `${root}/proj/.mcpx.json`,
        `${root}/proj/.mcp.json`,
        `${root}/.mcp.json`,
        `${root}/xdg/mcpx-fx/config.json`
      ])
      const pick = (name: string) => {
        const s = serverNamed(loaded, name)
        assert.instanceOf(s.definition, StdioDefinition)
        return { command: (s.definition as StdioDefinition).command, file: s.file }
      }
      assert.deepStrictEqual(pick("alpha"), { command: "alpha-root", file: `${root}/.mcp.json` })
      assert.deepStrictEqual(pick("beta"), { command: "beta-proj", file: `${root}/proj/.mcpx.json` })
      assert.deepStrictEqual(pick("delta"), { command: "delta-proj", file: `${root}/proj/.mcp.json` })
      assert.deepStrictEqual(pick("epsilon"), { command: "eps", file: `${root}/xdg/mcpx-fx/config.json` })
      assert.isUndefined(loaded.servers.find((s) => s.name === "gamma"))
      assert.deepStrictEqual(loaded.disabled, [{ name: "gamma", file: `${root}/proj/.mcpx.json` }])

      // The settings objects feed the Settings file layer, nearest first.
      const settings = yield* Effect.flatMap(Settings.Settings, (s) =>
        Effect.all([s.resolve("pool.max"), s.resolve("daemon.port"), s.resolve("upstream.protocol")])).pipe(
          Effect.provide(
            Config.layerSettings({ env: { MCPX_UPSTREAM_PROTOCOL: "legacy" } }).pipe(
              Layer.provide(Config.Config.layerStatic(loaded))
            )
          )
        )
      assert.deepStrictEqual(settings, [
        { path: "pool.max", value: 3, source: `file:${root}/proj/.mcpx.json` },
        { path: "daemon.port", value: 0, source: `file:${root}/.mcp.json` },
        { path: "upstream.protocol", value: "prefer-initialize", source: "env:MCPX_UPSTREAM_PROTOCOL" }
      ])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("reads only the explicit file, and fails when it does not exist", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* writeFiles(root, {
        ".mcp.json": JSON.stringify({ mcpServers: { nearby: { command: "n" } } }),
        "elsewhere/only.json": JSON.stringify({ mcpServers: { only: { command: "o" } } })
      })
      for (const input of [{ configFlag: "elsewhere/only.json", env: {} }, { env: { MCPX_CONFIG: `${root}/elsewhere/only.json` } }]) {
        const loaded = yield* Config.load({ ...input, cwd: root, home: root })
        assert.isTrue(loaded.explicit)
        assert.deepStrictEqual(loaded.files, [`${root}/elsewhere/only.json`])
        assert.deepStrictEqual(loaded.servers.map((s) => s.name), ["only"])
      }
      const missing = yield* Effect.flip(Config.load({ configFlag: "nope.json", env: {}, cwd: root, home: root }))
      assert.strictEqual(missing.file, `${root}/nope.json`)
      assert.strictEqual(missing.message, `${root}/nope.json: expected a config file (named by --config), but it does not exist`)
      const missingEnv = yield* Effect.flip(Config.load({ env: { MCPX_CONFIG: "gone.json" }, cwd: root, home: root }))
      assert.include(missingEnv.message, "(named by MCPX_CONFIG)")
      const directory = yield* Effect.flip(Config.load({ configFlag: "elsewhere", env: {}, cwd: root, home: root }))
      assert.strictEqual(directory.path, "")
      assert.include(directory.message, `${root}/elsewhere: cannot be read`)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("provides the loaded configuration as a service", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* writeFiles(root, { "c.json": JSON.stringify({ mcpServers: { one: { command: "1" } } }) })
      const config = yield* Config.Config.pipe(
        Effect.provide(Config.Config.layer({ configFlag: "c.json", env: {}, cwd: root, home: root }))
      )
      assert.deepStrictEqual(config.servers.map((s) => s.namespace), ["one"])
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("server definitions", () => {
  it.scoped("builds stdio and HTTP definitions with expansion, a file-relative cwd and the pool block", () =>
    Effect.gen(function*() {
      const { dir, file, loaded } = yield* loadOne(
        JSON.stringify({
          mcpServers: {
            "git-hub": {
              type: "stdio",
              command: "${BIN_DIR:-/usr/bin}/npx",
              args: ["-y", "server-github", "--token=${TOKEN}"],
              env: { GITHUB_TOKEN: "${TOKEN}", PRICE: "$$5" },
              cwd: "work",
              protocol: "Legacy",
              pool: { max: 2, idleTimeout: "10m", callTimeout: 1500, scope: "session" },
              autoApprove: ["ignored by mcpx-fx"]
            },
            docs: { url: "https://docs.example/${TENANT}/mcp", headers: { Authorization: "Bearer ${TOKEN}" } },
            home: { command: "h", cwd: "~/projects" }
          }
        }),
        { TOKEN: "s3cret", TENANT: "acme" }
      )
      const gh = serverNamed(loaded, "git-hub")
      assert.strictEqual(gh.namespace, "git_hub")
      assert.strictEqual(gh.file, file)
      assert.instanceOf(gh.definition, StdioDefinition)
      assert.deepStrictEqual(
        gh.definition,
        new StdioDefinition({
          transport: "stdio",
          name: "git-hub",
          command: "/usr/bin/npx",
          args: ["-y", "server-github", "--token=s3cret"],
          env: { GITHUB_TOKEN: "s3cret", PRICE: "$5" },
          cwd: `${dir}/work`,
          protocol: "prefer-initialize"
        })
      )
      assert.strictEqual(gh.pool.max, 2)
      assert.strictEqual(gh.pool.scope, "session")
      assert.strictEqual(Duration.toMillis(gh.pool.idleTimeout!), 600_000)
      assert.strictEqual(Duration.toMillis(gh.pool.callTimeout!), 1500)
      assert.isUndefined(gh.pool.startTimeout)

      const docs = serverNamed(loaded, "docs")
      assert.deepStrictEqual(
        docs.definition,
        new HttpDefinition({
          transport: "http",
          name: "docs",
          url: "https://docs.example/acme/mcp",
          headers: { Authorization: "Bearer s3cret" }
        })
      )
      assert.deepStrictEqual(docs.pool, {})
      assert.strictEqual((serverNamed(loaded, "home").definition as StdioDefinition).cwd, `${dir}/projects`)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("names the file, server and key of an unset variable before anything starts", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [entry: unknown, path: string, variable: string]> = [
        [{ command: "x", env: { GITHUB_TOKEN: "${GITHUB_TOKEN}" } }, "mcpServers.github.env.GITHUB_TOKEN", "GITHUB_TOKEN"],
        [{ url: "https://h/mcp", headers: { Authorization: "Bearer ${API_KEY}" } }, "mcpServers.github.headers.Authorization", "API_KEY"],
        [{ url: "https://${HOST}/mcp" }, "mcpServers.github.url", "HOST"],
        [{ command: "x", args: ["a", "${ARG}"] }, "mcpServers.github.args[1]", "ARG"]
      ]
      for (const [entry, path, variable] of cases) {
        const { file, error } = yield* errorOf(JSON.stringify({ mcpServers: { github: entry } }))
        assert.strictEqual(error.path, path)
        assert.strictEqual(
          error.message,
          `${file}: ${path}: environment variable ${variable} is not set (server "github"); expected it set, or \${${variable}:-default}`
        )
      }
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("does not expand servers that are disabled or shadowed by a nearer file", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* writeFiles(root, {
        ".mcp.json": JSON.stringify({ mcpServers: { shadowed: { command: "x", env: { K: "${UNSET_A}" } } } }),
        "p/.mcp.json": JSON.stringify({
          mcpServers: { shadowed: { command: "y" }, off: { command: "z", env: { K: "${UNSET_B}" }, disabled: true } }
        })
      })
      const loaded = yield* Config.load({ env: {}, cwd: `${root}/p`, home: root })
      assert.strictEqual((serverNamed(loaded, "shadowed").definition as StdioDefinition).command, "y")
      assert.isUndefined(loaded.servers.find((s) => s.name === "off"))
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("configuration errors name the file, the key and what was expected", () => {
  const cases: ReadonlyArray<readonly [what: string, text: string, path: string, detail: string | RegExp]> = [
    [
      "invalid JSON",
      `{\n  "mcpServers": {\n    "a": { "command": "x" "args": [] }\n  }\n}`,
      "",
      /^expected JSON \(comments and trailing commas allowed\); .* at line 3, column 27$/
    ],
    ["a top level that is not an object", `[]`, "", "expected a JSON object with mcpServers, got []"],
    ["mcpServers that is not an object", `{"mcpServers": ["a"]}`, "mcpServers", `expected an object of servers, got ["a"]`],
    [
      "an entry that is not an object",
      `{"mcpServers": {"a": "npx"}}`,
      "mcpServers.a",
      `expected an object with command (a stdio server) or url (an HTTP server), got "npx"`
    ],
    ["args that are not a list", `{"mcpServers": {"a": {"command": "x", "args": "-y"}}}`, "mcpServers.a.args", `expected a list of strings, got "-y"`],
    ["an arg that is not a string", `{"mcpServers": {"a": {"command": "x", "args": ["-y", 3]}}}`, "mcpServers.a.args[1]", "expected a string, got 3"],
    ["an env value that is not a string", `{"mcpServers": {"a": {"command": "x", "env": {"PORT": 80}}}}`, "mcpServers.a.env.PORT", "expected a string, got 80"],
    [
      "headers that are not an object",
      `{"mcpServers": {"a": {"url": "http://h", "headers": []}}}`,
      "mcpServers.a.headers",
      "expected an object of strings, got []"
    ],
    [
      "an unknown protocol",
      `{"mcpServers": {"a": {"command": "x", "protocol": "newest"}}}`,
      "mcpServers.a.protocol",
      /^unknown upstream.protocol value "newest"; expected one of: prefer-discover, prefer-initialize, force-discover, force-initialize, follow, /
    ],
    ["a bad pool.max", `{"mcpServers": {"a": {"command": "x", "pool": {"max": 0}}}}`, "mcpServers.a.pool.max", "expected a positive integer, got 0"],
    [
      "a bad pool duration",
      `{"mcpServers": {"a": {"command": "x", "pool": {"idleTimeout": "forever"}}}}`,
      "mcpServers.a.pool.idleTimeout",
      `expected a duration such as 2s, 5m or 1500ms, got "forever"`
    ],
    [
      "a bad pool scope",
      `{"mcpServers": {"a": {"command": "x", "pool": {"scope": "planet"}}}}`,
      "mcpServers.a.pool.scope",
      `expected one of global, session, call, got "planet"`
    ],
    [
      "an unknown pool key",
      `{"mcpServers": {"a": {"command": "x", "pool": {"maxx": 2}}}}`,
      "mcpServers.a.pool.maxx",
      /^unknown key; expected: "max" \| "scope" \| "idleTimeout" \| "callTimeout" \| "startTimeout"$/
    ],
    [
      "a pool block that is not an object",
      `{"mcpServers": {"a": {"command": "x", "pool": 4}}}`,
      "mcpServers.a.pool",
      "expected an object with max, scope, idleTimeout, callTimeout or startTimeout, got 4"
    ],
    [
      "disabled that is not a boolean",
      `{"mcpServers": {"a": {"command": "x", "disabled": "yes"}}}`,
      "mcpServers.a.disabled",
      `expected true or false, got "yes"`
    ],
    [
      "both command and url",
      `{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}`,
      "mcpServers.a",
      "expected either command (a stdio server) or url (an HTTP server), not both"
    ],
    ["neither command nor url", `{"mcpServers": {"a": {"args": []}}}`, "mcpServers.a", "expected command (a stdio server) or url (an HTTP server)"],
    ["an empty command", `{"mcpServers": {"a": {"command": " "}}}`, "mcpServers.a.command", "expected a non-empty command"],
    [
      "a type that does not fit a command",
      `{"mcpServers": {"a": {"command": "x", "type": "http"}}}`,
      "mcpServers.a.type",
      `expected "stdio" for a server with a command, got "http"`
    ],
    [
      "a type that does not fit a url",
      `{"mcpServers": {"a": {"url": "http://h", "type": "stdio"}}}`,
      "mcpServers.a.type",
      `expected "http" for a server with a url, got "stdio"`
    ],
    [
      "an unknown type",
      `{"mcpServers": {"a": {"url": "http://h", "type": "ws"}}}`,
      "mcpServers.a.type",
      `expected one of stdio, http, streamable-http, sse, got "ws"`
    ],
    [
      "headers on a stdio server",
      `{"mcpServers": {"a": {"command": "x", "headers": {}}}}`,
      "mcpServers.a.headers",
      "expected no headers on a stdio server (headers go with url)"
    ],
    [
      "env on an HTTP server",
      `{"mcpServers": {"a": {"url": "http://h", "env": {}}}}`,
      "mcpServers.a.env",
      "expected no env on an HTTP server (env go with command)"
    ],
    [
      "a url that is not http(s)",
      `{"mcpServers": {"a": {"url": "ftp://h/\${X:-}"}}}`,
      "mcpServers.a.url",
      `expected an http:// or https:// URL, got "ftp://h/\${X:-}"`
    ],
    [
      "a malformed variable",
      `{"mcpServers": {"a": {"command": "x", "env": {"K": "\${K"}}}}`,
      "mcpServers.a.env.K",
      `expected \${NAME} or \${NAME:-default} (write $$ for a literal $), got "\${"`
    ],
    ["an empty server name", `{"mcpServers": {"": {"command": "x"}}}`, `mcpServers[""]`, "expected a non-empty server name"],
    [
      "a name with nothing usable",
      `{"mcpServers": {"--": {"command": "x"}}}`,
      `mcpServers["--"]`,
      "expected a server name with a letter or digit (the namespace keeps only [A-Za-z0-9_])"
    ],
    ["settings that are not an object", `{"settings": 3}`, "settings", "expected an object keyed by setting path, got 3"],
    ["a bad setting value", `{"settings": {"pool.max": "lots"}}`, `settings["pool.max"]`, `expected a positive integer, got "lots"`],
    [
      "an unknown setting",
      `{"settings": {"pool.maximum": 2}}`,
      `settings["pool.maximum"]`,
      /^unknown setting "pool.maximum"; expected one of: upstream.protocol, /
    ]
  ]
  for (const [what, text, path, detail] of cases) {
    it.scoped(what, () =>
      Effect.gen(function*() {
        const { file, error } = yield* errorOf(text)
        assert.strictEqual(error.path, path)
        if (typeof detail === "string") assert.strictEqual(error.detail, detail)
        else assert.match(error.detail, detail)
        assert.strictEqual(error.message, path === "" ? `${file}: ${error.detail}` : `${file}: ${path}: ${error.detail}`)
      }).pipe(Effect.provide(NodeContext.layer)))
  }

  it.scoped("two servers whose names sanitise to one namespace", () =>
    Effect.gen(function*() {
      const { file, error } = yield* errorOf(JSON.stringify({ mcpServers: { "my.server": { command: "a" }, "my-server": { command: "b" } } }))
      assert.strictEqual(error.path, `mcpServers["my-server"]`)
      assert.strictEqual(
        error.detail,
        `expected a name with its own namespace; "my_server" is also the namespace of server "my.server" (${file}); rename one of them`
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a namespace collision across files names both files", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* writeFiles(root, {
        ".mcp.json": JSON.stringify({ mcpServers: { "a b": { command: "far" } } }),
        "p/.mcp.json": JSON.stringify({ mcpServers: { "a-b": { command: "near" } } })
      })
      const error = yield* Effect.flip(Config.load({ env: {}, cwd: `${root}/p`, home: root }))
      assert.strictEqual(error.file, `${root}/.mcp.json`)
      assert.strictEqual(error.path, `mcpServers["a b"]`)
      assert.include(error.detail, `server "a-b" (${root}/p/.mcp.json)`)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a file error is reported even when a nearer file overrides everything in it", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* writeFiles(root, {
        ".mcp.json": `{ "mcpServers": { "a": { "command": 1 } } }`,
        "p/.mcp.json": JSON.stringify({ mcpServers: { a: { command: "ok" } } })
      })
      const error = yield* Effect.flip(Config.load({ env: {}, cwd: `${root}/p`, home: root }))
      assert.strictEqual(error.message, `${root}/.mcp.json: mcpServers.a.command: expected a string, got 1`)
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("formatPath", () => {
  it("writes keys the way a reader would look them up", () => {
    assert.strictEqual(ConfigFile.formatPath(["mcpServers", "github", "args", 0]), "mcpServers.github.args[0]")
    assert.strictEqual(ConfigFile.formatPath(["mcpServers", "my server", "env", "A-B"]), `mcpServers["my server"].env["A-B"]`)
    assert.strictEqual(ConfigFile.formatPath(["settings", "pool.max"]), `settings["pool.max"]`)
    assert.strictEqual(ConfigFile.formatPath([]), "")
  })
})
