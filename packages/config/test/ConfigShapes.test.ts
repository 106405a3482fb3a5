/**
 * What the config reader takes beyond the `mcpServers` basics: VS Code's `servers` shape (and a
 * `.vscode/mcp.json` on the search path), tool filter patterns, warnings for unknown keys, and
 * entries that would start mcpx-fx itself.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Config from "../src/Config.js"
import * as ToolPattern from "../src/internal/ToolPattern.js"

const tempDir = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  return yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "mcpx-config-shapes-" }))
})

const write = (root: string, rel: string, text: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const file = path.join(root, rel)
    yield* fs.makeDirectory(path.dirname(file), { recursive: true })
    yield* fs.writeFileString(file, text)
    return file
  })

const loadText = (text: string, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    const file = yield* write(dir, "mcpx.json", text)
    return { file, dir, loaded: yield* Config.load({ configFlag: file, env, cwd: dir, home: dir }) }
  })

const failureOf = (text: string) =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    const file = yield* write(dir, "mcpx.json", text)
    return { file, error: yield* Effect.flip(Config.load({ configFlag: file, env: {}, cwd: dir, home: dir })) }
  })

describe("tool patterns", () => {
  const matches = (pattern: string, name: string) => Either.getOrThrow(ToolPattern.compile(pattern))(name)

  it("an exact name, a glob when it has *?[, a /regex/ unanchored", () => {
    assert.isTrue(matches("search_issues", "search_issues"))
    assert.isFalse(matches("search_issues", "search_issues_2"))
    assert.isTrue(matches("search_*", "search_issues"))
    assert.isFalse(matches("search_*", "do_search_issues"))
    assert.isTrue(matches("get_?", "get_a"))
    assert.isTrue(matches("[ab]*", "beta"))
    assert.isFalse(matches("[!ab]*", "beta"))
    assert.isTrue(matches("/issue/", "list_issues_for_repo"))
    assert.isTrue(matches("/^DELETE/i", "delete_repo"))
    assert.isFalse(matches("/^delete/", "undelete"))
    // A dot in a glob is a dot, not any character.
    assert.isFalse(matches("a.*", "abc"))
    // Braces, and a star over any character a tool name may have.
    assert.isTrue(matches("{read,list}_*", "read_file"))
    assert.isTrue(matches("{read,list}_*", "list_dir"))
    assert.isFalse(matches("{read,list}_*", "write_file"))
    assert.isTrue(matches("fs/*", "fs/read/file"))
    assert.isTrue(matches("[!ab]*", "cx"))
    assert.isTrue(matches("*", ".hidden"))
  })

  it("names the patterns that match none of a server's tools", () => {
    const compiled = (pattern: string) => ({ pattern, matches: Either.getOrThrow(ToolPattern.compile(pattern)) })
    const filter = ToolPattern.filterOf([compiled("read_fiel"), compiled("{read,list}_*")], [compiled("delete_*")])
    assert.deepStrictEqual(filter.unmatched(["read_file", "list_dir"]), [
      { list: "tools", pattern: "read_fiel" },
      { list: "excludeTools", pattern: "delete_*" }
    ])
    assert.deepStrictEqual(ToolPattern.filterOf(undefined, []).unmatched(["x"]), [])
  })

  it("deny wins over allow; no lists lets everything through", () => {
    const compiled = (pattern: string) => ({ pattern, matches: Either.getOrThrow(ToolPattern.compile(pattern)) })
    const allow = [compiled("get_*")]
    const deny = [compiled("get_secret")]
    const filter = ToolPattern.filterOf(allow, deny)
    assert.isTrue(filter.allows("get_user"))
    assert.isFalse(filter.allows("get_secret"))
    assert.isFalse(filter.allows("put_user"))
    assert.isTrue(ToolPattern.filterOf(undefined, []).all)
  })

  it.scoped("a server's tools and excludeTools become its filter", () =>
    Effect.gen(function*() {
      const { loaded } = yield* loadText(JSON.stringify({
        mcpServers: { gh: { command: "gh-mcp", tools: ["/issue/", "get_me"], excludeTools: ["delete_*"] } }
      }))
      const gh = loaded.servers[0]!
      assert.deepStrictEqual(gh.tools, ["/issue/", "get_me"])
      assert.isTrue(gh.filter!.allows("list_issues"))
      assert.isTrue(gh.filter!.allows("get_me"))
      assert.isFalse(gh.filter!.allows("delete_issue"))
      assert.isFalse(gh.filter!.allows("create_repo"))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("an invalid pattern is a configuration error naming the file, the server and the pattern", () =>
    Effect.gen(function*() {
      const { error, file } = yield* failureOf(JSON.stringify({ mcpServers: { gh: { command: "x", excludeTools: ["ok", "/(unclosed/"] } } }))
      assert.strictEqual(error._tag, "ConfigError")
      assert.include(error.message, `${file}: mcpServers.gh.excludeTools[1]:`)
      assert.include(error.message, `server "gh"`)
      assert.include(error.message, `"/(unclosed/"`)
      const glob = yield* failureOf(JSON.stringify({ mcpServers: { gh: { command: "x", tools: ["get_[abc"] } } }))
      assert.include(glob.error.message, "mcpServers.gh.tools[0]")
      assert.include(glob.error.message, `an invalid glob (Missing closing: "]"`)
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("the VS Code shape", () => {
  it.scoped("servers with type stdio and http are read like mcpServers, with ${env:...} and ${workspaceFolder}", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* write(
        root,
        "proj/.vscode/mcp.json",
        `{
        // VS Code's workspace file
        "inputs": [],
        "servers": {
          "files": { "type": "stdio", "command": "files-mcp", "args": ["\${workspaceFolder}/data"], "env": { "T": "\${env:TOKEN}" } },
          "docs": { "type": "http", "url": "http://127.0.0.1:9/mcp" },
        }
      }`
      )
      const loaded = yield* Config.load({ env: { TOKEN: "t" }, cwd: `${root}/proj`, home: `${root}/home` })
      assert.deepStrictEqual(loaded.files, [`${root}/proj/.vscode/mcp.json`])
      assert.deepStrictEqual(loaded.warnings, [])
      const files = loaded.servers.find((s) => s.name === "files")!.definition
      assert.strictEqual(files.transport, "stdio")
      if (files.transport === "stdio") {
        assert.deepStrictEqual(files.args, [`${root}/proj/data`])
        assert.deepStrictEqual(files.env, { T: "t" })
      }
      assert.strictEqual(loaded.servers.find((s) => s.name === "docs")!.definition.transport, "http")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("errors in a servers entry name it under servers; an input prompt is refused with what to write instead", () =>
    Effect.gen(function*() {
      const bad = yield* failureOf(JSON.stringify({ servers: { x: { type: "http", command: "c" } } }))
      assert.include(bad.error.message, "servers.x.type")
      const input = yield* failureOf(JSON.stringify({ servers: { x: { command: "c", env: { K: "${input:key}" } } } }))
      assert.include(input.error.message, "servers.x.env.K")
      assert.include(input.error.message, "${env:NAME}")
      const twice = yield* failureOf(JSON.stringify({ mcpServers: { x: { command: "c" } }, servers: { x: { command: "d" } } }))
      assert.include(twice.error.message, "servers.x")
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("warnings", () => {
  it.scoped("an unknown top-level or server key is named with its file and the closest known key", () =>
    Effect.gen(function*() {
      const { file, loaded } = yield* loadText(JSON.stringify({
        mcpServer: {},
        mcpServers: { gh: { comand: "x", command: "gh", autoApprove: ["a"], excludeTool: ["b"] } }
      }))
      assert.deepStrictEqual(loaded.warnings?.map((w) => w.message), [
        `${file}: mcpServer: unknown key, ignored; did you mean mcpServers?`,
        `${file}: mcpServers.gh.comand: unknown key, ignored; did you mean command?`,
        `${file}: mcpServers.gh.excludeTool: unknown key, ignored; did you mean excludeTools?`
      ])
      assert.strictEqual(loaded.servers.length, 1)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a server that runs mcpx-fx itself is skipped with a warning, the others load", () =>
    Effect.gen(function*() {
      const { loaded } = yield* loadText(JSON.stringify({
        mcpServers: {
          self: { command: "mcpx-fx", args: ["serve"] },
          viaNpx: { command: "npx", args: ["-y", "mcpx-fx@latest", "serve", "--relay"] },
          other: { command: "npx", args: ["-y", "@modelcontextprotocol/server-github"] }
        }
      }))
      assert.deepStrictEqual(loaded.servers.map((s) => s.name), ["other"])
      assert.deepStrictEqual(loaded.warnings?.map((w) => w.path), ["mcpServers.self", "mcpServers.viaNpx"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("finding no file is no error; searched lists where it looked", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const loaded = yield* Config.load({ env: {}, cwd: root, home: `${root}/home` })
      assert.deepStrictEqual(loaded.files, [])
      assert.strictEqual(loaded.searched?.[0], `${root}/.mcpx.json`)
      const said = Config.describeSearch(loaded.searched ?? [])
      assert.include(said, `.mcpx.json, .mcp.json and .vscode/mcp.json in ${root} and every directory above it`)
      assert.include(said, `${root}/home/.config/mcpx-fx/config.json`)
    }).pipe(Effect.provide(NodeContext.layer)))
})
