/**
 * A modern stdio or Streamable HTTP session runs in place the calls whose `input_required` goes
 * back to their caller (one round, nothing waited on between rounds); a call whose caller resolves
 * its rounds here, or that follows a task, keeps a fiber of its own. A legacy stdio session runs
 * every call in place. Over HTTP a cut call's POST is closed (how a modern server is told), and a
 * call whose `Mcp-Param-*` headers need the tools listed first lists them out of place.
 */
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import { stderrIncludes } from "@mcpx-fx/testing/era/client/HttpPeer"
import type { Abort } from "@mcpx-fx/cancel/Abortable"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { inPlaceIn } from "../../src/transport/internal/InPlace.js"
import { Pool } from "../../src/pool/Pool.js"
import { type Caller, type PoolServer, ScopeKey } from "../../src/pool/PoolModel.js"
import { HttpDefinition, StdioDefinition } from "../../src/ServerDefinition.js"
import type { SessionError } from "../../src/session/SessionErrors.js"
import type { CallContext, Session } from "../../src/session/SessionModel.js"
import { Cut } from "../util/HeldCalls.js"
import { httpPool } from "../util/HttpPool.js"
import { logIncludes, tempLog } from "../util/MethodLog.js"
import { stdioPool } from "../util/StdioPool.js"

const serverIn = (mode: string): PoolServer => {
  const { args, command } = Fixtures.stdioCommand("era-server", ["--mode", mode])
  return {
    definition: new StdioDefinition({ transport: "stdio", name: mode, command, args }),
    probe: {
      preference: "prefer-discover",
      probeTimeout: "20 seconds",
      session: { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} }
    }
  }
}

/** The era fixture over Streamable HTTP in `mode` (more `args` after it), as a Pool server. */
const httpServerIn = (mode: string, args: ReadonlyArray<string> = []) =>
  Effect.map(Fixtures.startHttpFixture("era-server", ["--mode", mode, ...args]), (fixture) => ({
    fixture,
    server: {
      definition: new HttpDefinition({ transport: "http", name: mode, url: fixture.url }),
      probe: {
        preference: "prefer-discover",
        probeTimeout: "20 seconds",
        session: { clientInfo: { name: "mcpx-fx-test", version: "0" }, clientCapabilities: {} }
      }
    } satisfies PoolServer
  }))

const caller: Caller = { key: ScopeKey.global }

interface Greeted {
  readonly era: Session["era"]
  readonly inPlace: boolean
  readonly answered: boolean
}

/**
 * Calls `name` (default `hello`) with `ctx`, the Pool told the session's own answer; says whether
 * it ran in place. `cutShort` is handed the call's abort.
 */
const hello = (
  server: PoolServer,
  ctx: CallContext,
  call: { readonly name: string; readonly arguments: Record<string, unknown> } = { name: "hello", arguments: {} },
  cutShort?: (abort: Abort<Cut>) => () => void
) =>
  Effect.flatMap(Pool, (pool) =>
    pool.withSession(
      server,
      caller,
      (session: Session) =>
        Effect.withFiberRuntime<Greeted & { readonly text: string }, SessionError>((fiber) => {
          const inPlace = inPlaceIn(fiber) !== undefined
          return Effect.map(session.request("tools/call", call, ctx), (result) => ({
            era: session.era,
            inPlace,
            answered: Array.isArray(result.content),
            text: String((result.content as ReadonlyArray<{ readonly text?: unknown }> | undefined)?.[0]?.text)
          }))
        }),
      { inPlace: (session) => session.runsInPlaceFor(ctx), ...(cutShort === undefined ? {} : { cutShort }) }
    ))

const placeOf = ({ answered, era, inPlace }: Greeted) => ({ era, inPlace, answered })

describe("Pool: modern stdio calls in place", () => {
  it.scopedLive("pool/in-place/a modern stdio call that returns input_required as is runs in place; one resolved here does not", () =>
    Effect.gen(function*() {
      const dual = serverIn("dual")
      // The first call starts the server: only a serving instance's calls run in place.
      yield* hello(dual, {})
      const returned = yield* hello(dual, { inputRequired: "return" })
      assert.deepStrictEqual(placeOf(returned), { era: "modern", inPlace: true, answered: true })
      const resolved = yield* hello(dual, { inputRequired: "resolve" })
      assert.deepStrictEqual(placeOf(resolved), { era: "modern", inPlace: false, answered: true })
      const following = yield* hello(dual, { inputRequired: "return", task: "t-1" })
      assert.isFalse(following.inPlace)
    }).pipe(Effect.provide(stdioPool)))

  it.scopedLive("pool/in-place/a legacy stdio session runs every call in place", () =>
    Effect.gen(function*() {
      const legacy = serverIn("legacy-32601")
      yield* hello(legacy, {})
      const resolved = yield* hello(legacy, { inputRequired: "resolve" })
      assert.deepStrictEqual(placeOf(resolved), { era: "legacy", inPlace: true, answered: true })
    }).pipe(Effect.provide(stdioPool)))
})

describe("Pool: modern Streamable HTTP calls in place", () => {
  it.scopedLive("pool/in-place/http: a modern HTTP call that returns input_required as is runs in place; one resolved here does not", () =>
    Effect.gen(function*() {
      const { server } = yield* httpServerIn("dual")
      yield* hello(server, {})
      assert.deepStrictEqual(placeOf(yield* hello(server, { inputRequired: "return" })), { era: "modern", inPlace: true, answered: true })
      assert.deepStrictEqual(placeOf(yield* hello(server, { inputRequired: "resolve" })), { era: "modern", inPlace: false, answered: true })
      assert.isFalse((yield* hello(server, { inputRequired: "return", task: "t-1" })).inPlace)
    }).pipe(Effect.provide(httpPool)))

  it.scopedLive("pool/in-place/http: a call whose Mcp-Param-* headers need a listing runs in place and lists out of place", () =>
    Effect.gen(function*() {
      const { server } = yield* httpServerIn("dual", ["--header-tools"])
      // Started by a call that needs no listing, so the weather call below is the one that lists.
      yield* hello(server, {})
      const weather = yield* hello(server, { inputRequired: "return" }, { name: "weather", arguments: { region: "Lisbon" } })
      assert.deepStrictEqual(placeOf(weather), { era: "modern", inPlace: true, answered: true })
      assert.include(weather.text, "weather for Lisbon")
    }).pipe(Effect.provide(httpPool)))

  it.scopedLive("pool/in-place/http: a modern HTTP call cut in place fails with the caller's error, and its POST is closed", () =>
    Effect.gen(function*() {
      const log = yield* tempLog
      const { fixture, server } = yield* httpServerIn("dual", ["--log", log.file])
      yield* hello(server, {})
      const armed = yield* Deferred.make<Abort<Cut>>()
      const cancelled = yield* Effect.fork(stderrIncludes(fixture.process, "cancelled tools/call"))
      const call = yield* Effect.fork(hello(server, { inputRequired: "return" }, { name: "slow", arguments: { ms: 60_000 } }, (abort) => {
        Deferred.unsafeDone(armed, Effect.succeed(abort))
        return () => {}
      }))
      const abort = yield* Deferred.await(armed)
      // The server has the slow call once its log has a second modern tools/call (hello was the first).
      yield* logIncludes(log, "modern tools/call", 2)
      abort(new Cut({ why: "deadline" }))
      assert.deepStrictEqual(yield* Effect.flip(Fiber.join(call)), new Cut({ why: "deadline" }))
      // The server saw its request's POST close: how a modern server is told a call was abandoned.
      yield* Fiber.join(cancelled)
      assert.strictEqual((yield* hello(server, { inputRequired: "return" })).text.startsWith("hello"), true, "the session serves the next call")
    }).pipe(Effect.provide(httpPool)))
})
