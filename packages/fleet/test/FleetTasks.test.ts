/**
 * Tasks across two instances of one fleet, in one test process: two HostTasks on one PostgreSQL
 * task store (a database made for the run on the test machines' 127.0.0.1:5432, dropped after),
 * each with its own NATS connection. A task runs on A; B answers and cancels it by sending to A.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type { Caller } from "@mcpx-fx/server/Backend"
import { Fleet } from "@mcpx-fx/server/Fleet"
import { HostTasks, type Round } from "@mcpx-fx/server/HostTasks"
import * as TaskForwarding from "@mcpx-fx/server/TaskForwarding"
import { DefaultPolicy } from "@mcpx-fx/server/TaskPolicy"
import type { TaskRow } from "@mcpx-fx/server/TaskStore"
import * as SqlTaskStore from "@mcpx-fx/store/SqlTaskStore"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"
import { fleetName, instance } from "./support/Nats.js"

const PgAdmin = "postgres://postgres@127.0.0.1:5432/test"
const admin = PgClient.layer({ url: Redacted.make(PgAdmin), maxConnections: 1 })
const asAdmin = <A, E>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
  Effect.scoped(Effect.flatMap(Layer.build(admin), (c) => f(Context.get(c, SqlClient.SqlClient))))
const made = new Set<string>()

/** A database of the test's own. */
const database = Effect.gen(function*() {
  const name = `mcpx_fleet_test_${randomBytes(6).toString("hex")}`
  made.add(name)
  yield* Effect.orDie(asAdmin((sql) => sql.unsafe(`CREATE DATABASE ${name}`)))
  return `postgres://postgres@127.0.0.1:5432/${name}`
})

/** One instance: its fleet connection open for `fleetScope`, its task engine for `scope`. */
const node = (name: string, url: string, scope: Scope.Scope, fleetScope: Scope.Scope = scope) =>
  Effect.gen(function*() {
    const fleet = yield* instance(name, fleetScope)
    const context = yield* Layer.buildWithScope(
      HostTasks.layerFleet({ ...DefaultPolicy, afterMs: 0 }).pipe(
        Layer.provide(SqlTaskStore.layerPostgres(url, fleet.instance)),
        Layer.provide(Layer.succeed(Fleet, fleet))
      ),
      scope
    )
    return { tasks: Context.get(context, HostTasks), instance: fleet.instance }
  })

const caller: Caller = { revision: "2026-07-28", era: "modern", clientCapabilities: {}, sessionId: "alice" }
const legacyCaller: Caller = { revision: "2025-11-25", era: "legacy", clientCapabilities: {}, sessionId: "alice" }

/** An upstream call that asks once, then answers with what it was told. */
const asksOnce: Round = (_caller, retry) =>
  Effect.succeed<JsonObject>(
    retry === undefined
      ? { resultType: "input_required", inputRequests: { name: { method: "elicitation/create", params: { message: "name?" } } }, requestState: "s1" }
      : { content: [{ type: "text", text: JSON.stringify({ answers: retry.inputResponses, state: retry.requestState }) }] }
  )

/** Waits, on the rows `tasks` writes, until `taskId` reads `status`. */
const until = (writes: Queue.Dequeue<TaskRow>, taskId: string, status: TaskRow["status"]) =>
  Effect.repeat(Queue.take(writes), { until: (row) => row.taskId === taskId && row.status === status })

/** The id a CreateTaskResult names, in either era's shape. */
const taskIdOf = (created: JsonObject) =>
  String(typeof created.task === "object" && created.task !== null ? (created.task as JsonObject).taskId : created.taskId)

describe("tasks across a fleet", () => {
  beforeAll(async () => {
    const exit = await Effect.runPromiseExit(Effect.timeout(asAdmin((sql) => sql`SELECT 1`), "10 seconds"))
    if (Exit.isFailure(exit)) throw new Error(`PostgreSQL is needed at ${PgAdmin} (CI starts it): ${Cause.pretty(exit.cause)}`)
  })
  afterAll(() =>
    Effect.runPromise(asAdmin((sql) => Effect.forEach(made, (name) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`), { discard: true })))
  )

  it.scopedLive("a task made on A is answered through B: A's live call runs the next round", () =>
    Effect.gen(function*() {
      const url = yield* database
      const name = fleetName()
      const scope = yield* Effect.scope
      const a = yield* node(name, url, scope)
      const b = yield* node(name, url, scope)
      const writes = yield* a.tasks.statuses
      const taskId = taskIdOf(yield* a.tasks.call(caller, "tools/call", true, asksOnce))
      yield* until(writes, taskId, "input_required")
      const asked = yield* b.tasks.get(caller, taskId)
      assert.strictEqual(asked.status, "input_required")
      assert.deepStrictEqual(yield* b.tasks.update(caller, taskId, { name: { action: "accept", content: { name: "Ada" } } }), { resultType: "complete" })
      yield* until(writes, taskId, "completed")
      const done = yield* b.tasks.get(caller, taskId)
      assert.deepStrictEqual(done.result, {
        content: [{ type: "text", text: JSON.stringify({ answers: { name: { action: "accept", content: { name: "Ada" } } }, state: "s1" }) }]
      })
      // Another caller's update is refused at A, and the refusal comes back as A gave it.
      const bob: Caller = { ...caller, sessionId: "bob" }
      const refused = yield* Effect.flip(b.tasks.update(bob, taskId, {}))
      assert.strictEqual(refused._tag, "InvalidParams")
    }))

  it.scopedLive("a task made on A is cancelled through B: A's call is stopped, not only the row", () =>
    Effect.gen(function*() {
      const url = yield* database
      const name = fleetName()
      const scope = yield* Effect.scope
      const a = yield* node(name, url, scope)
      const b = yield* node(name, url, scope)
      const stopped = yield* Deferred.make<void>()
      const forever: Round = () => Effect.onInterrupt(Effect.never, () => Deferred.succeed(stopped, undefined))
      const taskId = taskIdOf(yield* a.tasks.call(caller, "tools/call", true, forever))
      assert.deepStrictEqual(yield* b.tasks.cancel(caller, taskId), { resultType: "complete" })
      yield* Deferred.await(stopped)
      assert.strictEqual((yield* a.tasks.get(caller, taskId)).status, "cancelled")
    }))

  it.scopedLive("when A is gone from the fleet, B's update or cancel fails its task at once", () =>
    Effect.gen(function*() {
      const url = yield* database
      const name = fleetName()
      const scope = yield* Effect.scope
      // A's task engine lives on (its lease stays fresh, so no sweep would fail the task), but
      // nothing can reach it: as a process killed between two lease renewals.
      const aFleet = yield* Scope.make()
      const a = yield* node(name, url, scope, aFleet)
      const b = yield* node(name, url, scope)
      const forever: Round = () => Effect.never
      const first = taskIdOf(yield* a.tasks.call(caller, "tools/call", true, forever))
      const second = taskIdOf(yield* a.tasks.call(legacyCaller, "tools/call", true, forever))
      yield* Scope.close(aFleet, Exit.void)
      assert.deepStrictEqual(yield* b.tasks.update(caller, first, { x: {} }), { resultType: "complete" })
      const failed = yield* b.tasks.get(caller, first)
      assert.strictEqual(failed.status, "failed")
      assert.deepStrictEqual((failed.error as JsonObject).message, TaskForwarding.GoneMessage)
      // A 2025-11-25 cancel answers the task as it now is: failed, not cancelled.
      const cancelled = yield* b.tasks.cancel(legacyCaller, second)
      assert.strictEqual(cancelled.status, "failed")
      assert.strictEqual((yield* a.tasks.get(legacyCaller, second)).status, "failed")
    }))
})
