/**
 * The harness of the Pool.<concern>.test.ts suites: fake servers as scripts, a Pool over a fake
 * transport, and the probes those tests read the pool with.
 */
import { afterEach, assert, beforeEach, describe } from "@effect/vitest"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import { EraCache } from "../../src/era/EraCache.js"
import { Negotiator } from "../../src/era/Negotiator.js"
import { Pool } from "../../src/pool/Pool.js"
import type { PoolStatus } from "../../src/pool/PoolStatus.js"
import { type Caller, type PoolServer, type PoolSettings, ScopeKey } from "../../src/pool/PoolModel.js"
import { PoolError, type PoolEvent } from "../../src/pool/PoolEvents.js"
import type { Preference } from "../../src/era/Preference.js"
import { Prober } from "../../src/era/Prober.js"
import { StdioDefinition } from "../../src/ServerDefinition.js"
import type { Session } from "../../src/session/SessionModel.js"
import type { TransportError } from "../../src/transport/Transport.js"
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
export type Handshake = (req: JsonRpc.Request, n: number) => Effect.Effect<JsonRpc.Response, TransportError>

export const dual: Handshake = (req) =>
  req.method === "initialize"
    ? ok(req, initializeResult("2025-11-25"))
    : req.method === "server/discover"
    ? ok(req, discoverResult(["2026-07-28"]))
    : err(req, ErrorCode.MethodNotFound, "no such method")

export const legacyOnly: Handshake = (req) =>
  req.method === "initialize"
    ? ok(req, initializeResult("2025-11-25"))
    : err(req, ErrorCode.MethodNotFound, "no such method")

export const modernOnly: Handshake = (req) =>
  req.method === "initialize"
    ? err(req, ErrorCode.UnsupportedProtocolVersion, "initialize is not served", {
      supported: ["2026-07-28"],
      requested: "2025-11-25"
    })
    : req.method === "server/discover"
    ? ok(req, discoverResult(["2026-07-28"]))
    : err(req, ErrorCode.MethodNotFound, "no such method")

/** The handshake, with `server/discover` answered only once `gate` opens. */
export const heldDiscover = (handshake: Handshake, gate: Deferred.Deferred<void>): Handshake => (req, n) =>
  req.method === "server/discover" ? Effect.zipRight(Deferred.await(gate), handshake(req, n)) : handshake(req, n)

/**
 * A server: the handshake, plus `tools/call`, answered with the number of the connection that
 * served it, or held (forever, or until `gate` opens) when `hold` says so for that connection.
 */
export const serve = (
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

export const setup = (script: Script, wire: "stdio" | "streamable-http" = "stdio") => {
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

export const serverOf = (preference: Preference, settings: Partial<PoolSettings> = {}, name = "fake"): PoolServer => ({
  definition: definition(name),
  probe: {
    preference,
    probeTimeout: "2 seconds",
    session: { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} }
  },
  settings
})

export const modern = (id?: string): Caller => ({ key: id === undefined ? ScopeKey.global : ScopeKey.session(id) })
export const legacy = (id?: string): Caller => ({
  key: id === undefined ? ScopeKey.global : ScopeKey.session(id),
  revision: "2025-06-18"
})
export const perCall: Caller = { key: ScopeKey.call }

/** What served a call: the connection number, and the session's era and how it was decided. */
export const who = (s: Session) =>
  Effect.map(s.request("tools/call", { name: "who", arguments: {} }), (result) => {
    const content = result.content
    const first = Array.isArray(content) ? content[0] : undefined
    const text = typeof first === "object" && first !== null && "text" in first ? String(first.text) : "?"
    return { conn: Number(text), era: s.era, eraSource: s.eraSource }
  })

export const call = (server: PoolServer, caller: Caller) => Effect.flatMap(Pool, (pool) => pool.withSession(server, caller, who))

/** Starts the caller's instance without a call, so that the next call finds it serving (in place, when it can be). */
export const warm = (server: PoolServer, caller: Caller) => Effect.flatMap(Pool, (pool) => pool.withSession(server, caller, () => Effect.void))

/** Under the in-place suite, the calls sent so far ran in place (the production path). */
export const tookInPlace = (recorder: Recorder, methods: ReadonlyArray<string>) => {
  if (kind === "in-place") assert.deepStrictEqual(recorder.inPlace, methods)
}

export const statusOf = (name: string) => Effect.flatMap(Pool, (pool) => pool.snapshot).pipe(Effect.map((all) => all.find((s) => s.server === name)))

export const status = (name = "fake") => Effect.flatMap(statusOf(name), (s) => (s === undefined ? Effect.dieMessage(`no pool for ${name}`) : Effect.succeed(s)))

/** How many calls the key's instance has in flight (0 while the pool does not exist yet). */
export const busyOf = (key = "global", name = "fake") => Effect.map(statusOf(name), (s) => s?.instances.find((i) => i.key === key)?.busy ?? 0)

export const keysOf = (s: PoolStatus, lane: "modern" | "legacy" = "modern") => s.instances.filter((i) => i.lane === lane).map((i) => i.key).sort()

/** Yields until `done` holds; fails the test (rather than hanging) when it never does. */
export const eventually = <R>(what: string, done: Effect.Effect<boolean, never, R>) =>
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
export const forkSleeping = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const before = yield* sleepers
    const fiber = yield* Effect.fork(self)
    yield* eventually("a new sleeper on the TestClock", Effect.map(sleepers, (n) => n > before))
    return fiber
  })

export const subscribe: Effect.Effect<Queue.Dequeue<PoolEvent>, never, Pool | Scope.Scope> = Effect.flatMap(Pool, (p) => p.subscribe)

/** The next event of the given type (earlier events of other types are skipped). */
export const next = <T extends PoolEvent["type"]>(events: Queue.Dequeue<PoolEvent>, type: T) =>
  Effect.gen(function*() {
    while (true) {
      const e = yield* Queue.take(events)
      if (e.type === type) return e as Extract<PoolEvent, { type: T }>
    }
  })

export const drained = (events: Queue.Dequeue<PoolEvent>) => Effect.map(Queue.takeAll(events), (c) => Chunk.toReadonlyArray(c).map((e) => e.type))

export const poolErrorOf = (e: unknown): PoolError => {
  assert.instanceOf(e, PoolError)
  return e as PoolError
}

/**
 * The suites every Pool.<concern>.test.ts runs its tests in: once per kind of fake (see `kind`).
 * Tests of eras and lanes need a server that speaks the modern era, which the in-place suite's
 * servers refuse; they run only where `ofModernServers` holds, or pass `["general"]` as `kinds`.
 */
export const describePool = (
  body: (suite: { readonly ofModernServers: boolean; readonly ownEra: "modern" | "legacy" }) => void,
  kinds: ReadonlyArray<FakeKind> = ["general", "in-place"]
) =>
  describe.each<FakeKind>(kinds)("Pool (%s calls)", (suiteKind) => {
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

    body({ ofModernServers, ownEra })
  })
