/**
 * Servers without a restart, end to end over the built daemon: an edit of its config file adds a
 * server while the others keep their processes and hosts get list_changed; a broken edit keeps the
 * running configuration and shows in /v1/events and `mcpx-fx status`; SIGHUP reloads.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as DaemonProcess from "./support/DaemonProcess.js"
import { endpoint, isStream, openSession, type SseItem, type SseReader, sseReader } from "./support/HttpMcp.js"
import { result } from "./support/Replies.js"
import { sandbox } from "./support/Sandbox.js"
import { era, type Message } from "./support/StdioServe.js"

/** Reads until `want` accepts an item; fails if the stream ends first. */
const until = (stream: SseReader, want: (item: SseItem) => boolean, what: string): Effect.Effect<SseItem> =>
  Effect.flatMap(
    stream.next,
    (item) => item === undefined ? Effect.dieMessage(`the stream ended before ${what}`) : want(item) ? Effect.succeed(item) : until(stream, want, what)
  )

const isEvent = (type: string) => (i: SseItem) => i._tag === "event" && i.event === type

/** The daemon's /v1/events, filtered to config events, open until the scope closes. */
const configEvents = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const controller = new AbortController()
      const response = await fetch(`${url}/v1/events?types=config.reload,config.error`, { signal: controller.signal })
      return sseReader(response, controller)
    }),
    (r) => r.abort
  ).pipe(Effect.tap((r) => until(r, (i) => i._tag === "comment", "the subscribed comment")))

const json = (url: string) => Effect.promise(() => fetch(url).then((r) => r.json() as Promise<Message>))

describe("config reload", () => {
  it.scopedLive(
    "cli/reload/an edit adds a server, keeps the others' processes, tells hosts; a broken edit keeps the config and shows in status; SIGHUP reloads",
    () =>
      Effect.gen(function*() {
        const sb = yield* sandbox
        const config = (servers: Record<string, unknown>) => ({ mcpServers: servers, settings: { "upstream.probeTimeout": "20s" } })
        const file = yield* sb.writeJson("mcpx.json", config({ alpha: era("dual", "--list-changed") }))
        const daemon = yield* DaemonProcess.start(sb, { config: file })
        const http = endpoint(daemon.info.mcp)
        const env = { MCPX_STATE_DIR: daemon.stateDir }

        const session = yield* openSession(http, "2025-11-25")
        const listed = yield* session.request(1, "tools/list")
        const names = (body: unknown) => ((result(body as Message).tools as ReadonlyArray<Message>).map((t) => String(t.name)))
        assert.include(names(listed.body), "alpha__hello")
        assert.notInclude(names(listed.body), "beta__echo")
        const alphaInstance = (servers: ReadonlyArray<Message>) =>
          ((servers.find((s) => s.name === "alpha")?.pool as Message | null)?.instances as ReadonlyArray<Message>)[0]?.id
        const before = alphaInstance((yield* json(`${daemon.info.url}/v1/servers`)).servers as ReadonlyArray<Message>)
        assert.isString(before)

        const got = yield* http.get(session.headers)
        if (!isStream(got)) return assert.fail(`expected the GET stream, got ${got.status}`)
        yield* until(got, (i) => i._tag === "comment", "the opening comment")
        const events = yield* configEvents(daemon.info.url)

        // Add a server: the host is told, beta's tools are listed, alpha's process stays.
        yield* sb.writeJson("mcpx.json", config({ alpha: era("dual", "--list-changed"), beta: era("legacy-32601") }))
        const reloaded = yield* until(events, isEvent("config.reload"), "config.reload")
        assert.deepInclude(reloaded._tag === "event" ? reloaded.data : {}, { added: ["beta"], removed: [], restarted: [] })
        yield* until(got, (i) => i._tag === "event" && i.data.method === "notifications/tools/list_changed", "tools list_changed")
        const after = yield* session.request(2, "tools/list")
        assert.include(names(after.body), "beta__echo")
        assert.include(names(after.body), "alpha__hello")
        const echoed = yield* session.request(3, "tools/call", { name: "beta__echo", arguments: { message: "new server" } })
        assert.include(echoed.text, "new server")
        assert.strictEqual(alphaInstance((yield* json(`${daemon.info.url}/v1/servers`)).servers as ReadonlyArray<Message>), before)

        // A broken edit: the running configuration stays, the error is an event and in status.
        yield* sb.write("mcpx.json", `{ "mcpServers": { "alpha": { "command": `)
        const refused = yield* until(events, isEvent("config.error"), "config.error")
        assert.include(refused._tag === "event" ? String(refused.data.message) : "", "mcpx.json")
        const status = yield* sb.run(["status"], { env })
        assert.strictEqual(status.code, 0, status.stderr)
        assert.include(status.stdout, "reload refused")
        assert.include(status.stdout, "still running the previous config")
        const still = yield* session.request(4, "tools/list")
        assert.include(names(still.body), "beta__echo")
        const statusJson = JSON.parse((yield* sb.run(["status", "--json"], { env })).stdout) as { status: { config: Message } }
        assert.isString((statusJson.status.config.error as Message).message)

        // Fixed again, and then SIGHUP: each is a reload; removing beta stops only beta.
        yield* sb.writeJson("mcpx.json", config({ alpha: era("dual", "--list-changed") }))
        const fixed = yield* until(events, isEvent("config.reload"), "config.reload after the fix")
        assert.deepInclude(fixed._tag === "event" ? fixed.data : {}, { removed: ["beta"], added: [] })
        daemon.child.kill("SIGHUP")
        const hup = yield* until(events, isEvent("config.reload"), "config.reload on SIGHUP")
        assert.deepInclude(hup._tag === "event" ? hup.data : {}, { added: [], removed: [], restarted: [] })
        const cleared = JSON.parse((yield* sb.run(["status", "--json"], { env })).stdout) as { status: { config: Message } }
        assert.isUndefined(cleared.status.config.error)
        assert.strictEqual(cleared.status.config.reloads, 3)
        assert.strictEqual(alphaInstance((yield* json(`${daemon.info.url}/v1/servers`)).servers as ReadonlyArray<Message>), before)
      }),
    { timeout: 60_000 }
  )

  it.scopedLive(
    "cli/servers/list with a daemon running shows the daemon's servers and files, from any folder; --local the folder's",
    () =>
      Effect.gen(function*() {
        const sb = yield* sandbox
        const file = yield* sb.writeJson("project/.mcp.json", { mcpServers: { alpha: era("dual"), gamma: { ...era("dual"), disabled: true } } })
        const daemon = yield* DaemonProcess.start(sb, { config: file })
        yield* sb.mkdir("elsewhere")
        const env = { MCPX_STATE_DIR: daemon.stateDir }
        const listed = yield* sb.run(["servers", "list"], { env, cwd: "elsewhere" })
        assert.strictEqual(listed.code, 0, listed.stderr)
        assert.include(listed.stdout, `the running daemon's (pid ${daemon.info.pid}), from ${file}:`)
        const row = listed.stdout.split("\n").find((l) => l.startsWith("alpha ")) ?? ""
        for (const cell of ["enabled", "stdio", "era-server", file]) assert.include(row, cell)
        // The daemon's disabled servers too, from the file that disabled them.
        assert.match(listed.stdout, new RegExp(`^gamma\\s+disabled\\s+-\\s+-\\s+${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"))
        const json = JSON.parse((yield* sb.run(["servers", "list", "--json"], { env, cwd: "elsewhere" })).stdout) as {
          servers: ReadonlyArray<Message>
          daemon: { pid: number; files: ReadonlyArray<string> }
        }
        assert.deepStrictEqual(json.servers.map((s) => [s.name, s.enabled, s.file]), [["alpha", true, file], ["gamma", false, file]])
        assert.deepStrictEqual(json.daemon, { pid: daemon.info.pid, files: [file] })
        const local = yield* sb.run(["servers", "list", "--local"], { env, cwd: "elsewhere" })
        assert.strictEqual(local.code, 0, local.stderr)
        assert.strictEqual(local.stdout, "(no servers)\n")
      }),
    { timeout: 60_000 }
  )

  it.scopedLive("cli/servers/add, disable, enable and remove edit the file in place, and a running daemon picks each up", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const text = `{\n  // the team's servers\n  "mcpServers": {\n    "alpha": ${JSON.stringify(era("dual"))} // keep me\n  }\n}\n`
      const file = yield* sb.write(".mcp.json", text)
      const daemon = yield* DaemonProcess.start(sb, { config: file })
      const env = { MCPX_STATE_DIR: daemon.stateDir }
      const events = yield* configEvents(daemon.info.url)
      const fixture = era("legacy-32601")

      const added = yield* sb.run(["servers", "add", "beta", fixture.command, "--", ...fixture.args], { env })
      assert.strictEqual(added.code, 0, added.stderr)
      assert.include(added.stdout, `added beta in ${file}`)
      const edited = yield* Effect.promise(() => import("node:fs/promises").then((fs) => fs.readFile(file, "utf8")))
      assert.include(edited, "// the team's servers")
      assert.include(edited, "// keep me")
      yield* until(events, isEvent("config.reload"), "the reload after add")
      const tools = yield* sb.run(["tools"], { env })
      assert.include(tools.stdout, "beta__echo")

      const listed = JSON.parse((yield* sb.run(["servers", "list", "--json"])).stdout) as { servers: ReadonlyArray<Message> }
      assert.deepStrictEqual(listed.servers.map((s) => [s.name, s.enabled]), [["alpha", true], ["beta", true]])

      assert.strictEqual((yield* sb.run(["servers", "disable", "beta"])).code, 0)
      yield* until(events, isEvent("config.reload"), "the reload after disable")
      assert.notInclude((yield* sb.run(["tools"], { env })).stdout, "beta__echo")
      const off = (yield* sb.run(["servers", "list"])).stdout
      assert.match(off, /beta\s+disabled/)

      assert.strictEqual((yield* sb.run(["servers", "enable", "beta"])).code, 0)
      yield* until(events, isEvent("config.reload"), "the reload after enable")
      assert.include((yield* sb.run(["tools"], { env })).stdout, "beta__echo")

      assert.strictEqual((yield* sb.run(["servers", "remove", "beta"])).code, 0)
      yield* until(events, isEvent("config.reload"), "the reload after remove")
      const back = yield* Effect.promise(() => import("node:fs/promises").then((fs) => fs.readFile(file, "utf8")))
      assert.strictEqual(back, text)
      const unknown = yield* sb.run(["servers", "remove", "alpah"])
      assert.strictEqual(unknown.code, 2)
      assert.include(unknown.stderr, "did you mean alpha")
    }), { timeout: 60_000 })
})
