/**
 * The SQL task store, one suite run on both layers: SQLite in temporary files, and the real
 * PostgreSQL of the test machines (127.0.0.1:5432, trust auth) in databases made for the run
 * through `test` and dropped after it. PostgreSQL being down fails the PostgreSQL tests with a
 * message saying so: CI starts it, and a skipped suite would pass unseen.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { type TaskRow, TaskStore, TaskStoreError } from "@mcpx-fx/server/TaskStore"
import * as SqlTaskStore from "@mcpx-fx/store/SqlTaskStore"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const PgAdmin = "postgres://postgres@127.0.0.1:5432/test"
const Lease = 30_000
const Gone = "the process that ran it stopped"

const row = (taskId: string, over: Partial<TaskRow> = {}): TaskRow => ({
  taskId,
  owner: "alice",
  method: "tools/call",
  status: "working",
  createdAt: 0,
  updatedAt: 0,
  ttlMs: 60_000,
  pollIntervalMs: 1_000,
  instance: "elsewhere",
  ...over
})

const some = <A>(o: Option.Option<A>): A => {
  assert.isTrue(Option.isSome(o), "expected a row")
  return Option.getOrThrow(o)
}

/** Runs `f` on a store opened over `layer`; the layer (and its connection) closes after it. */
const opened = <A, E>(layer: Layer.Layer<TaskStore, TaskStoreError>, f: (store: TaskStore["Type"]) => Effect.Effect<A, E>) =>
  Effect.scoped(Effect.flatMap(Layer.build(layer), (context) => f(Context.get(context, TaskStore))))

/** The contract, on a fresh database per test (tests run concurrently). */
const suite = (name: string, open: () => Layer.Layer<TaskStore, TaskStoreError>) => {
  it.effect(`store/${name}/a task round-trips with its JSON members, and belongs to its owner alone`, () =>
    opened(open(), (store) =>
      Effect.gen(function*() {
        const questions = { q: { method: "elicitation/create", params: { n: [1, "x"], deep: { ok: true } } } }
        const created = row("t1", { instance: store.instance, status: "input_required", statusMessage: "asking", inputRequests: questions })
        yield* store.create(created)
        assert.deepStrictEqual(some(yield* store.get("t1", "alice")), created)
        assert.isTrue(Option.isNone(yield* store.get("t1", "mallory")))
        assert.isTrue(Option.isNone(yield* store.get("nope", "alice")))
        const bare = row("t2", { ttlMs: null })
        yield* store.create(bare)
        assert.deepStrictEqual(some(yield* store.get("t2", "alice")), bare)
      })))

  it.effect(`store/${name}/a status moves on until it is terminal, and clears what belongs to another`, () =>
    opened(open(), (store) =>
      Effect.gen(function*() {
        yield* store.create(row("t1"))
        const asking = some(yield* store.update("t1", { status: "input_required", statusMessage: "q", inputRequests: { a: { method: "roots/list" } } }))
        assert.deepStrictEqual([asking.status, asking.statusMessage, asking.inputRequests], ["input_required", "q", { a: { method: "roots/list" } }])
        yield* TestClock.adjust(5)
        const working = some(yield* store.update("t1", { status: "working" }))
        assert.deepStrictEqual([working.status, working.statusMessage, working.inputRequests, working.updatedAt], ["working", undefined, undefined, 5])
        const done = some(yield* store.update("t1", { status: "completed", result: { content: [{ type: "text", text: "ok" }] } }))
        assert.deepStrictEqual(done.result, { content: [{ type: "text", text: "ok" }] })
        yield* TestClock.adjust(5)
        // A cancel that comes after the result changes nothing.
        assert.isTrue(Option.isNone(yield* store.update("t1", { status: "cancelled" })))
        assert.isTrue(Option.isNone(yield* store.update("t1", { status: "working" })))
        assert.deepStrictEqual(some(yield* store.get("t1", "alice")), done)
        assert.isTrue(Option.isNone(yield* store.update("missing", { status: "working" })))

        yield* store.create(row("t2"))
        yield* store.update("t2", { status: "input_required", inputRequests: { a: {} } })
        const failed = some(yield* store.update("t2", { status: "failed", error: { code: -32050, message: "no", data: { why: 1 } } }))
        assert.deepStrictEqual(failed.error, { code: -32050, message: "no", data: { why: 1 } })
        assert.isUndefined(failed.inputRequests)
        assert.isUndefined(failed.result)
        assert.isTrue(Option.isNone(yield* store.update("t2", { status: "completed", result: {} })))
        assert.deepStrictEqual(some(yield* store.get("t2", "alice")), failed)
      })))

  it.effect(`store/${name}/list pages newest first, ties by id, and refuses a cursor it did not issue`, () =>
    opened(open(), (store) =>
      Effect.gen(function*() {
        // t0/t1 and t3/t4 share a creation time, and the first pair straddles two pages.
        const times = [1, 1, 2, 3, 3]
        for (let i = 0; i < 5; i++) yield* store.create(row(`t${i}`, { createdAt: times[i] ?? 0 }))
        yield* store.create(row("bobs", { owner: "bob", createdAt: 9 }))
        const first = yield* store.list("alice", 2)
        assert.deepStrictEqual(first.tasks.map((t) => t.taskId), ["t4", "t3"])
        const second = yield* store.list("alice", 2, first.nextCursor)
        assert.deepStrictEqual(second.tasks.map((t) => t.taskId), ["t2", "t1"])
        assert.isString(second.nextCursor)
        const third = yield* store.list("alice", 2, second.nextCursor)
        assert.deepStrictEqual(third.tasks.map((t) => t.taskId), ["t0"])
        assert.isUndefined(third.nextCursor)
        const all = yield* store.list("alice", 5)
        assert.strictEqual(all.tasks.length, 5)
        assert.isUndefined(all.nextCursor, "no cursor when the page holds the last row")

        const wrongShape = Buffer.from(JSON.stringify({ at: 1 })).toString("base64url")
        for (const cursor of ["not-a-cursor", wrongShape]) {
          const refused = yield* Effect.flip(store.list("alice", 2, cursor))
          assert.instanceOf(refused, TaskStoreError)
          assert.deepStrictEqual([refused.operation, refused.reason], ["list tasks", "unknown cursor"])
        }
      })))

  it.effect(`store/${name}/expired tasks are gone to get and list, and sweep deletes them`, () =>
    opened(open(), (store) =>
      Effect.gen(function*() {
        yield* store.create(row("short", { ttlMs: 1_000, instance: store.instance }))
        yield* store.create(row("forever", { ttlMs: null, instance: store.instance }))
        yield* TestClock.adjust(1_000)
        assert.isTrue(Option.isSome(yield* store.get("short", "alice")), "alive at exactly its ttl")
        yield* TestClock.adjust(1)
        assert.isTrue(Option.isNone(yield* store.get("short", "alice")))
        assert.isTrue(Option.isSome(yield* store.get("forever", "alice")))
        assert.deepStrictEqual((yield* store.list("alice", 10)).tasks.map((t) => t.taskId), ["forever"])
        // Still a row (active counts rows) until the sweep deletes it.
        assert.strictEqual(yield* store.active(), 2)
        yield* store.sweep(Lease, Gone)
        assert.strictEqual(yield* store.active(), 1)
        assert.strictEqual(some(yield* store.get("forever", "alice")).status, "working")
      })))

  it.effect(`store/${name}/active counts unfinished tasks per owner and in all`, () =>
    opened(open(), (store) =>
      Effect.gen(function*() {
        assert.strictEqual(yield* store.active(), 0)
        yield* store.create(row("a1"))
        yield* store.create(row("a2"))
        yield* store.create(row("a3", { status: "input_required" }))
        yield* store.create(row("b1", { owner: "bob" }))
        yield* store.update("a2", { status: "completed", result: {} })
        assert.strictEqual(yield* store.active("alice"), 2)
        assert.strictEqual(yield* store.active("bob"), 1)
        assert.strictEqual(yield* store.active("carol"), 0)
        assert.strictEqual(yield* store.active(), 3)
      })))

  it.effect(`store/${name}/release fails this process's unfinished tasks and leaves the rest alone`, () =>
    opened(open(), (store) =>
      Effect.gen(function*() {
        yield* store.create(row("mine", { instance: store.instance, status: "input_required", inputRequests: { a: {} } }))
        yield* store.create(row("mine-done", { instance: store.instance }))
        const done = some(yield* store.update("mine-done", { status: "completed", result: { v: 1 } }))
        yield* store.create(row("theirs", { instance: "someone-else" }))
        yield* store.release(Gone)
        const mine = some(yield* store.get("mine", "alice"))
        assert.deepStrictEqual([mine.status, mine.error, mine.inputRequests], ["failed", { code: -32603, message: Gone }, undefined])
        assert.deepStrictEqual(some(yield* store.get("mine-done", "alice")), done)
        assert.strictEqual(some(yield* store.get("theirs", "alice")).status, "working")
      })))
}

/** Two opens of one database, one after the other: what a restart of the daemon finds. */
const durability = (name: string, open: () => Layer.Layer<TaskStore, TaskStoreError>) =>
  it.effect(`store/${name}/after a restart, finished tasks still read, and a running one fails once its lease ran out`, () =>
    Effect.gen(function*() {
      const first = yield* opened(open(), (store) =>
        Effect.gen(function*() {
          yield* store.sweep(Lease, Gone)
          yield* store.create(row("running", { instance: store.instance }))
          yield* store.create(row("done", { instance: store.instance }))
          yield* store.update("done", { status: "completed", result: { content: [{ type: "text", text: "kept" }] } })
          return store.instance
        }))
      yield* opened(open(), (store) =>
        Effect.gen(function*() {
          assert.notStrictEqual(store.instance, first)
          // The first process's lease is still fresh: its task is left alone.
          yield* store.sweep(Lease, Gone)
          assert.strictEqual(some(yield* store.get("running", "alice")).status, "working")
          yield* TestClock.adjust(Lease + 1)
          yield* store.sweep(Lease, Gone)
          const running = some(yield* store.get("running", "alice"))
          assert.deepStrictEqual([running.status, running.error, running.updatedAt], ["failed", { code: -32603, message: Gone }, Lease + 1])
          const done = some(yield* store.get("done", "alice"))
          assert.deepStrictEqual([done.status, done.result], ["completed", { content: [{ type: "text", text: "kept" }] }])
        }))
    }))

// ---- SQLite

const dir = mkdtempSync(join(tmpdir(), "mcpx-store-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const sqliteFile = () => join(dir, `db-${files++}`, "state", "tasks.db")

describe("SQLite", () => {
  suite("sqlite", () => SqlTaskStore.layerSqlite(sqliteFile()))
  const restart = sqliteFile()
  durability("sqlite", () => SqlTaskStore.layerSqlite(restart))

  it.effect("store/sqlite/the file is in WAL mode, and two processes' stores share it", () => {
    const file = sqliteFile()
    return opened(SqlTaskStore.layerSqlite(file), (a) =>
      opened(SqlTaskStore.layerSqlite(file), (b) =>
        Effect.gen(function*() {
          yield* a.create(row("shared", { instance: a.instance }))
          assert.strictEqual(some(yield* b.get("shared", "alice")).instance, a.instance)
          const mode = yield* Effect.scoped(Effect.flatMap(
            Layer.build(SqliteClient.layer({ filename: file, disableWAL: true })),
            (c) => Context.get(c, SqlClient.SqlClient)<{ readonly journal_mode: string }>`PRAGMA journal_mode`
          ))
          assert.deepStrictEqual(mode, [{ journal_mode: "wal" }])
        })))
  })

  it.effect("store/sqlite/a state file that is not a database, or cannot be made, is a TaskStoreError", () =>
    Effect.gen(function*() {
      const garbage = join(dir, "garbage.db")
      writeFileSync(garbage, "x".repeat(4096))
      const blocker = join(dir, "blocker")
      writeFileSync(blocker, "")
      for (const file of [garbage, join(blocker, "sub", "tasks.db")]) {
        const error = yield* Effect.flip(opened(SqlTaskStore.layerSqlite(file), () => Effect.void))
        assert.instanceOf(error, TaskStoreError)
        assert.strictEqual(error.operation, `open ${file}`)
      }
    }))
})

// ---- PostgreSQL

const admin = PgClient.layer({ url: Redacted.make(PgAdmin), maxConnections: 1 })
const asAdmin = <A, E>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
  Effect.scoped(Effect.flatMap(Layer.build(admin), (c) => f(Context.get(c, SqlClient.SqlClient))))
const made = new Set<string>()
const databaseName = () => `mcpx_store_test_${randomBytes(6).toString("hex")}`

const pgUrl = (name: string) => `postgres://postgres@127.0.0.1:5432/${name}`
const createDatabase = (name: string) =>
  Effect.suspend(() => {
    made.add(name)
    return Effect.orDie(asAdmin((sql) => sql.unsafe(`CREATE DATABASE ${name}`)))
  })

/** The store on `name`, a database made (through `test`) when the layer is first built. */
const pgStore = (name: string) => Layer.unwrapEffect(Effect.as(made.has(name) ? Effect.void : createDatabase(name), SqlTaskStore.layerPostgres(pgUrl(name))))

describe("PostgreSQL", () => {
  beforeAll(async () => {
    const exit = await Effect.runPromiseExit(Effect.timeout(asAdmin((sql) => sql`SELECT 1`), "10 seconds"))
    if (Exit.isFailure(exit)) {
      throw new Error(`PostgreSQL is needed at ${PgAdmin} (CI starts it) and is not reachable: ${Cause.pretty(exit.cause)}`)
    }
  })
  afterAll(() =>
    Effect.runPromise(asAdmin((sql) => Effect.forEach(made, (name) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`), { discard: true })))
  )

  suite("postgres", () => pgStore(databaseName()))
  const restart = databaseName()
  durability("postgres", () => pgStore(restart))

  it.effect("store/postgres/a fleet starting at once on an empty database all open it", () => {
    const name = databaseName()
    return Effect.gen(function*() {
      yield* createDatabase(name)
      const instances = yield* Effect.all(
        Array.from({ length: 8 }, () => opened(SqlTaskStore.layerPostgres(pgUrl(name)), (store) => Effect.as(store.sweep(Lease, Gone), store.instance))),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(new Set(instances).size, 8)
    })
  })

  it.effect("store/postgres/an unreachable server is a TaskStoreError that does not show the URL's password", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(opened(SqlTaskStore.layerPostgres("postgres://u:s3cret@127.0.0.1:1/none"), () => Effect.void))
      assert.instanceOf(error, TaskStoreError)
      assert.strictEqual(error.operation, "open the PostgreSQL task store")
      assert.notInclude(`${error.message} ${error.reason}`, "s3cret")
    }))
})
