import { afterEach, assert, beforeEach, describe, it } from "@effect/vitest"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import { EraCache } from "../../src/era/EraCache.js"
import { Negotiator } from "../../src/era/Negotiator.js"
import { Pool } from "../../src/pool/Pool.js"
import type { PoolStatus } from "../../src/pool/PoolStatus.js"
import { type Caller, OneShot, type PoolServer, type PoolSettings, ScopeKey } from "../../src/pool/PoolModel.js"
import { PoolError, type PoolEvent } from "../../src/pool/PoolEvents.js"
import type { Preference } from "../../src/era/Preference.js"
import { Prober } from "../../src/era/Prober.js"
import { StdioDefinition } from "../../src/ServerDefinition.js"
import type { Session } from "../../src/session/SessionModel.js"
import { HTTPStatusError, TransportClosed, type TransportError } from "../../src/transport/Transport.js"
import {
  discoverResult,
  err,
  type FakeConnection,
  type FakeKind,
  fakeTransport,
  initializeResult,
  ok,
  type Recorder,
  type Script
} from "../util/FakeTransport.js"

// --- servers as scripts

/** How a server answers its handshake; `tools/call` is answered by `serve` with the connection number. */
type Handshake = (req: JsonRpc.Request, n: number) => Effect.Effect<JsonRpc.Response, TransportError>

const dual: Handshake = (req) =>
  req.method === "initialize"
    ? ok(req, initializeResult("2025-11-25"))
    : req.method === "server/discover"
    ? ok(req, discoverResult(["2026-07-28"]))
    : err(req, ErrorCode.MethodNotFound, "no such method")

const legacyOnly: Handshake = (req) =>
  req.method === "initialize"
    ? ok(req, initializeResult("2025-11-25"))
    : err(req, ErrorCode.MethodNotFound, "no such method")

const modernOnly: Handshake = (req) =>
  req.method === "initialize"
    ? err(req, ErrorCode.UnsupportedProtocolVersion, "initialize is not served", {
      supported: ["2026-07-28"],
      requested: "2025-11-25"
    })
    : req.method === "server/discover"
    ? ok(req, discoverResult(["2026-07-28"]))
    : err(req, ErrorCode.MethodNotFound, "no such method")

/** The handshake, with `server/discover` answered only once `gate` opens. */
const heldDiscover = (handshake: Handshake, gate: Deferred.Deferred<void>): Handshake => (req, n) =>
  req.method === "server/discover" ? Effect.zipRight(Deferred.await(gate), handshake(req, n)) : handshake(req, n)

/**
 * A server: the handshake, plus `tools/call`, answered with the number of the connection that
 * served it, or held (forever, or until `gate` opens) when `hold` says so for that connection.
 */
const serve = (
  handshake: Handshake,
  options: {
    readonly hold?: (n: number) => boolean
    readonly entered?: Deferred.Deferred<number>
    readonly gate?: Deferred.Deferred<void>
  } = {}
): Script =>
(req, n) => {
  if (req.method !== "tools/call") return handshake(req, n)
  const answer = ok(req, { content: [{ type: "text", text: String(n) }] })
  if (options.hold?.(n) !== true) return answer
  const entered = options.entered === undefined ? Effect.void : Deferred.succeed(options.entered, n)
  const wait = options.gate === undefined ? Effect.never : Deferred.await(options.gate)
  return entered.pipe(Effect.zipRight(wait), Effect.zipRight(answer))
}

// --- harness

/**
 * The kind of fake the running suite uses (set per test by `describe.each` below). Under
 * "in-place" a stdio connection cuts calls in place as StdioTransport does, and a server refuses
 * `server/discover` so that its session settles legacy: the Pool then runs calls on it in the
 * caller's fiber (pool/internal/PoolInPlace.ts), the path production takes for most calls.
 */
let kind: FakeKind = "general"
let lastRecorder: Recorder | undefined

const legacyServed = (script: Script): Script => (req, n) =>
  req.method === "server/discover" ? err(req, ErrorCode.MethodNotFound, "no such method") : script(req, n)

const setup = (script: Script, wire: "stdio" | "streamable-http" = "stdio") => {
  const connections = new Map<number, FakeConnection>()
  const recorder: Recorder = { sent: [], opened: 0, connections, inPlace: [], cancelled: [] }
  lastRecorder = recorder
  const layer = Pool.layer.pipe(
    Layer.provide(Prober.layer),
    Layer.provideMerge(EraCache.layerMemory),
    Layer.provide(Negotiator.layer),
    Layer.provide(fakeTransport(kind === "in-place" ? legacyServed(script) : script, recorder, wire, kind))
  )
  return { recorder, connections, layer }
}

const definition = (name: string) => new StdioDefinition({ transport: "stdio", name, command: "fake-server" })

const serverOf = (preference: Preference, settings: Partial<PoolSettings> = {}, name = "fake"): PoolServer => ({
  definition: definition(name),
  probe: {
    preference,
    probeTimeout: "2 seconds",
    session: { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} }
  },
  settings
})

const modern = (id?: string): Caller => ({ key: id === undefined ? ScopeKey.global : ScopeKey.session(id) })
const legacy = (id?: string): Caller => ({
  key: id === undefined ? ScopeKey.global : ScopeKey.session(id),
  revision: "2025-06-18"
})
const perCall: Caller = { key: ScopeKey.call }

/** What served a call: the connection number, and the session's era and how it was decided. */
const who = (s: Session) =>
  Effect.map(s.request("tools/call", { name: "who", arguments: {} }), (result) => {
    const content = result.content
    const first = Array.isArray(content) ? content[0] : undefined
    const text = typeof first === "object" && first !== null && "text" in first ? String(first.text) : "?"
    return { conn: Number(text), era: s.era, eraSource: s.eraSource }
  })

const call = (server: PoolServer, caller: Caller) => Effect.flatMap(Pool, (pool) => pool.withSession(server, caller, who))

/** Starts the caller's instance without a call, so that the next call finds it serving (in place, when it can be). */
const warm = (server: PoolServer, caller: Caller) => Effect.flatMap(Pool, (pool) => pool.withSession(server, caller, () => Effect.void))

/** Under the in-place suite, the calls sent so far ran in place (the production path). */
const tookInPlace = (recorder: Recorder, methods: ReadonlyArray<string>) => {
  if (kind === "in-place") assert.deepStrictEqual(recorder.inPlace, methods)
}

const statusOf = (name: string) => Effect.flatMap(Pool, (pool) => pool.snapshot).pipe(Effect.map((all) => all.find((s) => s.server === name)))

const status = (name = "fake") => Effect.flatMap(statusOf(name), (s) => (s === undefined ? Effect.dieMessage(`no pool for ${name}`) : Effect.succeed(s)))

/** How many calls the key's instance has in flight (0 while the pool does not exist yet). */
const busyOf = (key = "global", name = "fake") => Effect.map(statusOf(name), (s) => s?.instances.find((i) => i.key === key)?.busy ?? 0)

const keysOf = (s: PoolStatus, lane: "modern" | "legacy" = "modern") => s.instances.filter((i) => i.lane === lane).map((i) => i.key).sort()

/** Yields until `done` holds; fails the test (rather than hanging) when it never does. */
const eventually = <R>(what: string, done: Effect.Effect<boolean, never, R>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 10_000; i++) {
      if (yield* done) return
      yield* Effect.yieldNow()
    }
    const pools = yield* Effect.serviceOption(Pool).pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.succeed([]), onSome: (p) => p.snapshot }))
    )
    return yield* Effect.dieMessage(`never happened: ${what}; pools: ${JSON.stringify(pools)}`)
  })

const sleepers = Effect.map(TestClock.sleeps(), Chunk.size)

/**
 * Runs `fork` and waits until it has put one more sleep on the TestClock than before, so that
 * adjusting the clock reaches it. (The TestClock keeps interrupted sleeps, so only growth counts.)
 */
const forkSleeping = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const before = yield* sleepers
    const fiber = yield* Effect.fork(self)
    yield* eventually("a new sleeper on the TestClock", Effect.map(sleepers, (n) => n > before))
    return fiber
  })

const subscribe: Effect.Effect<Queue.Dequeue<PoolEvent>, never, Pool | Scope.Scope> = Effect.flatMap(Pool, (p) => p.subscribe)

/** The next event of the given type (earlier events of other types are skipped). */
const next = <T extends PoolEvent["type"]>(events: Queue.Dequeue<PoolEvent>, type: T) =>
  Effect.gen(function*() {
    while (true) {
      const e = yield* Queue.take(events)
      if (e.type === type) return e as Extract<PoolEvent, { type: T }>
    }
  })

const drained = (events: Queue.Dequeue<PoolEvent>) => Effect.map(Queue.takeAll(events), (c) => Chunk.toReadonlyArray(c).map((e) => e.type))

const poolErrorOf = (e: unknown): PoolError => {
  assert.instanceOf(e, PoolError)
  return e as PoolError
}

describe.each<FakeKind>(["general", "in-place"])("Pool (%s calls)", (suiteKind) => {
  // Tests of eras and lanes need a server that speaks the modern era, which the in-place suite's
  // servers refuse (see `kind`); they run in the general suite only.
  const ofModernServers = suiteKind === "general"
  const ownEra = ofModernServers ? "modern" as const : "legacy" as const

  beforeEach(() => {
    kind = suiteKind
    lastRecorder = undefined
  })
  // The suite must take the path it names: under "in-place" a call the pool served on the
  // server's own lane ran in its caller's fiber.
  afterEach(() => {
    const ran = lastRecorder?.inPlace?.length ?? 0
    if (suiteKind === "general") assert.strictEqual(ran, 0)
  })

  describe("sharing", () => {
    it.effect("pool/shared-start: concurrent first calls share one start and one instance", () => {
      const gate = Deferred.unsafeMake<void>(FiberId.none)
      const held = heldDiscover(dual, gate)
      const { layer, recorder } = setup(serve(held))
      return Effect.gen(function*() {
        const server = serverOf("prefer-discover")
        const calls = yield* Effect.fork(Effect.all([call(server, modern()), call(server, modern()), call(server, modern())], {
          concurrency: "unbounded"
        }))
        yield* eventually("the start is under way", Effect.sync(() => recorder.sent.includes("1:server/discover")))
        yield* eventually("three callers share the starting instance", Effect.map(busyOf(), (n) => n === 3))
        assert.strictEqual(recorder.opened, 1)
        assert.strictEqual((yield* status()).instances[0]?.state, "starting")
        yield* Deferred.succeed(gate, undefined)
        const served = yield* Fiber.join(calls)
        assert.deepStrictEqual(served.map((s) => s.conn), [1, 1, 1])
        assert.strictEqual(recorder.opened, 1)
        assert.deepStrictEqual(recorder.sent.filter((m) => m.endsWith("server/discover")), ["1:server/discover"])
        const after = yield* status()
        assert.strictEqual(after.instances.length, 1)
        assert.strictEqual(after.instances[0]?.calls, 3)
        assert.strictEqual(after.instances[0]?.busy, 0)
      }).pipe(Effect.provide(layer))
    })

    it.effect("pool/keys: one instance per scope key, reused by later calls with the same key", () => {
      const { layer, recorder } = setup(serve(dual))
      return Effect.gen(function*() {
        const server = serverOf("prefer-discover", { max: 3 })
        const a = yield* call(server, modern("a"))
        const b = yield* call(server, modern("b"))
        const g = yield* call(server, modern())
        const a2 = yield* call(server, modern("a"))
        const b2 = yield* call(server, modern("b"))
        assert.deepStrictEqual([a.conn, b.conn, g.conn, a2.conn, b2.conn], [1, 2, 3, 1, 2])
        assert.strictEqual(recorder.opened, 3)
        assert.deepStrictEqual(keysOf(yield* status()), ["global", "session:a", "session:b"])
      }).pipe(Effect.provide(layer))
    })

    it.scoped("pool/call-key: a call key gets a fresh instance that is closed after the call", () => {
      const { layer, recorder, connections } = setup(serve(dual))
      return Effect.gen(function*() {
        const events = yield* subscribe
        const server = serverOf("prefer-discover", { max: 2 })
        const first = yield* call(server, perCall)
        const stop1 = yield* next(events, "server.stop")
        assert.strictEqual(stop1.reason, "released")
        assert.strictEqual(stop1.key, "call:1")
        const second = yield* call(server, perCall)
        const stop2 = yield* next(events, "server.stop")
        assert.strictEqual(stop2.key, "call:2")
        assert.deepStrictEqual([first.conn, second.conn], [1, 2])
        assert.strictEqual(recorder.opened, 2)
        assert.strictEqual(connections.get(1)?.ended(), "closed")
        assert.strictEqual(connections.get(2)?.ended(), "closed")
        assert.deepStrictEqual((yield* status()).instances, [])
      }).pipe(Effect.provide(layer))
    })
  })

  describe("capacity", () => {
    if (ofModernServers) {
      it.scoped("pool/lru: a new key in a full lane evicts that lane's least-recently-used idle instance only", () => {
        const { layer, connections } = setup(serve(dual))
        return Effect.gen(function*() {
          const events = yield* subscribe
          const server = serverOf("follow", { max: 2 })
          assert.strictEqual((yield* call(server, modern("a"))).conn, 1) // t=0, modern lane
          assert.strictEqual((yield* call(server, legacy("x"))).conn, 2) // t=0, legacy lane: the oldest of all
          yield* TestClock.adjust("1 second")
          assert.strictEqual((yield* call(server, modern("b"))).conn, 3) // t=1
          yield* TestClock.adjust("1 second")
          assert.strictEqual((yield* call(server, modern("a"))).conn, 1) // t=2: a is now newer than b
          yield* TestClock.adjust("1 second")
          assert.strictEqual((yield* call(server, modern("c"))).conn, 4) // the modern lane is full
          const stopped = yield* next(events, "server.stop")
          assert.deepStrictEqual([stopped.lane, stopped.key, stopped.reason], ["modern", "session:b", "evicted"])
          assert.strictEqual(connections.get(3)?.ended(), "closed")
          assert.strictEqual(connections.get(1)?.ended(), "open")
          assert.strictEqual(connections.get(2)?.ended(), "open")
          const s = yield* status()
          assert.deepStrictEqual(keysOf(s, "modern"), ["session:a", "session:c"])
          assert.deepStrictEqual(keysOf(s, "legacy"), ["session:x"])
        }).pipe(Effect.provide(layer))
      })
    }

    it.effect("pool/saturated: a new key waits while every instance is busy, then fails at startTimeout", () => {
      const entered = Deferred.unsafeMake<number>(FiberId.none)
      const gate = Deferred.unsafeMake<void>(FiberId.none)
      const { layer, recorder } = setup(serve(dual, { hold: () => true, entered, gate }))
      return Effect.gen(function*() {
        const server = serverOf("prefer-discover", { max: 1, startTimeout: "10 seconds" })
        const busy = yield* Effect.fork(call(server, modern("a")))
        yield* Deferred.await(entered)
        const waiting = yield* forkSleeping(Effect.flip(call(server, modern("b"))))
        assert.strictEqual((yield* status()).lanes[0]?.queued, 1)
        yield* TestClock.adjust("9999 millis")
        assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)))
        yield* TestClock.adjust("1 millis")
        const e = poolErrorOf(yield* Fiber.join(waiting))
        assert.strictEqual(e.reason, "saturated")
        assert.include(e.message, "fake")
        assert.include(e.message, "saturated")
        assert.strictEqual(recorder.opened, 1)
        assert.strictEqual((yield* status()).lanes[0]?.queued, 0)
        yield* Deferred.succeed(gate, undefined)
        assert.strictEqual((yield* Fiber.join(busy)).conn, 1)
      }).pipe(Effect.provide(layer))
    })

    it.scoped("pool/saturated: a waiting key gets the instance that becomes idle first, which is evicted for it", () => {
      const entered = Deferred.unsafeMake<number>(FiberId.none)
      const gate = Deferred.unsafeMake<void>(FiberId.none)
      const { layer, recorder, connections } = setup(serve(dual, { hold: (n) => n === 1, entered, gate }))
      return Effect.gen(function*() {
        const events = yield* subscribe
        const server = serverOf("prefer-discover", { max: 1 })
        const busy = yield* Effect.fork(call(server, modern("a")))
        yield* Deferred.await(entered)
        const waiting = yield* Effect.fork(call(server, modern("b")))
        yield* eventually("b waits for a permit", Effect.map(status(), (s) => s.lanes[0]?.queued === 1))
        assert.strictEqual(recorder.opened, 1)
        yield* Deferred.succeed(gate, undefined)
        assert.strictEqual((yield* Fiber.join(busy)).conn, 1)
        assert.strictEqual((yield* Fiber.join(waiting)).conn, 2)
        const stopped = yield* next(events, "server.stop")
        assert.deepStrictEqual([stopped.key, stopped.reason], ["session:a", "evicted"])
        assert.strictEqual(connections.get(1)?.ended(), "closed")
        assert.deepStrictEqual(keysOf(yield* status()), ["session:b"])
      }).pipe(Effect.provide(layer))
    })
  })

  describe("idle reaping", () => {
    it.scoped("pool/idle: an instance with no call in flight is closed at exactly idleTimeout, not before", () => {
      const { layer, connections } = setup(serve(dual))
      return Effect.gen(function*() {
        const events = yield* subscribe
        const server = serverOf("prefer-discover", { idleTimeout: "5 minutes" })
        yield* call(server, modern())
        yield* TestClock.adjust("299999 millis")
        assert.strictEqual(connections.get(1)?.ended(), "open")
        assert.strictEqual((yield* status()).instances.length, 1)
        yield* TestClock.adjust("1 millis")
        const stopped = yield* next(events, "server.stop")
        assert.deepStrictEqual([stopped.reason, stopped.key, stopped.uptimeMs], ["idle", "global", 300_000])
        assert.strictEqual(connections.get(1)?.ended(), "closed")
        assert.deepStrictEqual((yield* status()).instances, [])
      }).pipe(Effect.provide(layer))
    })

    it.scoped("pool/idle: a call that comes and goes while the instance is idle moves its closing to idleTimeout after that call", () => {
      const { layer, connections } = setup(serve(dual))
      return Effect.gen(function*() {
        const events = yield* subscribe
        const server = serverOf("prefer-discover", { idleTimeout: "1 minute" })
        yield* call(server, modern())
        yield* TestClock.adjust("40 seconds")
        yield* call(server, modern())
        // The first call's deadline passes with the instance idle again: it is not its deadline any more.
        yield* TestClock.adjust("59 seconds")
        assert.strictEqual(connections.get(1)?.ended(), "open")
        yield* TestClock.adjust("1 second")
        const stopped = yield* next(events, "server.stop")
        assert.deepStrictEqual([stopped.reason, stopped.uptimeMs], ["idle", 100_000])
        assert.strictEqual(connections.get(1)?.ended(), "closed")
      }).pipe(Effect.provide(layer))
    })

    it.effect("pool/idle: a call in flight keeps the instance, and the idle clock restarts when it ends", () => {
      const entered = Deferred.unsafeMake<number>(FiberId.none)
      const gate = Deferred.unsafeMake<void>(FiberId.none)
      let calls = 0
      const { layer, connections } = setup(serve(dual, { hold: () => ++calls === 2, entered, gate }))
      return Effect.gen(function*() {
        const server = serverOf("prefer-discover", { idleTimeout: "1 minute" })
        yield* call(server, modern())
        const long = yield* Effect.fork(call(server, modern()))
        yield* Deferred.await(entered)
        yield* TestClock.adjust("10 minutes")
        assert.strictEqual(connections.get(1)?.ended(), "open")
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(long)
        yield* TestClock.adjust("59 seconds")
        assert.strictEqual(connections.get(1)?.ended(), "open")
        yield* TestClock.adjust("1 second")
        yield* eventually("the idle instance is closed", Effect.sync(() => connections.get(1)?.ended() === "closed"))
      }).pipe(Effect.provide(layer))
    })
  })

  describe("start failures", () => {
    if (ofModernServers) {
      it.scoped("pool/cooldown: failed starts fail fast for a cooldown that doubles up to the cap and resets on success", () => {
        let healthy = false
        const flaky: Handshake = (req, n) => (healthy ? dual(req, n) : err(req, ErrorCode.MethodNotFound, "not today"))
        const { layer, recorder } = setup(serve(flaky))
        return Effect.gen(function*() {
          const events = yield* subscribe
          const server = serverOf("force-discover", { max: 2, cooldownBase: "1 second", cooldownCap: "4 seconds" })
          const fails = (caller: Caller = modern()) => Effect.map(Effect.flip(call(server, caller)), poolErrorOf)

          const first = yield* fails()
          assert.deepStrictEqual([first.reason, first.retryInMs], ["start-failed", 1000])
          assert.include(first.message, "fake")
          assert.include(first.message, "-32601")
          const failed = yield* next(events, "server.start.failed")
          assert.deepStrictEqual([failed.server, failed.lane, failed.failures, failed.retryInMs], ["fake", "modern", 1, 1000])

          const cooling = yield* fails()
          assert.deepStrictEqual([cooling.reason, cooling.retryInMs], ["cooling-down", 1000])
          assert.include(cooling.message, "fake")
          assert.include(cooling.message, "-32601")
          assert.strictEqual(recorder.opened, 1)

          yield* TestClock.adjust("999 millis")
          assert.deepStrictEqual([(yield* fails()).reason, recorder.opened], ["cooling-down", 1])
          yield* TestClock.adjust("1 millis")
          const second = yield* fails()
          assert.deepStrictEqual([second.reason, second.retryInMs, recorder.opened], ["start-failed", 2000, 2])

          yield* TestClock.adjust("1999 millis")
          assert.deepStrictEqual([(yield* fails()).retryInMs, recorder.opened], [1, 2])
          yield* TestClock.adjust("1 millis")
          assert.strictEqual((yield* fails()).retryInMs, 4000)
          yield* TestClock.adjust("4 seconds")
          assert.strictEqual((yield* fails()).retryInMs, 4000) // capped
          const s = yield* status()
          assert.strictEqual(s.lanes[0]?.cooldown?.failures, 4)
          assert.include(s.lanes[0]?.cooldown?.lastFailure ?? "", "-32601")

          healthy = true
          yield* TestClock.adjust("4 seconds")
          assert.strictEqual((yield* call(server, modern())).conn, 5)
          assert.isUndefined((yield* status()).lanes[0]?.cooldown)

          healthy = false
          const afterReset = yield* fails(modern("other"))
          assert.deepStrictEqual([afterReset.reason, afterReset.retryInMs], ["start-failed", 1000])
          // The live instance still serves its own key during the cooldown.
          assert.strictEqual((yield* call(server, modern())).conn, 5)
        }).pipe(Effect.provide(layer))
      })
    }

    it.scoped("pool/one-shot: a failed start names no next start, and is logged at debug level only", () => {
      const refusing: Handshake = (req) => err(req, ErrorCode.MethodNotFound, "not today")
      const { layer } = setup(serve(refusing))
      const logged: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => logged.push(`${logLevel._tag} ${String(message)}`))
      return Effect.gen(function*() {
        const server = serverOf("force-discover")
        const first = poolErrorOf(yield* Effect.flip(call(server, modern())))
        assert.strictEqual(first.reason, "start-failed")
        assert.isUndefined(first.retryInMs)
        assert.notInclude(first.message, "next start")
        const cooling = poolErrorOf(yield* Effect.flip(call(server, modern())))
        assert.strictEqual(cooling.reason, "cooling-down")
        assert.isUndefined(cooling.retryInMs)
        assert.notInclude(cooling.message, "next start")
        const failures = logged.filter((l) => l.includes("start failed"))
        assert.strictEqual(failures.length, 1, logged.join("\n"))
        assert.match(failures[0]!, /^Debug start failed \(.*-32601.*\)$/)
      }).pipe(
        Effect.provide(layer.pipe(Layer.provide(Layer.succeed(OneShot, true)))),
        Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
        Logger.withMinimumLogLevel(LogLevel.All)
      )
    })

    if (ofModernServers) {
      it.effect("pool/start-timeout: a start that takes longer than startTimeout fails and cools down", () => {
        const silent: Handshake = (req, n) => (req.method === "server/discover" ? Effect.never : dual(req, n))
        const { layer } = setup(serve(silent))
        return Effect.gen(function*() {
          const server = serverOf("force-discover", { startTimeout: "30 seconds" })
          const fiber = yield* forkSleeping(Effect.flip(call(server, modern())))
          yield* TestClock.adjust("30 seconds")
          const e = poolErrorOf(yield* Fiber.join(fiber))
          assert.strictEqual(e.reason, "start-failed")
          assert.include(e.message, "did not start within 30s")
          assert.strictEqual(e.retryInMs, 1000)
        }).pipe(Effect.provide(layer))
      })
    }
  })

  describe("crashes", () => {
    it.scoped("pool/crash: the call in flight fails naming the server and its stderr, and the next call starts afresh", () => {
      const entered = Deferred.unsafeMake<number>(FiberId.none)
      const { layer, recorder, connections } = setup(serve(dual, { hold: (n) => n === 1, entered }))
      return Effect.gen(function*() {
        const events = yield* subscribe
        const server = serverOf("prefer-discover", {}, "crashy")
        yield* warm(server, modern())
        const inFlight = yield* Effect.fork(Effect.flip(call(server, modern())))
        yield* Deferred.await(entered)
        tookInPlace(recorder, ["1:tools/call"])
        yield* connections.get(1)!.crash({ reason: "the process exited", stderr: "panic: out of cheese\n", exitCode: 2 })
        const e = poolErrorOf(yield* Fiber.join(inFlight))
        assert.strictEqual(e.reason, "crashed")
        assert.strictEqual(e.server, "crashy")
        assert.include(e.message, "crashy")
        assert.include(e.message, "exit code 2")
        assert.include(e.message, "panic: out of cheese")

        const crash = yield* next(events, "server.crash")
        assert.deepStrictEqual([crash.server, crash.lane, crash.stderrTail], ["crashy", "modern", "panic: out of cheese\n"])
        const stop = yield* next(events, "server.stop")
        assert.strictEqual(stop.reason, "crash")
        assert.deepStrictEqual((yield* status("crashy")).instances, [])

        assert.strictEqual((yield* call(server, modern())).conn, 2)
        assert.strictEqual(recorder.opened, 2)
      }).pipe(Effect.provide(layer))
    })

    it.scoped("pool/crash: an idle instance that dies is dropped and replaced on the next call", () => {
      const { layer, recorder, connections } = setup(serve(dual))
      return Effect.gen(function*() {
        const events = yield* subscribe
        const server = serverOf("prefer-discover")
        yield* call(server, modern())
        yield* connections.get(1)!.crash({ stderr: "segfault" })
        const crash = yield* next(events, "server.crash")
        assert.strictEqual(crash.stderrTail, "segfault")
        yield* next(events, "server.stop")
        assert.strictEqual((yield* call(server, modern())).conn, 2)
        assert.strictEqual(recorder.opened, 2)
      }).pipe(Effect.provide(layer))
    })
  })

  if (ofModernServers) {
    describe("follow", () => {
      it.effect("pool/follow/dual: modern callers get the server's own session, legacy callers a forced legacy-only one", () => {
        const { layer, recorder } = setup(serve(dual))
        return Effect.gen(function*() {
          const server = serverOf("follow")
          const m = yield* call(server, modern())
          assert.deepStrictEqual(m, { conn: 1, era: "modern", eraSource: "probe" })
          const l = yield* call(server, legacy())
          assert.deepStrictEqual(l, { conn: 2, era: "legacy", eraSource: "forced" })
          assert.deepStrictEqual(recorder.sent.filter((s) => s.startsWith("2:")), [
            "2:initialize",
            "2:notifications/initialized",
            "2:tools/call"
          ])
          // Later calls stay on their lanes; a 2026 caller with an explicit revision is modern.
          assert.strictEqual((yield* call(server, legacy())).conn, 2)
          assert.strictEqual((yield* call(server, { key: ScopeKey.global, revision: "2026-07-28" })).conn, 1)
          const s = yield* status()
          assert.deepStrictEqual(s.instances.map((i) => [i.lane, i.key, i.era, i.eraSource]), [
            ["modern", "global", "modern", "probe"],
            ["legacy", "global", "legacy", "forced"]
          ])
          assert.strictEqual(recorder.opened, 2)
        }).pipe(Effect.provide(layer))
      })

      it.effect("pool/follow/dual: a legacy caller first starts the server's own session, then the legacy-only one", () => {
        const { layer, recorder } = setup(serve(dual))
        return Effect.gen(function*() {
          const server = serverOf("follow")
          assert.deepStrictEqual(yield* call(server, legacy()), { conn: 2, era: "legacy", eraSource: "forced" })
          assert.deepStrictEqual(yield* call(server, modern()), { conn: 1, era: "modern", eraSource: "probe" })
          assert.strictEqual(recorder.opened, 2)
        }).pipe(Effect.provide(layer))
      })

      it.effect("pool/follow/legacy-only: a legacy caller shares the modern-lane instance that settled legacy", () => {
        const { layer, recorder } = setup(serve(legacyOnly))
        return Effect.gen(function*() {
          const server = serverOf("follow")
          assert.deepStrictEqual(yield* call(server, legacy()), { conn: 1, era: "legacy", eraSource: "probe" })
          assert.deepStrictEqual(yield* call(server, modern()), { conn: 1, era: "legacy", eraSource: "probe" })
          assert.strictEqual((yield* call(server, legacy())).conn, 1)
          assert.strictEqual(recorder.opened, 1)
          const s = yield* status()
          assert.deepStrictEqual(s.instances.map((i) => i.lane), ["modern"])
        }).pipe(Effect.provide(layer))
      })

      it.effect("pool/follow/legacy-only: concurrent legacy and modern first callers share one start", () => {
        const gate = Deferred.unsafeMake<void>(FiberId.none)
        const held = heldDiscover(legacyOnly, gate)
        const { layer, recorder } = setup(serve(held))
        return Effect.gen(function*() {
          const server = serverOf("follow")
          const both = yield* Effect.fork(Effect.all([call(server, legacy()), call(server, modern())], { concurrency: "unbounded" }))
          yield* eventually("both callers wait on one start", Effect.map(busyOf(), (n) => n === 2))
          yield* Deferred.succeed(gate, undefined)
          const served = yield* Fiber.join(both)
          assert.deepStrictEqual(served.map((s) => s.conn), [1, 1])
          assert.strictEqual(recorder.opened, 1)
        }).pipe(Effect.provide(layer))
      })

      it.scoped("pool/follow/modern-only: a refused legacy-only start is remembered and legacy callers share the modern session", () => {
        const { layer, recorder } = setup(serve(modernOnly))
        return Effect.gen(function*() {
          const events = yield* subscribe
          const server = serverOf("follow", { max: 2 })
          assert.deepStrictEqual(yield* call(server, legacy()), { conn: 1, era: "modern", eraSource: "probe" })
          assert.strictEqual(recorder.opened, 2) // the server's own session, and the refused legacy-only try
          const refused = yield* next(events, "server.start.failed")
          assert.strictEqual(refused.lane, "legacy")
          assert.isUndefined(refused.retryInMs)
          assert.include((yield* status()).legacyRefused ?? "", "initialize")

          // Remembered: no further legacy-only start, even long after any cooldown would have passed.
          yield* TestClock.adjust("4 minutes")
          assert.strictEqual((yield* call(server, legacy("other"))).conn, 3)
          assert.strictEqual((yield* call(server, legacy())).conn, 1)
          assert.strictEqual(recorder.sent.filter((m) => m.endsWith(":initialize")).length, 1)
          assert.strictEqual(recorder.opened, 3)
        }).pipe(Effect.provide(layer))
      })

      it.effect("pool/follow/legacy-failure: a failed legacy-only start is cooled down, not remembered; legacy callers share meanwhile", () => {
        const flaky: Handshake = (req, n) =>
          req.method === "initialize" && n === 2
            ? Effect.fail(new TransportClosed({ reason: "the process exited", exitCode: 1 }))
            : dual(req, n)
        const { layer, recorder } = setup(serve(flaky))
        return Effect.gen(function*() {
          const server = serverOf("follow", { cooldownBase: "1 second" })
          yield* call(server, modern())
          assert.deepStrictEqual(yield* call(server, legacy()), { conn: 1, era: "modern", eraSource: "probe" })
          const s = yield* status()
          assert.isUndefined(s.legacyRefused)
          assert.strictEqual(s.lanes.find((l) => l.lane === "legacy")?.cooldown?.retryInMs, 1000)
          assert.strictEqual((yield* call(server, legacy())).conn, 1)
          assert.strictEqual(recorder.opened, 2)
          yield* TestClock.adjust("1 second")
          assert.deepStrictEqual(yield* call(server, legacy()), { conn: 3, era: "legacy", eraSource: "forced" })
        }).pipe(Effect.provide(layer))
      })

      it.effect("pool/follow/isolation: a legacy call the server never finishes does not stall a modern call", () => {
        const entered = Deferred.unsafeMake<number>(FiberId.none)
        const legacyConns = new Set<number>()
        const tracking: Handshake = (req, n) => {
          if (req.method === "initialize") legacyConns.add(n)
          return dual(req, n)
        }
        const { layer } = setup(serve(tracking, { hold: (n) => legacyConns.has(n), entered }))
        return Effect.gen(function*() {
          const server = serverOf("follow") // max 1 per lane
          yield* call(server, modern())
          const stuck = yield* Effect.fork(call(server, legacy()))
          assert.strictEqual(yield* Deferred.await(entered), 2)
          const m = yield* call(server, modern())
          assert.deepStrictEqual([m.conn, m.era], [1, "modern"])
          const s = yield* status()
          assert.deepStrictEqual(s.instances.map((i) => [i.lane, i.busy]), [["modern", 0], ["legacy", 1]])
          yield* Fiber.interrupt(stuck)
          assert.deepStrictEqual((yield* status()).instances.map((i) => [i.lane, i.busy]), [["modern", 0], ["legacy", 0]])
        }).pipe(Effect.provide(layer))
      })

      it.effect("pool/follow: other preferences put every caller on the modern lane", () => {
        const { layer, recorder } = setup(serve(dual))
        return Effect.gen(function*() {
          const server = serverOf("prefer-discover")
          assert.deepStrictEqual(yield* call(server, legacy()), { conn: 1, era: "modern", eraSource: "probe" })
          assert.strictEqual((yield* call(server, modern())).conn, 1)
          assert.strictEqual(recorder.opened, 1)
          assert.deepStrictEqual((yield* status()).lanes.map((l) => l.lane), ["modern"])
        }).pipe(Effect.provide(layer))
      })
    })
  }

  describe("interruption", () => {
    it.effect("pool/interrupt: interrupting a call releases the instance without closing it", () => {
      const entered = Deferred.unsafeMake<number>(FiberId.none)
      let calls = 0
      const { layer, recorder, connections } = setup(serve(dual, { hold: () => ++calls === 1, entered }))
      return Effect.gen(function*() {
        const server = serverOf("prefer-discover")
        yield* warm(server, modern())
        const fiber = yield* Effect.fork(call(server, modern()))
        yield* Deferred.await(entered)
        tookInPlace(recorder, ["1:tools/call"])
        assert.strictEqual((yield* status()).instances[0]?.busy, 1)
        yield* Fiber.interrupt(fiber)
        assert.deepStrictEqual(recorder.cancelled, ["1:tools/call"])
        const s = yield* status()
        assert.deepStrictEqual(s.instances.map((i) => [i.busy, i.state]), [[0, "ready"]])
        assert.strictEqual(connections.get(1)?.ended(), "open")
        assert.strictEqual((yield* call(server, modern())).conn, 1)
        assert.strictEqual(recorder.opened, 1)
      }).pipe(Effect.provide(layer))
    })

    it.effect("pool/interrupt: interrupting a caller waiting for a start leaves the start to the others", () => {
      const gate = Deferred.unsafeMake<void>(FiberId.none)
      const held = heldDiscover(dual, gate)
      const { layer, recorder } = setup(serve(held))
      return Effect.gen(function*() {
        const server = serverOf("prefer-discover")
        const first = yield* Effect.fork(call(server, modern()))
        const second = yield* Effect.fork(call(server, modern()))
        yield* eventually("both wait", Effect.map(busyOf(), (n) => n === 2))
        yield* Fiber.interrupt(first)
        assert.strictEqual((yield* status()).instances[0]?.busy, 1)
        yield* Deferred.succeed(gate, undefined)
        assert.strictEqual((yield* Fiber.join(second)).conn, 1)
        assert.strictEqual(recorder.opened, 1)
      }).pipe(Effect.provide(layer))
    })

    // The host-stdio bug: tools/call then its notifications/cancelled, both before the upstream had
    // started, and the tools/list that reached the pool after them was never answered. Where the
    // interruption lands in the start is a matter of scheduling, so every step of it is tried.
    const startSteps = Array.from({ length: 16 }, (_, step) => step)

    it.effect.each(startSteps)(
      "pool/start/a caller interrupted after %i scheduler steps of the start it began leaves the lane to the next caller",
      (step) => {
        const { layer, recorder } = setup(serve(dual))
        return Effect.gen(function*() {
          const server = serverOf("prefer-discover", { startTimeout: "10 seconds" })
          const doomed = yield* Effect.fork(call(server, modern()))
          for (let i = 0; i < step; i++) yield* Effect.yieldNow()
          yield* Fiber.interrupt(doomed)
          const next = yield* Effect.fork(Effect.either(Effect.flatMap(Pool, (p) => p.withSession(server, modern(), (s) => Effect.succeed(s.era)))))
          // A lane that lost its permit leaves the next caller queued until startTimeout, then saturated.
          yield* eventually(
            "the next caller is served, or waits for a permit",
            Effect.zipWith(Fiber.poll(next), statusOf("fake"), (done, s) => Option.isSome(done) || s?.lanes[0]?.queued === 1)
          )
          yield* TestClock.adjust("10 seconds")
          const served = yield* Fiber.join(next)
          assert.deepStrictEqual(served, Either.right(ownEra))
          const s = yield* status()
          assert.deepStrictEqual([s.lanes[0]?.live, s.lanes[0]?.queued], [1, 0])
          assert.deepStrictEqual(s.instances.map((i) => [i.state, i.busy]), [["ready", 0]])
          assert.isAtMost(recorder.opened, 2)
        }).pipe(Effect.provide(layer))
      }
    )

    it.effect.each(startSteps)(
      "pool/start/a waiter is served when the caller that started the instance is interrupted after %i scheduler steps",
      (step) => {
        const { layer, recorder } = setup(serve(dual))
        return Effect.gen(function*() {
          const server = serverOf("prefer-discover", { startTimeout: "10 seconds" })
          const starter = yield* Effect.fork(call(server, modern()))
          // As the gateway's listing fans out: the waiter runs in a fiber of its own.
          const waiter = yield* Effect.fork(Effect.either(Effect.forEach(
            [server],
            (srv) => Effect.flatMap(Pool, (p) => p.withSession(srv, modern(), (s) => Effect.succeed(s.era))),
            { concurrency: "unbounded" }
          )))
          for (let i = 0; i < step; i++) yield* Effect.yieldNow()
          yield* Fiber.interrupt(starter)
          yield* eventually(
            "the waiter is served, or waits for a permit",
            Effect.zipWith(Fiber.poll(waiter), statusOf("fake"), (done, s) => Option.isSome(done) || s?.lanes[0]?.queued === 1)
          )
          yield* TestClock.adjust("10 seconds")
          assert.deepStrictEqual(yield* Fiber.join(waiter), Either.right([ownEra]))
          const s = yield* status()
          assert.deepStrictEqual([s.lanes[0]?.live, s.lanes[0]?.queued], [1, 0])
          assert.isAtMost(recorder.opened, 2)
        }).pipe(Effect.provide(layer))
      }
    )
  })

  describe("events and control", () => {
    if (ofModernServers) {
      it.scoped("pool/events: start, era.stale and stop", () => {
        const { layer } = setup(serve(modernOnly))
        return Effect.gen(function*() {
          const events = yield* subscribe
          const server = serverOf("prefer-discover")
          yield* TestClock.adjust("1 hour")
          yield* Effect.flatMap(EraCache, (c) => c.set(server.definition, { era: "legacy", version: "2025-11-25", exclusive: true }))
          yield* TestClock.adjust("1 hour")
          yield* call(server, modern())
          const start = yield* next(events, "server.start")
          assert.deepStrictEqual(
            [start.server, start.lane, start.key, start.era, start.negotiated, start.eraSource, start.wire],
            ["fake", "modern", "global", "modern", "2026-07-28", "probe", "stdio"]
          )
          assert.isAtLeast(start.durationMs, 0)
          const stale = yield* next(events, "server.era.stale")
          assert.deepStrictEqual(
            [stale.server, stale.cached, stale.cachedVersion, stale.cachedAt, stale.era, stale.negotiated],
            ["fake", "legacy", "2025-11-25", 3_600_000, "modern", "2026-07-28"]
          )
          assert.strictEqual(yield* Effect.flatMap(Pool, (p) => p.stop("fake")), 1)
          const stop = yield* next(events, "server.stop")
          assert.deepStrictEqual([stop.reason, stop.calls], ["stop", 1])
          assert.deepStrictEqual(yield* drained(events), [])
        }).pipe(Effect.provide(layer))
      })
    }

    if (ofModernServers) {
      it.scoped("pool/events: a discover that answers after initialize settled the process tells server.era.stale then", () => {
        const lateDiscover: Handshake = (req, n) =>
          req.method === "server/discover"
            ? Effect.zipRight(Effect.sleep("10 seconds"), dual(req, n))
            : dual(req, n)
        const { layer } = setup(serve(lateDiscover))
        return Effect.gen(function*() {
          const events = yield* subscribe
          const server = serverOf("prefer-discover")
          const fiber = yield* forkSleeping(call(server, modern()))
          yield* TestClock.adjust("2 seconds")
          const served = yield* Fiber.join(fiber)
          assert.deepStrictEqual([served.era, served.eraSource], ["legacy", "probe"])
          assert.strictEqual((yield* next(events, "server.start")).era, "legacy")
          assert.deepStrictEqual(yield* drained(events), [])
          yield* TestClock.adjust("8 seconds")
          const stale = yield* next(events, "server.era.stale")
          assert.deepStrictEqual(
            [stale.cached, stale.cachedVersion, stale.cachedAt, stale.era, stale.negotiated],
            ["legacy", "2025-11-25", 2_000, "modern", "2026-07-28"]
          )
          const cached = yield* Effect.flatMap(EraCache, (c) => c.get(server.definition))
          assert.strictEqual(Option.getOrThrow(cached).era, "modern")
          // The instance keeps serving legacy: initialize chose that for its process.
          assert.strictEqual((yield* call(server, modern())).era, "legacy")
        }).pipe(Effect.provide(layer))
      })
    }

    if (ofModernServers) {
      it.scoped("pool/era-change: a call refused as only a non-modern server refuses it is tried once more on a fresh probe, not again", () => {
        // Discover keeps saying modern, and every call keeps getting a bare 404.
        const refusing: Script = (req, n) =>
          req.method === "tools/call" ? Effect.fail(new HTTPStatusError({ status: 404, body: "Not Found" })) : modernOnly(req, n)
        const { layer, recorder } = setup(refusing, "streamable-http")
        return Effect.gen(function*() {
          const events = yield* subscribe
          const e = yield* Effect.flip(call(serverOf("prefer-discover"), modern()))
          assert.strictEqual(e._tag, "HTTPStatusError")
          // (Each modern HTTP session lists the tools before its first call, for Mcp-Param-* headers.)
          assert.deepStrictEqual(recorder.sent, [
            "1:server/discover",
            "1:tools/list",
            "1:tools/call",
            "2:server/discover",
            "2:tools/list",
            "2:tools/call"
          ])
          const stop = yield* next(events, "server.stop")
          assert.strictEqual(stop.reason, "era-changed")
          // Modern again: nothing was stale.
          assert.deepStrictEqual((yield* drained(events)).filter((t) => t === "server.era.stale"), [])
        }).pipe(Effect.provide(layer))
      })
    }

    if (ofModernServers) {
      it.effect("pool/reports: the last report of each server's own session", () => {
        const { layer } = setup(serve(dual))
        return Effect.gen(function*() {
          const pool = yield* Pool
          assert.isTrue(Option.isNone(yield* pool.report("fake")))
          yield* call(serverOf("follow"), legacy())
          const report = yield* pool.report("fake")
          assert.strictEqual(Option.getOrThrow(report).era, "modern")
          assert.strictEqual(Option.getOrThrow(report).preference, "follow")
          yield* call(serverOf("prefer-discover", {}, "other"), modern())
          assert.deepStrictEqual((yield* pool.reports).map((r) => r.server), ["fake", "other"])
          assert.strictEqual((yield* status()).report?.negotiated, "2026-07-28")
        }).pipe(Effect.provide(layer))
      })
    }

    it.effect("pool/stop: a call in flight fails as stopped, and the next call starts a new pool", () => {
      const entered = Deferred.unsafeMake<number>(FiberId.none)
      const { layer, recorder } = setup(serve(dual, { hold: (n) => n === 1, entered }))
      return Effect.gen(function*() {
        const server = serverOf("prefer-discover")
        yield* warm(server, modern())
        const inFlight = yield* Effect.fork(Effect.flip(call(server, modern())))
        yield* Deferred.await(entered)
        tookInPlace(recorder, ["1:tools/call"])
        assert.strictEqual(yield* Effect.flatMap(Pool, (p) => p.stop("fake")), 1)
        const e = poolErrorOf(yield* Fiber.join(inFlight))
        assert.strictEqual(e.reason, "stopped")
        assert.include(e.message, "fake")
        assert.deepStrictEqual(yield* Effect.flatMap(Pool, (p) => p.snapshot), [])
        assert.strictEqual((yield* call(server, modern())).conn, 2)
        assert.strictEqual(recorder.opened, 2)
      }).pipe(Effect.provide(layer))
    })

    it.effect("pool/stopCalls: a call in flight is cut short as shutdown, and every later call fails the same at once", () => {
      const entered = Deferred.unsafeMake<number>(FiberId.none)
      const { layer, recorder } = setup(serve(dual, { hold: (n) => n === 1, entered }))
      return Effect.gen(function*() {
        const pool = yield* Pool
        const server = serverOf("prefer-discover")
        yield* warm(server, modern())
        const inFlight = yield* Effect.fork(Effect.flip(call(server, modern())))
        yield* Deferred.await(entered)
        tookInPlace(recorder, ["1:tools/call"])
        yield* pool.stopCalls
        const e = poolErrorOf(yield* Fiber.join(inFlight))
        assert.strictEqual(e.reason, "shutdown")
        assert.deepStrictEqual(recorder.cancelled, ["1:tools/call"])
        assert.include(e.message, "shutting down")
        const later = poolErrorOf(yield* Effect.flip(call(server, modern())))
        assert.strictEqual(later.reason, "shutdown")
        assert.strictEqual(recorder.opened, 1)
      }).pipe(Effect.provide(layer))
    })

    if (ofModernServers) {
      it.effect("pool/restart: stops every instance, forgets the cooldown and starts the kept keys again", () => {
        let healthy = true
        const flaky: Handshake = (req, n) => (healthy ? dual(req, n) : err(req, ErrorCode.MethodNotFound, "not today"))
        const { layer, recorder } = setup(serve(flaky))
        return Effect.gen(function*() {
          const pool = yield* Pool
          const server = serverOf("force-discover", { max: 3 })
          yield* call(server, modern("a"))
          yield* call(server, modern("b"))
          healthy = false
          assert.strictEqual(poolErrorOf(yield* Effect.flip(call(server, modern("c")))).reason, "start-failed")
          healthy = true
          const result = yield* pool.restart(server)
          assert.strictEqual(result.stopped, 2)
          assert.deepStrictEqual(result.started.map((s) => s.key).sort(), ["session:a", "session:b"])
          assert.deepStrictEqual(result.failed, [])
          assert.strictEqual(recorder.opened, 5)
          assert.strictEqual((yield* call(server, modern("c"))).conn, 6) // no cooldown left
          assert.deepStrictEqual(keysOf(yield* status()), ["session:a", "session:b", "session:c"])
        }).pipe(Effect.provide(layer))
      })
    }

    it.scoped("pool/reconfigure: new settings get a fresh pool; the old instance closes once idle", () => {
      const { layer, connections } = setup(serve(dual))
      return Effect.gen(function*() {
        const events = yield* subscribe
        assert.strictEqual((yield* call(serverOf("prefer-discover", { max: 1 }), modern())).conn, 1)
        assert.strictEqual((yield* call(serverOf("prefer-discover", { max: 2 }), modern())).conn, 2)
        const stop = yield* next(events, "server.stop")
        assert.deepStrictEqual([stop.instance.startsWith("fake#"), stop.reason], [true, "reconfigured"])
        assert.strictEqual(connections.get(1)?.ended(), "closed")
        assert.deepStrictEqual((yield* status()).lanes.map((l) => l.max), [2])
      }).pipe(Effect.provide(layer))
    })

    if (ofModernServers) {
      it.effect("pool/exit: closing the layer closes every instance", () => {
        const { layer, connections } = setup(serve(dual))
        return Effect.gen(function*() {
          yield* Effect.scoped(Effect.gen(function*() {
            const built = yield* Layer.build(layer)
            const pool = yield* Effect.provide(Pool, built)
            yield* pool.withSession(serverOf("follow"), modern(), who)
            yield* pool.withSession(serverOf("follow"), legacy(), who)
          }))
          assert.deepStrictEqual([connections.get(1)?.ended(), connections.get(2)?.ended()], ["closed", "closed"])
        })
      })
    }
  })
})
