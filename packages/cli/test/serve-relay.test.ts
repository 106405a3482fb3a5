/**
 * `mcpx-fx serve --relay` end to end over the bundle: a real daemon in its own sandbox and state
 * directory (one shared where nothing is counted or stopped, else one per test), and relays that
 * find it through MCPX_STATE_DIR. A relay's own config names no server, so every tool a host
 * sees, and every line in an upstream's log, came through the daemon.
 *
 * The upstream era-servers log what they received (`--log`); tests wait on those logs and on
 * stdout frames, never on the clock. Every run must end with nothing but JSON-RPC on stdout.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as DaemonProcess from "./support/DaemonProcess.js"
import * as EraLog from "./support/EraLog.js"
import { content, error, firstText, result } from "./support/Replies.js"
import { initializeParams, Modern, open, type Revision, speaking } from "./support/Revisions.js"
import { type Sandbox, sandbox } from "./support/Sandbox.js"
import { era, type Exited, type Frame, type Message, responseId, type Serve, start } from "./support/StdioServe.js"

/** Upstreams by namespace (era-server mode and flags); each logs to `<namespace>.log` in the daemon's sandbox. */
type Upstreams = Readonly<Record<string, readonly [string, ...ReadonlyArray<string>]>>

/**
 * A daemon serving `upstreams`, and a way to start relays to it.
 * The probe timeout is long so that a slow start on a busy machine never adds an `initialize`
 * beside the `server/discover` a test counts.
 */
const withDaemon = (upstreams: Upstreams, settings: Readonly<Record<string, unknown>> = {}) =>
  Effect.gen(function*() {
    const sb = yield* sandbox
    const servers = Object.fromEntries(
      Object.entries(upstreams).map(([ns, [mode, ...flags]]) => [ns, era(mode, ...flags, "--log", sb.path(`${ns}.log`))])
    )
    const config = yield* sb.writeJson("mcpx.json", {
      mcpServers: servers,
      settings: { "upstream.probeTimeout": "20s", ...settings }
    })
    const daemon = yield* Effect.orDie(DaemonProcess.start(sb, { config }))
    const relay = (drain = "20s") => start({ servers: {}, settings: { "transport.stdioDrain": drain } }, { args: ["--relay"], stateDir: daemon.stateDir })
    return { sb, config, daemon, relay, log: (ns: string) => sb.path(`${ns}.log`) }
  })

/** Closes the relay's stdin; it must exit 0 with nothing but JSON-RPC on stdout. */
const finish = (serve: Serve) =>
  Effect.gen(function*() {
    yield* serve.end
    const run = yield* serve.exited
    assert.strictEqual(run.code, 0, run.stderr)
    assert.deepStrictEqual(run.violations, [], run.stderr)
    return run
  })

/** The era-server's one resource, as the gateway lists it under the `lc` namespace. */
const Readme = "mcpx://lc/era://readme"

const has = (method: string) => (log: ReadonlyArray<EraLog.Logged>) => log.some((l) => l.method === method)

const replyIn = (run: Exited, id: string): Message => {
  const found = run.frames.find((f) => responseId(f) === id)
  assert.isDefined(found, `${id} in\n${run.lines.join("\n")}`)
  return found as Message
}

/** The first `elicitation/create` request on stdout. */
const question = (serve: Serve) =>
  serve.frame(
    (f: Frame) => (!Array.isArray(f) && (f as Message).method === "elicitation/create" && "id" in f ? (f as Message) : undefined),
    "an elicitation/create request"
  )

/**
 * One daemon for the tests that neither count an upstream's messages nor stop the daemon; each
 * of them runs its own relays, side by side with the others'. It starts on first use, not in a
 * `beforeAll`: vitest runs that hook even when a name filter skips every test of the block, yet
 * then skips the `afterAll` that would stop it, and the daemon would outlive the run.
 */
const sharedScope = Effect.runSync(Scope.make())
const SharedDaemon = Effect.runSync(Effect.cached(
  // A stdio upstream's question names no call, so each asking test has an upstream of its own:
  // with the other tests' calls in flight on a shared one, its question could not be attributed.
  Scope.extend(
    withDaemon({
      leg: ["legacy-32601"],
      ask_20250618: ["legacy-32601"],
      ask_20251125: ["legacy-32601"],
      dual: ["dual"],
      banner: ["legacy-banner"]
    }),
    sharedScope
  )
))

const names = (m: Message) => (result(m).tools as ReadonlyArray<Message>).map((t) => t.name)

describe.concurrent("serve --relay, one daemon", () => {
  afterAll(() => Effect.runPromise(Scope.close(sharedScope, Exit.void)), 30_000)

  it.scoped.each(["2025-03-26", "2025-11-25"] as const)(
    "%s/relay/initialize, tools/list and tools/call reach the daemon's upstream",
    (revision) =>
      Effect.gen(function*() {
        const { relay } = yield* SharedDaemon
        const serve = yield* relay()
        const host = yield* open(serve, revision)
        assert.includeMembers(names(yield* host.request("list", "tools/list")), ["leg__echo", "leg__slow", "leg__ask_name"])
        assert.strictEqual(firstText(yield* host.call("call", "leg__echo", { message: "through the daemon" })), "through the daemon")
        yield* finish(serve)
      })
  )

  it.scoped("2025-03-26/relay/a batch is answered with one array", () =>
    Effect.gen(function*() {
      const { relay } = yield* SharedDaemon
      const serve = yield* relay()
      yield* open(serve, "2025-03-26")
      yield* serve.send([
        { id: "b-ping", method: "ping" },
        { id: "b-call", method: "tools/call", params: { name: "leg__echo", arguments: { message: "batched" } } },
        { method: "notifications/progress", params: { progressToken: "nobody", progress: 1 } }
      ])
      const batch = yield* serve.frame((f) => (Array.isArray(f) ? f : undefined), "a batch reply")
      const byId = new Map(batch.map((m) => [m.id, m]))
      assert.sameMembers([...byId.keys()], ["b-ping", "b-call"], JSON.stringify(batch))
      assert.deepStrictEqual(result(byId.get("b-ping") as Message), {})
      assert.strictEqual(firstText(byId.get("b-call") as Message), "batched")
      const run = yield* finish(serve)
      // The batch's replies came as that one array and nowhere else.
      assert.isFalse(run.frames.some((f) => responseId(f) === "b-ping" || responseId(f) === "b-call"), run.lines.join("\n"))
    }))

  it.scoped("2025-11-25/relay/a batch is refused with -32600, as on stdio after 2025-03-26", () =>
    Effect.gen(function*() {
      const { relay } = yield* SharedDaemon
      const serve = yield* relay()
      const host = yield* open(serve, "2025-11-25")
      yield* serve.send([
        { id: "b-call", method: "tools/call", params: { name: "leg__echo", arguments: { message: "batched" } } },
        { id: "b-ping", method: "ping" }
      ])
      const refused = yield* serve.frame((f) => (responseId(f) === null ? (f as Message) : undefined), "an id-less error")
      assert.strictEqual(error(refused).code, -32600)
      yield* host.cheap("after")
      const run = yield* finish(serve)
      assert.isFalse(run.frames.some((f) => Array.isArray(f)), run.lines.join("\n"))
    }))

  it.scoped("2026-07-28/relay/a request with _meta and no initialize is served", () =>
    Effect.gen(function*() {
      const { relay } = yield* SharedDaemon
      const serve = yield* relay()
      const host = yield* open(serve, Modern)
      const discovered = result(yield* host.request("discover", "server/discover"))
      assert.include(discovered.supportedVersions as ReadonlyArray<string>, Modern)
      assert.include(names(yield* host.request("list", "tools/list")), "dual__echo")
      const reply = yield* host.call("call", "dual__echo", { message: "modern" })
      assert.strictEqual(firstText(reply), "modern")
      assert.strictEqual(result(reply).resultType, "complete")
      assert.isObject((result(reply)._meta as Message | undefined)?.["io.modelcontextprotocol/serverInfo"], JSON.stringify(reply))
      const run = yield* finish(serve)
      assert.isFalse(run.frames.some((f) => !Array.isArray(f) && (f as Message).method === "initialize"))
    }))

  // A legacy host's call goes to a legacy upstream (the cancel is forwarded on the session); a
  // modern host's to a dual one (the relay closes the POST and the daemon interrupts the call).

  it.scoped.each(["2025-06-18", "2025-11-25"] as const)(
    "%s/relay/a legacy upstream's elicitation/create reaches the host and the answer goes back",
    (revision) =>
      Effect.gen(function*() {
        const { relay } = yield* SharedDaemon
        const serve = yield* relay()
        const host = yield* open(serve, revision, { elicitation: {} })
        yield* host.send("asking", "tools/call", { name: `ask_${revision.replace(/-/g, "")}__ask_name`, arguments: {} })
        const asked = yield* question(serve)
        const params = asked.params as Message
        assert.isString(params.message)
        assert.isObject(params.requestedSchema)
        yield* serve.send({ id: asked.id as string, result: { action: "accept", content: { name: "Ada" } } })
        assert.strictEqual(firstText(yield* serve.reply("asking")), "hello, Ada")
        yield* finish(serve)
      })
  )

  it.scoped.each(["2025-11-25", Modern] as const)(
    "%s/relay/notifications and responses are never answered, not even with an error",
    (revision) =>
      Effect.gen(function*() {
        const { relay } = yield* SharedDaemon
        const serve = yield* relay()
        const host = yield* open(serve, revision)
        // Each of these the daemon refuses over HTTP; a stdio host must hear nothing of it.
        yield* serve.send({ id: "nobody-asked", result: {} })
        yield* serve.send({ id: "nobody-asked-either", error: { code: -1, message: "no" } })
        yield* serve.send({
          method: "notifications/cancelled",
          params: { requestId: "none", _meta: { "io.modelcontextprotocol/protocolVersion": "2099-01-01" } }
        })
        yield* serve.send({ method: "notifications/no_such_thing", params: host.params() })
        // Not a notification at all: that is answered, on stdio as anywhere.
        yield* serve.sendLine(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: "bad" }))
        yield* host.cheap("after")
        const run = yield* finish(serve)
        // The initialize reply (legacy), the malformed line's error and the request's reply.
        assert.deepStrictEqual(run.frames.map(responseId), [...(revision === Modern ? [] : [`init-${revision}`]), null, "after"])
        assert.strictEqual(error(run.frames.find((f) => responseId(f) === null) as Message).code, -32600)
      })
  )

  it.scoped.each(["2025-11-25", Modern] as const)(
    "%s/relay/a request the daemon refuses whole (413) is still answered with its id",
    (revision) =>
      Effect.gen(function*() {
        const { relay } = yield* SharedDaemon
        const serve = yield* relay()
        const host = yield* open(serve, revision)
        // Past the daemon's 4 MiB body limit.
        const refused = yield* host.call("huge", "leg__echo", { message: "x".repeat(5 * 1024 * 1024) })
        assert.strictEqual(error(refused).code, -32600)
        result(yield* host.cheap("after"))
        yield* finish(serve)
      })
  )

  it.scoped("2026-07-28/relay/a _meta version that no header can carry still reaches the daemon", () =>
    Effect.gen(function*() {
      const { relay } = yield* SharedDaemon
      const serve = yield* relay()
      const host = yield* open(serve, Modern)
      const meta = { "io.modelcontextprotocol/protocolVersion": "2026\n07-28" }
      const refused = error(yield* serve.request("odd", "tools/list", host.params({}, meta)))
      // The daemon's verdict, not the relay's own "did not answer" (-32603).
      assert.notStrictEqual(refused.code, -32603, refused.message)
      assert.notInclude(refused.message, "did not answer")
      result(yield* host.cheap("after"))
      yield* finish(serve)
    }))

  it.scoped.each(["2025-11-25", Modern] as const)("%s/relay/stdout carries only JSON-RPC", (revision) =>
    Effect.gen(function*() {
      const { relay } = yield* SharedDaemon
      const serve = yield* relay()
      const host = yield* open(serve, revision)
      const tricky = "two\nlines, a \u2028 separator, \"quotes\" and ✓"
      yield* host.send("list", "tools/list")
      yield* host.send("text", "tools/call", { name: "banner__echo", arguments: { message: tricky } })
      yield* host.send("boom", "tools/call", { name: "dual__boom", arguments: {} })
      yield* host.send("unknown-tool", "tools/call", { name: "dual__no_such_tool", arguments: {} })
      yield* host.send("unknown-method", "no/such/method")
      yield* serve.sendLine("this line is not JSON")
      const run = yield* finish(serve)
      assert.includeMembers(names(replyIn(run, "list")), ["dual__echo", "banner__echo"])
      assert.strictEqual(firstText(replyIn(run, "text")), tricky)
      assert.isTrue(result(replyIn(run, "boom")).isError)
      assert.isAbove(content(replyIn(run, "boom")).length, 0)
      error(replyIn(run, "unknown-tool"))
      assert.strictEqual(error(replyIn(run, "unknown-method")).code, -32601)
      const unparsed = run.frames.filter((f) => responseId(f) === null).map((f) => error(f as Message).code)
      assert.deepStrictEqual(unparsed, [-32700])
      // JSON-RPC 2.0 names an unreadable request's id null; stdio writes it so, relayed or not.
      assert.isTrue(run.lines.some((l) => l.startsWith(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700`)), run.lines.join("\n"))
      // One line per reply and nothing else: initialize (legacy), five replies, one parse error.
      assert.strictEqual(run.lines.length, (revision === Modern ? 0 : 1) + 5 + 1, run.lines.join("\n"))
    }))
})

describe.concurrent("serve --relay, a daemon each", () => {
  it.scoped.each([["2025-11-25", "legacy-32601"], [Modern, "dual"]] as const)(
    "%s/relay/notifications/cancelled reaches the upstream and the request is never answered",
    ([revision, mode]) =>
      Effect.gen(function*() {
        const { log, relay } = yield* withDaemon({ slowpoke: [mode] })
        const serve = yield* relay()
        const host = yield* open(serve, revision as Revision)
        yield* host.send("doomed", "tools/call", { name: "slowpoke__slow", arguments: { ms: 600_000 } })
        yield* EraLog.until(log("slowpoke"), has("tools/call"))
        yield* serve.send({ method: "notifications/cancelled", params: host.params({ requestId: "doomed", reason: "test" }) })
        yield* EraLog.until(log("slowpoke"), has("notifications/cancelled"))
        // Answered after the cancel, so a reply to the cancelled call would have had its chance.
        yield* host.cheap("after")
        const run = yield* finish(serve)
        assert.isFalse(run.frames.some((f) => responseId(f) === "doomed"), run.lines.join("\n"))
      })
  )

  it.scoped("2025-11-25+2026-07-28/relay/two relays share the daemon's one upstream process per server", () =>
    Effect.gen(function*() {
      const { log, relay } = yield* withDaemon({ leg: ["legacy-32601"], mod: ["modern-only"] }, { "pool.scope": "global" })
      const first = yield* open(yield* relay(), "2025-11-25")
      const second = yield* open(yield* relay(), Modern)
      // All four at once, so both relays' first calls find each upstream not yet started.
      yield* Effect.forEach(
        [first, second].flatMap((host, i) => ["leg", "mod"].map((ns) => ({ host, ns, message: `${ns} ${i}` }))),
        ({ host, message, ns }) => Effect.map(host.call(message, `${ns}__echo`, { message }), (reply) => assert.strictEqual(firstText(reply), message)),
        { concurrency: "unbounded", discard: true }
      )
      yield* finish(first.serve)
      yield* finish(second.serve)
      // Both upstreams log to one file each, so a second process would show a second handshake.
      const leg = EraLog.read(log("leg"))
      assert.strictEqual(leg.filter((l) => l.method === "initialize").length, 1, JSON.stringify(leg))
      assert.strictEqual(leg.filter((l) => l.method === "tools/call").length, 2, JSON.stringify(leg))
      const mod = EraLog.read(log("mod"))
      assert.strictEqual(mod.filter((l) => l.method === "server/discover").length, 1, JSON.stringify(mod))
      assert.strictEqual(mod.filter((l) => l.method === "tools/call").length, 2, JSON.stringify(mod))
    }))

  it.scoped.each([["2025-11-25", "legacy-32601"], [Modern, "dual"]] as const)(
    "%s/relay/end of input answers requests in flight, cancels the rest upstream, then exits 0",
    ([revision, mode]) =>
      Effect.gen(function*() {
        const { log, relay } = yield* withDaemon({ slowpoke: [mode] })
        // Long enough for a 100ms call on a busy machine, far shorter than the stuck one.
        const serve = yield* relay("3s")
        const host = yield* open(serve, revision as Revision)
        yield* host.send("quick", "tools/call", { name: "slowpoke__slow", arguments: { ms: 100 } })
        yield* host.send("stuck", "tools/call", { name: "slowpoke__slow", arguments: { ms: 600_000 } })
        const run = yield* finish(serve)
        assert.strictEqual(firstText(replyIn(run, "quick")), "slept 100ms")
        assert.isFalse(run.frames.some((f) => responseId(f) === "stuck"), run.lines.join("\n"))
        // The relay has exited; the daemon tells the upstream the stuck call is over.
        yield* EraLog.until(log("slowpoke"), has("notifications/cancelled"))
      })
  )

  it.scoped("2025-11-25/relay/a legacy host hears list_changed from the moment it has initialized, and its subscriptions' updates", () =>
    Effect.gen(function*() {
      const { daemon, relay } = yield* withDaemon({ lc: ["legacy-32601", "--list-changed"] })
      // A warm upstream answers at once, so the notification races the relay's GET stream.
      const warm = yield* Effect.promise(() =>
        fetch(`${daemon.info.url}/v1/call`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ tool: "lc.echo", arguments: { message: "warm" } })
        }).then((r) => r.status)
      )
      assert.strictEqual(warm, 200)
      const serve = yield* relay()
      // A host may write its first lines without waiting for any reply.
      yield* serve.sendLine(
        [
          { jsonrpc: "2.0", id: "init", method: "initialize", params: initializeParams("2025-11-25") },
          { jsonrpc: "2.0", method: "notifications/initialized" },
          { jsonrpc: "2.0", id: "notify", method: "tools/call", params: { name: "lc__notify_changes", arguments: {} } }
        ].map((m) => JSON.stringify(m)).join("\n")
      )
      assert.strictEqual(result(yield* serve.reply("init")).protocolVersion, "2025-11-25")
      assert.include(firstText(yield* serve.reply("notify")), "sent list_changed")
      yield* serve.frame(
        (f) => (!Array.isArray(f) && (f as Message).method === "notifications/tools/list_changed" ? f : undefined),
        "notifications/tools/list_changed"
      )
      const host = speaking(serve, "2025-11-25")
      result(yield* host.request("subscribe", "resources/subscribe", { uri: Readme }))
      assert.include(firstText(yield* host.call("notify-again", "lc__notify_changes")), "1 update(s)")
      yield* serve.frame(
        (f) =>
          !Array.isArray(f) && (f as Message).method === "notifications/resources/updated" &&
            ((f as Message).params as Message | undefined)?.uri === Readme
            ? f
            : undefined,
        "notifications/resources/updated"
      )
      yield* finish(serve)
    }))

  it.scoped.each(["2025-11-25", Modern] as const)(
    "%s/relay/once the daemon is gone a request is answered with an error that names it",
    (revision) =>
      Effect.gen(function*() {
        const { daemon, relay } = yield* withDaemon({ leg: ["legacy-32601"] })
        const serve = yield* relay()
        const host = yield* open(serve, revision)
        result(yield* host.cheap("before"))
        assert.strictEqual(yield* daemon.stop("SIGTERM"), 0)
        const after = error(yield* host.cheap("after"))
        assert.strictEqual(after.code, -32603)
        assert.include(after.message, "daemon")
        yield* finish(serve)
      })
  )

  it.scoped("2025-11-25/relay/after the daemon restarts, the relay opens a new session in the host's words and the request is served", () =>
    Effect.gen(function*() {
      const { config, daemon, relay, sb } = yield* withDaemon({ leg: ["legacy-32601"] })
      const serve = yield* relay()
      const host = yield* open(serve, "2025-11-25")
      result(yield* host.cheap("before"))
      assert.strictEqual(yield* daemon.stop("SIGTERM"), 0)
      yield* Effect.orDie(DaemonProcess.start(sb, { config, stateDir: daemon.stateDir }))
      // The new daemon has never heard of the relay's session (404): the relay initializes again
      // as the host did, and the host sees only its answer.
      result(yield* host.cheap("after"))
      result(yield* host.cheap("again"))
      yield* finish(serve)
    }))

  it.scoped("relay/with no daemon it exits 1 and says a daemon is needed", () =>
    Effect.gen(function*() {
      const sb: Sandbox = yield* sandbox
      const serve = yield* start({ servers: {} }, { args: ["--relay"], stateDir: sb.path("state") })
      yield* serve.end
      const run = yield* serve.exited
      assert.strictEqual(run.code, 1, run.stderr)
      assert.deepStrictEqual(run.lines, [])
      assert.include(run.stderr, "--relay needs a running daemon")
      assert.include(run.stderr, "mcpx-fx daemon")
    }))
})
