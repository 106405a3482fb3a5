/**
 * The TaskStore on SQL: one implementation over `@effect/sql`'s SqlClient, the same statements
 * for both databases, and a layer for each:
 *
 * - `layerSqlite(file)`: embedded SQLite (better-sqlite3, WAL so processes sharing a state dir
 *   can read and write the file at once). The default: a user's `npx mcpx-fx` needs no server.
 * - `layerPostgres(url)`: PostgreSQL, which several instances can share.
 *
 * Tables: `mcpx_tasks` (one row per task; JSON members as text, times as epoch milliseconds) and
 * `mcpx_task_leases` (one row per live process, renewed by `sweep`). Times come from Effect's
 * Clock, so tests drive expiry and leases with TestClock.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import { TaskStatus } from "@mcpx-fx/protocol/Tasks"
import { type TaskError, type TaskPage, type TaskRow, TaskStore, TaskStoreError, type TaskUpdate } from "@mcpx-fx/server/TaskStore"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"

/** A row as the database returns it (PostgreSQL gives BIGINT as a string). */
interface Stored {
  readonly task_id: string
  readonly owner: string
  readonly method: string
  readonly status: string
  readonly status_message: string | null
  readonly created_at: number | string
  readonly updated_at: number | string
  readonly ttl_ms: number | string | null
  readonly poll_interval_ms: number | string
  readonly result: string | null
  readonly error: string | null
  readonly input_requests: string | null
  readonly instance: string
}

const isTaskStatus = Schema.is(TaskStatus)

const jsonObject = (text: string | null): JsonObject | undefined => {
  if (text === null) return undefined
  const parsed: unknown = JSON.parse(text)
  return isJsonObject(parsed) ? parsed : undefined
}

const taskError = (text: string | null): TaskError | undefined => {
  const o = jsonObject(text)
  if (o === undefined || typeof o.code !== "number" || typeof o.message !== "string") return undefined
  return o.data === undefined ? { code: o.code, message: o.message } : { code: o.code, message: o.message, data: o.data }
}

const toRow = (s: Stored): TaskRow => {
  const result = jsonObject(s.result)
  const error = taskError(s.error)
  const inputRequests = jsonObject(s.input_requests)
  return {
    taskId: s.task_id,
    owner: s.owner,
    method: s.method,
    // Only this module writes the column, from TaskStatus values; a row some other writer broke
    // reads as finished, so nothing waits on it.
    status: isTaskStatus(s.status) ? s.status : "failed",
    ...(s.status_message === null ? {} : { statusMessage: s.status_message }),
    createdAt: Number(s.created_at),
    updatedAt: Number(s.updated_at),
    ttlMs: s.ttl_ms === null ? null : Number(s.ttl_ms),
    pollIntervalMs: Number(s.poll_interval_ms),
    ...(result === undefined ? {} : { result }),
    ...(error === undefined ? {} : { error }),
    ...(inputRequests === undefined ? {} : { inputRequests }),
    instance: s.instance
  }
}

const text = (o: unknown): string | null => (o === undefined ? null : JSON.stringify(o))

/** A page's position: the last row's creation time and id, opaque to callers. */
const encodeCursor = (row: TaskRow): string => Buffer.from(JSON.stringify([row.createdAt, row.taskId])).toString("base64url")

const decodeCursor = (cursor: string): readonly [number, string] | undefined => {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    return Array.isArray(parsed) && parsed.length === 2 && Number.isSafeInteger(parsed[0]) && typeof parsed[1] === "string"
      ? [parsed[0], parsed[1]]
      : undefined
  } catch {
    return undefined
  }
}

/** What went wrong, with the driver's own words: SqlError's message alone is "Failed to execute statement". */
const reasonOf = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e)
  const cause: unknown = "cause" in e ? e.cause : undefined
  return cause instanceof Error && cause.message !== "" && cause.message !== e.message ? `${e.message}: ${cause.message}` : e.message
}

/** Non-terminal statuses, in SQL. */
const unfinished = ["working", "input_required"] as const

/**
 * The tables and index, if absent, in DDL both databases accept: TEXT, and BIGINT since epoch
 * milliseconds outgrow 32 bits.
 */
const createTables = (sql: SqlClient.SqlClient) =>
  Effect.all([
    sql`CREATE TABLE IF NOT EXISTS mcpx_tasks (
      task_id TEXT PRIMARY KEY,
      owner TEXT NOT NULL,
      method TEXT NOT NULL,
      status TEXT NOT NULL,
      status_message TEXT,
      created_at BIGINT NOT NULL,
      updated_at BIGINT NOT NULL,
      ttl_ms BIGINT,
      poll_interval_ms BIGINT NOT NULL,
      result TEXT,
      error TEXT,
      input_requests TEXT,
      instance TEXT NOT NULL
    )`,
    sql`CREATE INDEX IF NOT EXISTS mcpx_tasks_owner_created ON mcpx_tasks (owner, created_at)`,
    sql`CREATE TABLE IF NOT EXISTS mcpx_task_leases (instance TEXT PRIMARY KEY, renewed_at BIGINT NOT NULL)`
  ], { discard: true })

/** The store over whatever SqlClient is provided: tables made if missing, this process's id drawn. */
export const make: Effect.Effect<TaskStore["Type"], SqlError, SqlClient.SqlClient> = Effect.suspend(() => makeAs(randomUUID()))

/**
 * The store as `instance`: a fleet names the process by its Fleet id, so a task's row says which
 * process to ask about its live call. The id must be unique per process (Fleet.processIdOf).
 */
export const makeAs = (instance: string): Effect.Effect<TaskStore["Type"], SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // PostgreSQL can fail one of two concurrent CREATE ... IF NOT EXISTS (a fleet starting at
    // once, on a unique index of its catalog); the loser then finds that object made, so one retry
    // for each of the three objects is enough.
    yield* Effect.retry(createTables(sql), { times: 3 })

    const failing = (operation: string) => <A, R>(effect: Effect.Effect<A, SqlError, R>) =>
      Effect.mapError(effect, (e) => new TaskStoreError({ operation, reason: reasonOf(e) }))

    const unexpired = (now: number) => sql`(ttl_ms IS NULL OR created_at + ttl_ms >= ${now})`

    const create = (row: TaskRow) =>
      sql`INSERT INTO mcpx_tasks ${
        sql.insert({
          task_id: row.taskId,
          owner: row.owner,
          method: row.method,
          status: row.status,
          status_message: row.statusMessage ?? null,
          created_at: row.createdAt,
          updated_at: row.updatedAt,
          ttl_ms: row.ttlMs,
          poll_interval_ms: row.pollIntervalMs,
          result: text(row.result),
          error: text(row.error),
          input_requests: text(row.inputRequests),
          instance: row.instance
        })
      }`.pipe(Effect.asVoid, failing("create a task"))

    const get = (taskId: string, owner: string) =>
      Effect.flatMap(
        Clock.currentTimeMillis,
        (now) => sql<Stored>`SELECT * FROM mcpx_tasks WHERE task_id = ${taskId} AND owner = ${owner} AND ${unexpired(now)}`
      ).pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toRow)),
        failing(`read task ${taskId}`)
      )

    /** The columns an update writes: what it carries, and NULL for what its status clears. */
    const changes = (u: TaskUpdate, now: number): Record<string, string | number | null> => {
      const set: Record<string, string | number | null> = { status: u.status, status_message: u.statusMessage ?? null, updated_at: now }
      if (u.result !== undefined) set.result = text(u.result)
      if (u.error !== undefined) set.error = text(u.error)
      if (u.inputRequests !== undefined) set.input_requests = text(u.inputRequests)
      // A result is not kept beside an error (nor the reverse), and questions go once the task
      // moves on from asking them.
      if (u.status === "completed") set.error = null
      if (u.status === "failed") set.result = null
      if (u.status !== "input_required") set.input_requests = null
      return set
    }

    const update = (taskId: string, u: TaskUpdate) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        // The status test in the same statement is what makes "the first terminal state wins" hold
        // across processes: no read-then-write window.
        sql<Stored>`UPDATE mcpx_tasks SET ${sql.update(changes(u, now))}
        WHERE task_id = ${taskId} AND status IN ${sql.in(unfinished)} RETURNING *`).pipe(
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toRow)),
          failing(`update task ${taskId}`)
        )

    const list = (owner: string, limit: number, cursor?: string): Effect.Effect<TaskPage, TaskStoreError> => {
      const after = cursor === undefined ? undefined : decodeCursor(cursor)
      if (cursor !== undefined && after === undefined) {
        return Effect.fail(new TaskStoreError({ operation: "list tasks", reason: "unknown cursor" }))
      }
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const position = after === undefined
          ? sql`1 = 1`
          : sql`(created_at < ${after[0]} OR (created_at = ${after[0]} AND task_id < ${after[1]}))`
        // One row past the page says whether there is a next one.
        return sql<Stored>`SELECT * FROM mcpx_tasks WHERE owner = ${owner} AND ${unexpired(now)} AND ${position}
        ORDER BY created_at DESC, task_id DESC LIMIT ${Math.max(0, limit) + 1}`
      }).pipe(
        Effect.map((stored): TaskPage => {
          const rows = stored.slice(0, Math.max(0, limit)).map(toRow)
          const last = rows[rows.length - 1]
          return stored.length > rows.length && last !== undefined ? { tasks: rows, nextCursor: encodeCursor(last) } : { tasks: rows }
        }),
        failing("list tasks")
      )
    }

    const active = (owner?: string) =>
      sql<{ readonly n: number | string }>`SELECT COUNT(*) AS n FROM mcpx_tasks WHERE status IN ${sql.in(unfinished)}${
        owner === undefined ? sql`` : sql` AND owner = ${owner}`
      }`.pipe(
        Effect.map((rows) => Number(rows[0]?.n ?? 0)),
        failing(owner === undefined ? "count the active tasks" : `count the active tasks of ${owner}`)
      )

    const failedWith = (message: string) => JSON.stringify({ code: -32603, message })

    const sweep = (leaseMs: number, message: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        sql.withTransaction(Effect.all([
          sql`INSERT INTO mcpx_task_leases ${sql.insert({ instance, renewed_at: now })}
          ON CONFLICT (instance) DO UPDATE SET renewed_at = excluded.renewed_at`,
          // No lease, or one not renewed in time: the process that held these calls is gone.
          sql`UPDATE mcpx_tasks SET status = 'failed', status_message = NULL, updated_at = ${now},
          result = NULL, error = ${failedWith(message)}, input_requests = NULL
          WHERE status IN ${sql.in(unfinished)} AND instance <> ${instance}
          AND instance NOT IN (SELECT instance FROM mcpx_task_leases WHERE renewed_at >= ${now - leaseMs})`,
          sql`DELETE FROM mcpx_tasks WHERE ttl_ms IS NOT NULL AND created_at + ttl_ms < ${now}`,
          // Kept ten leases long, so a slow process is not forgotten between two of its renewals.
          sql`DELETE FROM mcpx_task_leases WHERE renewed_at < ${now - leaseMs * 10}`
        ], { discard: true }))).pipe(failing("sweep the tasks"))

    const release = (message: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        sql.withTransaction(Effect.all([
          sql`UPDATE mcpx_tasks SET status = 'failed', status_message = NULL, updated_at = ${now},
          result = NULL, error = ${failedWith(message)}, input_requests = NULL
          WHERE status IN ${sql.in(unfinished)} AND instance = ${instance}`,
          sql`DELETE FROM mcpx_task_leases WHERE instance = ${instance}`
        ], { discard: true }))).pipe(failing("release this process's tasks"))

    return TaskStore.of({ instance, create, get, update, list, active, sweep, release })
  })

/**
 * The store on `client`. Opening fails as a TaskStoreError, defects included: better-sqlite3
 * throws from its constructor and first pragma (a file that is not a database), which the client
 * layer does not catch, and a bad state file must not crash the daemon without a word.
 */
const storeOn = <E>(
  client: Layer.Layer<SqlClient.SqlClient, E>,
  where: string,
  instance: string | undefined
): Layer.Layer<TaskStore, TaskStoreError> => {
  const opening = (reason: string) => new TaskStoreError({ operation: `open ${where}`, reason })
  const opened = Layer.catchAllCause(client, (cause) =>
    Cause.isInterruptedOnly(cause)
      ? Layer.unwrapEffect<SqlClient.SqlClient, never, never, never, never>(Effect.interrupt)
      : Layer.fail(opening(reasonOf(Cause.squash(cause)))))
  return Layer.effect(TaskStore, Effect.mapError(instance === undefined ? make : makeAs(instance), (e) => opening(reasonOf(e)))).pipe(
    Layer.provide(opened)
  )
}

/** Tasks in the SQLite file `filename` (its directory made if missing); `:memory:` for none. `instance`: as `makeAs`. */
export const layerSqlite = (filename: string, instance?: string): Layer.Layer<TaskStore, TaskStoreError> =>
  Layer.unwrapEffect(
    Effect.map(
      Effect.try({
        try: () => {
          if (filename !== ":memory:") mkdirSync(dirname(filename), { recursive: true, mode: 0o700 })
        },
        catch: (e) => new TaskStoreError({ operation: `open ${filename}`, reason: reasonOf(e) })
      }),
      // WAL (the client's default, asked for here so it stays so): readers in one process do not
      // block the writer in another, as with a CLI and a daemon on one state dir.
      () => storeOn(SqliteClient.layer({ filename, disableWAL: false }), filename, instance)
    )
  )

/** Tasks in the PostgreSQL database at `url`, shareable by several instances. `instance`: as `makeAs`. */
export const layerPostgres = (url: string, instance?: string): Layer.Layer<TaskStore, TaskStoreError> =>
  // Loaded only here: pg and its protocol are ~3 MB of heap (and node:tls, node:dns) that a daemon
  // on the embedded store would otherwise keep for its whole life.
  Layer.unwrapEffect(Effect.map(
    Effect.promise(() => import("@effect/sql-pg/PgClient")),
    // The URL may carry a password: it stays Redacted and out of every error.
    (PgClient) => storeOn(PgClient.layer({ url: Redacted.make(url), maxConnections: 4 }), "the PostgreSQL task store", instance)
  ))
