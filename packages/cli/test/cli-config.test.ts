/**
 * `mcpx-fx config`, end to end through the bundle: discovery (walking up, nearest wins per
 * server, --config and MCPX_CONFIG), `--path`, `--sources`, the effective configuration, and
 * broken files exiting 2 with the file and key named.
 */
import { assert, describe, it } from "@effect/vitest"
import * as SettingsRegistry from "@mcpx-fx/config/SettingsRegistry"
import * as Effect from "effect/Effect"
import { lines, plain, type Sandbox, sandbox } from "./support/Sandbox.js"

/**
 * A project tree: `.mcpx.json` in project/, `.mcp.json` in project/ and in the sandbox root, and
 * a user config; the working directory is project/src, so every project file is found walking up.
 */
const projectTree = (sb: Sandbox) =>
  Effect.gen(function*() {
    const near = yield* sb.writeJson("project/.mcpx.json", {
      mcpServers: {
        github: { command: "near-github", args: ["--stdio"], protocol: "legacy" },
        docs: { url: "https://docs.example.com/mcp" }
      },
      settings: { "pool.max": 2 }
    })
    const sameDir = yield* sb.writeJson("project/.mcp.json", {
      mcpServers: { github: { command: "same-dir-github" }, lint: { command: "lint-server" } },
      settings: { "pool.max": 7, "daemon.port": 9000 }
    })
    const far = yield* sb.writeJson(".mcp.json", {
      mcpServers: { github: { command: "far-github" }, "far-away": { command: "far-server" } }
    })
    const user = yield* sb.writeJson("home/.config/mcpx-fx/config.json", {
      mcpServers: { personal: { command: "personal-server" } },
      settings: { "pool.idleTimeout": "10m" }
    })
    yield* sb.mkdir("project/src")
    return { near, sameDir, far, user, cwd: "project/src" }
  })

describe("mcpx-fx config: discovery", () => {
  it.scopedLive("finds .mcpx.json and .mcp.json walking up, then the user config; --path lists them nearest first", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const tree = yield* projectTree(sb)
      const r = yield* sb.run(["config", "--path"], { cwd: tree.cwd })
      assert.strictEqual(r.code, 0, r.stderr)
      assert.strictEqual(r.stderr, "")
      assert.deepStrictEqual(lines(r.stdout), [tree.near, tree.sameDir, tree.far, tree.user])

      const json = yield* sb.run(["config", "--path", "--json"], { cwd: tree.cwd })
      const found = JSON.parse(json.stdout)
      assert.deepStrictEqual(found.files, [tree.near, tree.sameDir, tree.far, tree.user])
      assert.strictEqual(found.explicit, false)
      assert.include(found.searched, sb.path("project", "src", ".mcpx.json"))
    }))

  it.scopedLive("merges servers with the nearest definition winning per server", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const tree = yield* projectTree(sb)
      const r = yield* sb.run(["config", "--json"], { cwd: tree.cwd })
      assert.strictEqual(r.code, 0, r.stderr)
      const config = JSON.parse(r.stdout)
      assert.deepStrictEqual(Object.keys(config.servers).sort(), ["docs", "far-away", "github", "lint", "personal"])
      assert.deepInclude(config.servers.github, { command: "near-github", file: tree.near })
      assert.deepInclude(config.servers.lint, { command: "lint-server", file: tree.sameDir })
      assert.deepInclude(config.servers["far-away"], { command: "far-server", file: tree.far, namespace: "far_away" })
      assert.deepInclude(config.servers.personal, { command: "personal-server", file: tree.user })
      assert.strictEqual(config.settings["pool.max"], 2)
      assert.strictEqual(config.settings["daemon.port"], 9000)
      assert.strictEqual(config.settings["pool.idleTimeout"], "10m")
    }))

  it.scopedLive("--config and MCPX_CONFIG make one file the only one; --config wins", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const tree = yield* projectTree(sb)
      const team = yield* sb.writeJson("shared/team.json", { mcpServers: { team: { command: "team-server" } } })
      const other = yield* sb.writeJson("shared/other.json", { mcpServers: { other: { command: "other-server" } } })

      const byFlag = yield* sb.run(["config", "--path", "--config", "../../shared/team.json"], { cwd: tree.cwd })
      assert.strictEqual(byFlag.code, 0, byFlag.stderr)
      assert.deepStrictEqual(lines(byFlag.stdout), [team])

      const byEnv = yield* sb.run(["config", "--json"], { cwd: tree.cwd, env: { MCPX_CONFIG: other } })
      assert.strictEqual(byEnv.code, 0, byEnv.stderr)
      const config = JSON.parse(byEnv.stdout)
      assert.deepStrictEqual(config.files, [other])
      assert.deepStrictEqual(Object.keys(config.servers), ["other"])

      const both = yield* sb.run(["config", "--path", "--config", team], { cwd: tree.cwd, env: { MCPX_CONFIG: other } })
      assert.deepStrictEqual(lines(both.stdout), [team])
    }))

  it.scopedLive("--path says where it looked when nothing was found", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const cwd = yield* sb.mkdir("empty/dir")
      const r = yield* sb.run(["config", "--path"], { cwd: "empty/dir" })
      assert.strictEqual(r.code, 0, r.stderr)
      const out = lines(r.stdout)
      assert.strictEqual(out[0], "no config file found; looked in, nearest first:")
      assert.strictEqual(out[1], `  ${cwd}/.mcpx.json`)
      assert.strictEqual(out[2], `  ${cwd}/.mcp.json`)
      assert.strictEqual(out[out.length - 1], `  ${sb.path("home", ".config", "mcpx-fx", "config.json")}`)
    }))

  it.scopedLive("a named file that does not exist exits 2 naming it and what named it", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      for (
        const [args, env, by] of [
          [["config"], { MCPX_CONFIG: "missing.json" }, "MCPX_CONFIG"],
          [["config", "--path", "--config", "missing.json"], {}, "--config"]
        ] as const
      ) {
        const r = yield* sb.run(args, { env })
        assert.strictEqual(r.code, 2, args.join(" "))
        assert.strictEqual(r.stdout, "")
        assert.strictEqual(r.stderr, `mcpx-fx: ${sb.path("missing.json")}: expected a config file (named by ${by}), but it does not exist\n`)
      }
    }))
})

describe("mcpx-fx config: the effective configuration", () => {
  it.scopedLive("shows servers with namespace, transport, command or url, canonical protocol and pool; and settings", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* sb.write(
        ".mcpx.json",
        `{
          // comments are allowed
          "mcpServers": {
            "git hub": {
              "command": "npx", "args": ["-y", "server-github"], "env": { "GITHUB_TOKEN": "\${TOKEN}" },
              "protocol": "legacy", "pool": { "max": 3, "idleTimeout": "1m" }
            },
            "docs": { "url": "https://docs.example.com/mcp", "headers": { "Authorization": "Bearer \${TOKEN}" } },
          },
          "settings": { "pool.callTimeout": "2m" }
        }`
      )
      const env = { TOKEN: "s3cret", MCPX_UPSTREAM_PROTOCOL: "force-modern" }
      const r = yield* sb.run(["config", "--json", "--pool-scope", "session"], { env })
      assert.strictEqual(r.code, 0, r.stderr)
      assert.notInclude(r.stdout, "s3cret")
      const config = JSON.parse(r.stdout)
      assert.deepStrictEqual(config.files, [file])
      assert.deepStrictEqual(config.servers["git hub"], {
        namespace: "git_hub",
        file,
        transport: "stdio",
        command: "npx",
        args: ["-y", "server-github"],
        env: { GITHUB_TOKEN: "<redacted>" },
        protocol: "prefer-initialize",
        pool: { max: 3, scope: "session", idleTimeout: "1m", callTimeout: "2m", startTimeout: "30s" },
        expose: "all"
      })
      assert.deepStrictEqual(config.servers.docs, {
        namespace: "docs",
        file,
        transport: "http",
        url: "https://docs.example.com/mcp",
        headers: { Authorization: "<redacted>" },
        protocol: "force-discover",
        pool: { max: 1, scope: "session", idleTimeout: "5m", callTimeout: "2m", startTimeout: "30s" },
        expose: "all"
      })
      assert.deepStrictEqual(Object.keys(config.settings), SettingsRegistry.registry.map((s) => s.path))
      assert.strictEqual(config.settings["upstream.protocol"], "force-discover")
      assert.strictEqual(config.settings["pool.callTimeout"], "2m")
      assert.deepStrictEqual(config.stateDir, { path: sb.path("home", ".local", "state", "mcpx-fx"), source: "home" })

      const text = yield* sb.run(["config"], { env })
      assert.strictEqual(text.code, 0, text.stderr)
      assert.notInclude(text.stdout, "s3cret")
      assert.include(text.stdout, `  git hub  (namespace git_hub, from ${file})`)
      assert.include(text.stdout, "    command    npx -y server-github")
      assert.include(text.stdout, "    protocol   prefer-initialize")
      assert.match(text.stdout, /^ {2}upstream\.protocol +force-discover$/m)
    }))

  it.scopedLive("shows each server's tool patterns and how its tools are offered, and an OAuth server's auth without its secret", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      yield* sb.writeJson(".mcpx.json", {
        mcpServers: {
          files: { command: "files-server", tools: ["read_*", "/^list/"], excludeTools: ["read_secret"], expose: "search" },
          remote: {
            url: "https://remote.example.com/mcp",
            auth: { type: "oauth", clientId: "mcpx-client", clientSecret: "\${SECRET}", scopes: ["read", "write"] }
          }
        }
      })
      const env = { SECRET: "s3cret-client" }
      const r = yield* sb.run(["config", "--json"], { env })
      assert.strictEqual(r.code, 0, r.stderr)
      assert.notInclude(r.stdout, "s3cret-client")
      const config = JSON.parse(r.stdout)
      assert.deepInclude(config.servers.files, { tools: ["read_*", "/^list/"], excludeTools: ["read_secret"], expose: "search" })
      assert.deepStrictEqual(config.servers.remote.auth, {
        type: "oauth",
        clientId: "mcpx-client",
        clientSecret: "<redacted>",
        scopes: ["read", "write"]
      })
      assert.strictEqual(config.servers.remote.expose, "all")
      assert.isUndefined(config.servers.remote.tools)

      const text = yield* sb.run(["config"], { env })
      assert.strictEqual(text.code, 0, text.stderr)
      assert.notInclude(text.stdout, "s3cret-client")
      assert.match(text.stdout, /^ {4}tools +read_\* \/\^list\/$/m)
      assert.match(text.stdout, /^ {4}excludeTools +read_secret$/m)
      assert.match(text.stdout, /^ {4}expose +search$/m)
      assert.match(text.stdout, /^ {4}auth +oauth, clientId mcpx-client, clientSecret <redacted>, scopes read write$/m)
    }))

  it.scopedLive("drops a server that a nearer file disables, and reports it", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const near = yield* sb.writeJson("a/.mcpx.json", { mcpServers: { old: { disabled: true } } })
      yield* sb.writeJson(".mcp.json", { mcpServers: { old: { command: "old-server" }, kept: { command: "kept" } } })
      const r = yield* sb.run(["config", "--json"], { cwd: "a" })
      assert.strictEqual(r.code, 0, r.stderr)
      const config = JSON.parse(r.stdout)
      assert.deepStrictEqual(Object.keys(config.servers), ["kept"])
      assert.deepStrictEqual(config.disabled, [{ name: "old", file: near }])
    }))
})

describe("mcpx-fx config --sources", () => {
  it.scopedLive("shows every setting with its source and every server with its file", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const tree = yield* projectTree(sb)
      const options = { cwd: tree.cwd, env: { MCPX_UPSTREAM_PROTOCOL: "legacy" } }
      const r = yield* sb.run(["config", "--sources", "--daemon-address", "::1"], options)
      assert.strictEqual(r.code, 0, r.stderr)
      const [settingsTable = "", serversTable = ""] = r.stdout.split("\n\n")
      const settings = new Map(lines(settingsTable).slice(1).map((l) => l.split(/ {2,}/)).map(([p, ...rest]) => [p, rest]))
      assert.deepStrictEqual([...settings.keys()], SettingsRegistry.registry.map((s) => s.path))
      assert.deepStrictEqual(settings.get("upstream.protocol"), ["prefer-initialize", "env:MCPX_UPSTREAM_PROTOCOL"])
      assert.deepStrictEqual(settings.get("pool.max"), ["2", `file:${tree.near}`])
      assert.deepStrictEqual(settings.get("daemon.port"), ["9000", `file:${tree.sameDir}`])
      assert.deepStrictEqual(settings.get("pool.idleTimeout"), ["10m", `file:${tree.user}`])
      assert.deepStrictEqual(settings.get("daemon.address"), ["::1", "flag:--daemon-address"])
      assert.deepStrictEqual(settings.get("pool.scope"), ["global", "default"])
      const servers = lines(serversTable).map((l) => l.split(/ {2,}/))
      assert.deepStrictEqual(servers[0], ["SERVER", "NAMESPACE", "FILE"])
      assert.deepInclude(servers, ["github", "github", tree.near])
      assert.deepInclude(servers, ["lint", "lint", tree.sameDir])
      assert.deepInclude(servers, ["far-away", "far_away", tree.far])
      assert.deepInclude(servers, ["personal", "personal", tree.user])

      const json = yield* sb.run(["config", "--sources", "--json"], options)
      const sources = JSON.parse(json.stdout)
      assert.deepInclude(sources.settings, { path: "upstream.protocol", value: "prefer-initialize", source: "env:MCPX_UPSTREAM_PROTOCOL" })
      assert.deepInclude(sources.servers, { name: "github", namespace: "github", file: tree.near })
    }))

  it.scopedLive("--path and --sources together are a usage error", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const r = yield* sb.run(["config", "--path", "--sources"])
      assert.strictEqual(r.code, 2)
      assert.strictEqual(r.stdout, "")
      assert.include(r.stderr, "--path and --sources cannot be used together")
    }))
})

describe("mcpx-fx config: broken files", () => {
  it.scopedLive("a file that is not JSON exits 2 naming the file and the position", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* sb.write(".mcp.json", `{\n  "mcpServers": {\n    "a": { "command": "x" \n`)
      const r = yield* sb.run(["config"])
      assert.strictEqual(r.code, 2)
      assert.strictEqual(r.stdout, "")
      assert.match(r.stderr, new RegExp(`^mcpx-fx: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: expected JSON .* at line \\d+, column \\d+\\n$`))
    }))

  it.scopedLive("a wrong value exits 2 naming the file, the key and the expectation, for every command", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* sb.writeJson(".mcpx.json", { mcpServers: { github: { command: "npx", args: "-y" } } })
      const expected = `mcpx-fx: ${file}: mcpServers.github.args: expected a list of strings, got "-y"\n`
      for (const args of [["config"], ["config", "--sources"], ["settings", "list"], ["settings", "get", "pool.max"]]) {
        const r = yield* sb.run(args)
        assert.strictEqual(r.code, 2, args.join(" "))
        assert.strictEqual(r.stdout, "", args.join(" "))
        assert.strictEqual(r.stderr, expected, args.join(" "))
      }
      const path = yield* sb.run(["config", "--path"])
      assert.strictEqual(path.code, 0, path.stderr)
      assert.deepStrictEqual(lines(path.stdout), [file])
    }))

  it.scopedLive("an unset ${VAR} exits 2 naming the variable and the server", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* sb.writeJson(".mcpx.json", { mcpServers: { api: { url: "https://x.example/mcp", headers: { Authorization: "${API_TOKEN}" } } } })
      const r = yield* sb.run(["config"])
      assert.strictEqual(r.code, 2)
      assert.strictEqual(r.stdout, "")
      assert.include(r.stderr, `${file}: mcpServers.api.headers.Authorization: environment variable API_TOKEN is not set`)
    }))
})

describe("mcpx-fx config --help", () => {
  it.scopedLive("exits 0 and shows its examples and options", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const r = yield* sb.run(["config", "--help"])
      assert.strictEqual(r.code, 0, r.stderr)
      const help = plain(r.stdout)
      assert.include(help, "Example: mcpx-fx config --sources")
      assert.include(help, "Example: mcpx-fx config --path --config ./team.mcp.json")
      for (const option of ["--path", "--sources", "--config FILE", "--json", "[setting flags]"]) assert.include(help, option)
    }))
})
