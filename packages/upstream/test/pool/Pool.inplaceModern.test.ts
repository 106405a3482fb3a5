/**
 * A modern stdio session runs in place the calls whose `input_required` goes back to their caller
 * (one round, nothing waited on between rounds); a call whose caller resolves its rounds here, or
 * that follows a task, keeps a fiber of its own. A legacy stdio session runs every call in place.
 */
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import { inPlaceIn } from "../../src/transport/internal/InPlace.js"
import { Pool } from "../../src/pool/Pool.js"
import { type Caller, type PoolServer, ScopeKey } from "../../src/pool/PoolModel.js"
import { StdioDefinition } from "../../src/ServerDefinition.js"
import type { SessionError } from "../../src/session/SessionErrors.js"
import type { CallContext, Session } from "../../src/session/SessionModel.js"
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

const caller: Caller = { key: ScopeKey.global }

interface Greeted {
  readonly era: Session["era"]
  readonly inPlace: boolean
  readonly answered: boolean
}

/** Calls `hello` with `ctx`, the Pool told the session's own answer; says whether it ran in place. */
const hello = (server: PoolServer, ctx: CallContext) =>
  Effect.flatMap(Pool, (pool) =>
    pool.withSession(
      server,
      caller,
      (session: Session) =>
        Effect.withFiberRuntime<Greeted, SessionError>((fiber) => {
          const inPlace = inPlaceIn(fiber) !== undefined
          return Effect.map(session.request("tools/call", { name: "hello", arguments: {} }, ctx), (result) => ({
            era: session.era,
            inPlace,
            answered: Array.isArray(result.content)
          }))
        }),
      { inPlace: (session) => session.runsInPlaceFor(ctx) }
    ))

describe("Pool: modern stdio calls in place", () => {
  it.scopedLive("pool/in-place/a modern stdio call that returns input_required as is runs in place; one resolved here does not", () =>
    Effect.gen(function*() {
      const dual = serverIn("dual")
      // The first call starts the server: only a serving instance's calls run in place.
      yield* hello(dual, {})
      const returned = yield* hello(dual, { inputRequired: "return" })
      assert.deepStrictEqual(returned, { era: "modern", inPlace: true, answered: true })
      const resolved = yield* hello(dual, { inputRequired: "resolve" })
      assert.deepStrictEqual(resolved, { era: "modern", inPlace: false, answered: true })
      const following = yield* hello(dual, { inputRequired: "return", task: "t-1" })
      assert.isFalse(following.inPlace)
    }).pipe(Effect.provide(stdioPool)))

  it.scopedLive("pool/in-place/a legacy stdio session runs every call in place", () =>
    Effect.gen(function*() {
      const legacy = serverIn("legacy-32601")
      yield* hello(legacy, {})
      const resolved = yield* hello(legacy, { inputRequired: "resolve" })
      assert.deepStrictEqual(resolved, { era: "legacy", inPlace: true, answered: true })
    }).pipe(Effect.provide(stdioPool)))
})
