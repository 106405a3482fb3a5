/**
 * What a host sees of the tools, end to end over the built CLI: a tool is checked against its
 * server's listing before it is called (a legacy SDK server's mistyped tool is exit 2, 404 and
 * -32602 with the closest names, like every other era's), `tools`/`excludeTools` hide tools from
 * every listing and refuse calls to them, `tools.expose: search` shows three meta-tools instead in
 * both eras, `mcpx-fx search` ranks tools, and the config's rough edges are said on stderr.
 */
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import * as DaemonProcess from "./support/DaemonProcess.js"
import { error, firstText, result } from "./support/Replies.js"
import { Modern, open } from "./support/Revisions.js"
import { sandbox } from "./support/Sandbox.js"
import { era, type Message, start } from "./support/StdioServe.js"

const legacySdk = Fixtures.stdioCommand("sdk-v1-legacy")

const servers = {
  legacy: legacySdk,
  alpha: { ...era("dual"), tools: ["*"], excludeTools: ["boom", "/^ask/"] }
}
const settings = { "upstream.probeTimeout": "20s" }

const toolNames = (m: Message) => (result(m).tools as ReadonlyArray<Message>).map((t) => String(t.name))

describe("the tools a host sees", () => {
  it.scopedLive("cli/catalog/a mistyped tool on a legacy upstream is exit 2 with the closest names; a hidden tool is unknown", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* sb.writeJson("mcpx.json", { mcpServers: servers, settings })
      const typo = yield* sb.run(["call", "legacy.ecco", `{"message":"x"}`, "--config", file])
      assert.strictEqual(typo.code, 2, typo.stderr)
      assert.include(typo.stderr, `unknown tool "legacy__ecco"`)
      assert.include(typo.stderr, "legacy__echo")
      const hidden = yield* sb.run(["call", "alpha.boom", "--config", file])
      assert.strictEqual(hidden.code, 2, hidden.stderr)
      assert.include(hidden.stderr, `unknown tool "alpha__boom"`)
      const listed = yield* sb.run(["tools", "--config", file, "--json"])
      const names = (JSON.parse(listed.stdout) as { tools: ReadonlyArray<Message> }).tools.map((t) => String(t.name))
      assert.include(names, "alpha__echo")
      assert.include(names, "legacy__echo")
      assert.notInclude(names, "alpha__boom")
      assert.notInclude(names, "alpha__ask_name")
    }), { timeout: 60_000 })

  it.scopedLive(
    "cli/catalog/through the daemon: /v1/call of a mistyped legacy tool is 404, /v1/tools hides excluded tools, call exits 2",
    () =>
      Effect.gen(function*() {
        const sb = yield* sandbox
        const file = yield* sb.writeJson("mcpx.json", { mcpServers: servers, settings })
        const daemon = yield* DaemonProcess.start(sb, { config: file })
        const post = yield* Effect.promise(() =>
          fetch(`${daemon.info.url}/v1/call`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ tool: "legacy.ecco", arguments: { message: "x" } })
          }).then(async (r) => ({ status: r.status, body: (await r.json()) as Message }))
        )
        assert.strictEqual(post.status, 404, JSON.stringify(post.body))
        assert.include(post.body.suggestions as ReadonlyArray<string>, "legacy__echo")
        const tools = yield* Effect.promise(() => fetch(`${daemon.info.url}/v1/tools`).then((r) => r.json() as Promise<{ tools: ReadonlyArray<Message> }>))
        assert.notInclude(tools.tools.map((t) => String(t.name)), "alpha__boom")
        const viaDaemon = yield* sb.run(["call", "legacy.ecco"], { env: { MCPX_STATE_DIR: daemon.stateDir } })
        assert.strictEqual(viaDaemon.code, 2, viaDaemon.stderr)
        assert.include(viaDaemon.stderr, "legacy__echo")
      }),
    { timeout: 60_000 }
  )

  it.scopedLive("cli/catalog/brace globs filter; a pattern that matches no tool is a warning in process and through the daemon", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* sb.writeJson("mcpx.json", {
        mcpServers: { alpha: { ...era("dual"), tools: ["read_fiel", "{ec,bo}*"], excludeTools: ["nope_*"] } },
        settings
      })
      const local = yield* sb.run(["tools", "--config", file])
      assert.strictEqual(local.code, 0, local.stderr)
      assert.include(local.stdout, "alpha__echo")
      assert.include(local.stdout, "alpha__boom")
      assert.notInclude(local.stdout, "alpha__ask_name")
      assert.include(local.stderr, `tools pattern "read_fiel" matches none of its`)
      assert.include(local.stderr, `excludeTools pattern "nope_*" matches none of its`)
      assert.notInclude(local.stderr, `"{ec,bo}*"`)
      const daemon = yield* DaemonProcess.start(sb, { config: file })
      const listing = yield* Effect.promise(() => fetch(`${daemon.info.url}/v1/tools`).then((r) => r.json() as Promise<{ warnings: ReadonlyArray<Message> }>))
      assert.deepStrictEqual(listing.warnings.map((w) => w.server), ["alpha", "alpha"])
      const viaDaemon = yield* sb.run(["tools"], { env: { MCPX_STATE_DIR: daemon.stateDir } })
      assert.strictEqual(viaDaemon.code, 0, viaDaemon.stderr)
      assert.include(viaDaemon.stdout, "alpha__echo")
      assert.include(viaDaemon.stderr, `mcpx-fx: warning: alpha: tools pattern "read_fiel" matches none of its`)
      assert.include(daemon.stderr(), `tools pattern "read_fiel" matches none of its`)
    }), { timeout: 60_000 })

  it.scopedLive(
    "cli/catalog/call checks the arguments against the tool's inputSchema (exit 2 naming the field), in process and through the daemon; /mcp passes them on",
    () =>
      Effect.gen(function*() {
        const sb = yield* sandbox
        const file = yield* sb.writeJson("mcpx.json", { mcpServers: { alpha: era("dual") }, settings })
        const local = yield* sb.run(["call", "alpha.echo", `{"message":1}`, "--config", file])
        assert.strictEqual(local.code, 2, local.stderr)
        assert.include(local.stderr, "alpha__echo: message must be string")
        const daemon = yield* DaemonProcess.start(sb, { config: file })
        const viaDaemon = yield* sb.run(["call", "alpha.echo", "{}"], { env: { MCPX_STATE_DIR: daemon.stateDir } })
        assert.strictEqual(viaDaemon.code, 2, viaDaemon.stderr)
        assert.include(viaDaemon.stderr, "alpha__echo: message is required")
        const fits = yield* sb.run(["call", "alpha.echo", `{"message":"fits"}`], { env: { MCPX_STATE_DIR: daemon.stateDir } })
        assert.strictEqual(fits.code, 0, fits.stderr)
        assert.include(fits.stdout, "fits")
        // Over MCP the upstream answers for itself: its own isError result.
        const serve = yield* start({ servers: { alpha: era("dual") }, settings })
        const host = yield* open(serve, Modern)
        const passed = result(yield* host.call("wrong-type", "alpha__echo", { message: 1 }))
        assert.isTrue(passed.isError)
        assert.include(JSON.stringify(passed.content), "echo needs a string")
      }),
    { timeout: 60_000 }
  )

  it.scopedLive(
    "cli/catalog/over MCP in both eras: hidden tools are not listed, a mistyped legacy tool is -32602 naming the closest",
    () =>
      Effect.gen(function*() {
        const serve = yield* start({ servers, settings })
        for (const revision of ["2025-11-25", Modern] as const) {
          const host = yield* open(serve, revision)
          const listed = toolNames(yield* host.request(`list-${revision}`, "tools/list"))
          assert.include(listed, "alpha__echo")
          assert.notInclude(listed, "alpha__boom")
          const typo = error(yield* host.call(`typo-${revision}`, "legacy__ecco", { message: "x" }))
          assert.strictEqual(typo.code, -32602)
          assert.include(typo.message, "legacy__echo")
          const hidden = error(yield* host.call(`hidden-${revision}`, "alpha__boom"))
          assert.strictEqual(hidden.code, -32602)
          assert.include(firstText(yield* host.call(`ok-${revision}`, "legacy__echo", { message: "fine" })), "fine")
        }
      }),
    { timeout: 60_000 }
  )

  it.scopedLive("cli/catalog/tools.expose=search shows three meta-tools in both eras that search, describe and call", () =>
    Effect.gen(function*() {
      const serve = yield* start({ servers, settings: { ...settings, "tools.expose": "search" } })
      for (const revision of ["2025-06-18", Modern] as const) {
        const host = yield* open(serve, revision)
        const listed = toolNames(yield* host.request(`list-${revision}`, "tools/list"))
        assert.deepStrictEqual(listed, ["mcpx_search", "mcpx_describe", "mcpx_call"])
        const found = result(yield* host.call(`search-${revision}`, "mcpx_search", { query: "echo", refresh: true }))
        const hits = ((found.structuredContent as Message).tools as ReadonlyArray<Message>).map((t) => String(t.name))
        assert.includeMembers(hits, ["alpha__echo", "legacy__echo"])
        assert.notInclude(hits, "alpha__boom")
        const described = result(yield* host.call(`describe-${revision}`, "mcpx_describe", { name: "legacy__echo" }))
        const tool = (described.structuredContent as Message).tool as Message
        assert.strictEqual(tool.name, "legacy__echo")
        assert.isObject(tool.inputSchema)
        const called = yield* host.call(`call-${revision}`, "mcpx_call", { name: "legacy__echo", arguments: { message: "via search" } })
        assert.include(firstText(called), "via search")
        const hidden = error(yield* host.call(`hidden-${revision}`, "mcpx_call", { name: "alpha__boom" }))
        assert.strictEqual(hidden.code, -32602)
        const bad = error(yield* host.call(`bad-${revision}`, "mcpx_search", { query: 3 }))
        assert.strictEqual(bad.code, -32602)
      }
    }), { timeout: 60_000 })

  it.scopedLive("cli/catalog/search ranks what was listed before and names the servers never listed; --refresh lists them", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* sb.writeJson("mcpx.json", { mcpServers: servers, settings })
      const cold = yield* sb.run(["search", "echo", "--config", file])
      assert.strictEqual(cold.code, 0, cold.stderr)
      assert.include(cold.stdout, "(no tool matched)")
      assert.include(cold.stderr, "never listed: legacy, alpha")
      // `tools` lists every server, which fills the schema cache in the state dir.
      yield* sb.run(["tools", "--config", file])
      const warm = yield* sb.run(["search", "echo", "--config", file, "--json"])
      const hits = JSON.parse(warm.stdout) as { tools: ReadonlyArray<Message>; unlisted: ReadonlyArray<string> }
      assert.deepStrictEqual(hits.unlisted, [])
      assert.deepStrictEqual(hits.tools.slice(0, 2).map((t) => t.match), ["exact", "exact"])
      assert.includeMembers(hits.tools.map((t) => String(t.name)), ["alpha__echo", "legacy__echo"])
      const fresh = yield* sandbox
      const file2 = yield* fresh.writeJson("mcpx.json", { mcpServers: servers, settings })
      const refreshed = yield* fresh.run(["search", "ech", "--refresh", "--config", file2])
      assert.include(refreshed.stdout, "legacy__echo")
      assert.notInclude(refreshed.stderr, "never listed")
    }), { timeout: 60_000 })
})

describe("config rough edges", () => {
  it.scopedLive("cli/config/no config found is said on stderr with where mcpx-fx looked; an empty config found is quiet", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      yield* sb.mkdir("work")
      const none = yield* sb.run(["tools"], { cwd: "work", env: { MCPX_STATE_DIR: sb.path("state") } })
      assert.strictEqual(none.code, 0, none.stderr)
      assert.include(none.stdout, "(no tools)")
      assert.include(none.stderr, "no config file found")
      assert.include(none.stderr, `.mcpx.json, .mcp.json and .vscode/mcp.json in ${sb.path("work")}`)
      const init = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } }
      })
      const serve = yield* sb.run(["serve"], { cwd: "work", env: { MCPX_STATE_DIR: sb.path("state") }, stdin: `${init}\n` })
      assert.strictEqual(serve.code, 0, serve.stderr)
      assert.include(serve.stderr, "no config file found")
      assert.include(serve.stdout, `"protocolVersion":"2025-11-25"`)
      yield* sb.writeJson("work/.mcp.json", { mcpServers: {} })
      const empty = yield* sb.run(["tools"], { cwd: "work", env: { MCPX_STATE_DIR: sb.path("state") } })
      assert.strictEqual(empty.code, 0, empty.stderr)
      assert.strictEqual(empty.stderr, "")
    }), { timeout: 60_000 })

  it.scopedLive("cli/config/an unknown top-level or server key is a warning naming the file and the key", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const file = yield* sb.writeJson("mcpx.json", { mcpServers: { alpha: { ...era("dual"), excludeTool: ["boom"] } }, setings: {}, settings })
      const run = yield* sb.run(["tools", "--config", file])
      assert.strictEqual(run.code, 0, run.stderr)
      assert.include(run.stderr, `mcpx-fx: warning: ${file}: setings: unknown key, ignored; did you mean settings?`)
      assert.include(run.stderr, `${file}: mcpServers.alpha.excludeTool: unknown key, ignored; did you mean excludeTools?`)
      // The typo'd key does nothing: boom is still listed.
      assert.include(run.stdout, "alpha__boom")
    }), { timeout: 60_000 })
})
