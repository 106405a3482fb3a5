/**
 * One request to a server's upstream session through the Pool, under the caller's scope key and
 * the server's `pool.callTimeout`, and a list method's every page.
 */
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as Metrics from "@mcpx-fx/protocol/Metrics"
import type { AbortHook } from "@mcpx-fx/cancel/Abortable"
import type { Pool } from "@mcpx-fx/upstream/pool/Pool"
import { type Caller as PoolCaller, ScopeKey } from "@mcpx-fx/upstream/pool/PoolModel"
import type { SessionError } from "@mcpx-fx/upstream/session/SessionErrors"
import type { Session } from "@mcpx-fx/upstream/session/SessionModel"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { type Caller, CallTimedOut, type GatewayServer } from "../GatewayModel.js"
import { callDeadline } from "./CallTimeout.js"
import type * as Deadlines from "./Deadlines.js"

/** What requests need of the Gateway. */
export interface RequestDeps {
  readonly pool: Pool["Type"]
  readonly deadlines: Deadlines.Deadlines
  /** The server as the settings stand now. */
  readonly current: (server: GatewayServer) => Effect.Effect<GatewayServer>
  /** The same, without an effect, when the settings it needs are kept (undefined when they must be read). */
  readonly currentKnown: (server: GatewayServer) => GatewayServer | undefined
}

/** The Pool's key for a caller of `server`, by the server's `scope`. */
export const poolCaller = (server: GatewayServer, caller: Caller): PoolCaller => {
  const key = server.scope === "global"
    ? ScopeKey.global
    : server.scope === "session" && caller.sessionId !== undefined
    ? ScopeKey.session(caller.sessionId)
    : ScopeKey.call
  return caller.revision === undefined ? { key } : { key, revision: caller.revision }
}

const both = <A, B>(a: AbortHook<A>, b: AbortHook<B>): AbortHook<A | B> => (abort) => {
  const letGoA = a(abort)
  const letGoB = b(abort)
  return () => {
    letGoA()
    letGoB()
  }
}

export const make = (deps: RequestDeps) => {
  const { current, currentKnown, deadlines, pool } = deps

  // pool.callTimeout bounds what the upstream takes, not what a person takes to answer its questions.
  const request = (
    configured: GatewayServer,
    caller: Caller,
    method: string,
    params: JsonObject,
    /**
     * What is sent on the session; by default the one request. Whatever it is waits only on the
     * session's requests made with `ctx` (TaskCall follows a task out of place), so the session
     * says whether the call can run in place (`runsInPlaceFor`).
     */
    send?: (session: Session, ctx: Caller) => Effect.Effect<JsonObject, SessionError>,
    // A tool call's client metric comes from its one observation (CallObserver.ts), not from here.
    observed = false
  ) =>
    Effect.suspend(() => {
      // The settings as they stand when the request runs: kept ones (one step), else read.
      const known = currentKnown(configured)
      return known !== undefined ?
        requestTo(known, caller, method, params, send, observed) :
        Effect.flatMap(current(configured), (server) => requestTo(server, caller, method, params, send, observed))
    })

  const requestTo = (
    server: GatewayServer,
    caller: Caller,
    method: string,
    params: JsonObject,
    send: ((session: Session, ctx: Caller) => Effect.Effect<JsonObject, SessionError>) | undefined,
    observed: boolean
  ) => {
    const timed = callDeadline(
      deadlines,
      caller,
      server.callTimeout,
      () => new CallTimedOut({ server: server.name, method, timeoutMs: Duration.toMillis(server.callTimeout) })
    )
    const cutShort = caller.cutShort === undefined ? timed.cutShort : both(timed.cutShort, caller.cutShort)
    const ctx = timed.caller
    const run = pool.withSession(
      server.pool,
      poolCaller(server, ctx),
      send === undefined ? (session) => session.request(method, params, ctx) : (session) => send(session, ctx),
      { cutShort, inPlace: (session) => session.runsInPlaceFor(ctx) }
    )
    // Timed around the Pool too: what a caller waits for an upstream includes its start.
    return observed ? run : Metrics.recordClient(method, run)
  }

  // Every page, so hosts see the whole list; a server that never stops paging is cut off. A
  // listing asks its caller nothing (nor is it ended by what the caller cannot answer): a stdio question names no call, and a listing in flight that
  // could be asked would make every other caller's question on that process unattributable.
  const listAll = (server: GatewayServer, caller: Caller, method: string, key: string) =>
    Effect.gen(function*() {
      // Nor is a listing ever parked on anyone's answer.
      const { cutShort: _cut, parked: _parked, questions: _, ...lister } = caller
      const items: Array<JsonObject> = []
      let cursor: string | undefined
      for (let page = 0; page < 100; page++) {
        const result = yield* request(server, lister, method, cursor === undefined ? {} : { cursor })
        const list = result[key]
        if (Array.isArray(list)) { for (const item of list) if (isJsonObject(item)) items.push(item) }
        cursor = typeof result.nextCursor === "string" && result.nextCursor.length > 0 ? result.nextCursor : undefined
        if (cursor === undefined) break
      }
      return items
    })

  return { request, listAll }
}
