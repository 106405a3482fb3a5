/**
 * The port the host-side task engine keeps its tasks in: one row per task, era-neutral (the
 * engine renders a row as 2025-11-25's core task or as the 2026-07-28 extension's). Declared here,
 * as the Backend is, so `server` knows nothing of SQL; `@mcpx-fx/store` implements it on SQLite
 * (the embedded default, in the state dir) and on PostgreSQL (a fleet).
 *
 * Durable by contract: a row outlives the process that wrote it. What a process cannot keep is
 * the live upstream call behind a `working` or `input_required` task, so every row names the
 * instance that runs it, instances renew a lease, and `sweep` fails the tasks of an instance whose
 * lease ran out (a daemon that died) instead of leaving them `working` for ever.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type { TaskStatus } from "@mcpx-fx/protocol/Tasks"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** The JSON-RPC error a `failed` task ended with. */
export interface TaskError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

/** A task as the store keeps it. Times are epoch milliseconds. */
export interface TaskRow {
  /** At least 128 random bits: the id is a bearer token for callers without an identity. */
  readonly taskId: string
  /** The caller identity that created it; only that identity may read, update or cancel it. */
  readonly owner: string
  /** The request that became the task (`tools/call`). */
  readonly method: string
  readonly status: TaskStatus
  readonly statusMessage?: string
  readonly createdAt: number
  readonly updatedAt: number
  /** How long after `createdAt` the task may be purged; null: until deleted. */
  readonly ttlMs: number | null
  readonly pollIntervalMs: number
  /** The call's own result, once `completed`. */
  readonly result?: JsonObject
  /** The protocol error, once `failed`. */
  readonly error?: TaskError
  /** The questions outstanding while `input_required`, keyed as `inputRequests` are. */
  readonly inputRequests?: JsonObject
  /** The process that holds the live call (lease-holder id). */
  readonly instance: string
}

/** A change to a task's state; fields left out keep their value, except those a status clears. */
export interface TaskUpdate {
  readonly status: TaskStatus
  readonly statusMessage?: string
  readonly result?: JsonObject
  readonly error?: TaskError
  readonly inputRequests?: JsonObject
}

/** One page of a caller's tasks, newest first. */
export interface TaskPage {
  readonly tasks: ReadonlyArray<TaskRow>
  /** Opaque; absent on the last page. */
  readonly nextCursor?: string
}

/** The store could not be read or written (the database is gone, the disk is full, …). */
export class TaskStoreError extends Schema.TaggedError<TaskStoreError>("@mcpx-fx/server/TaskStoreError")("TaskStoreError", {
  operation: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `the task store could not ${this.operation}: ${this.reason}`
  }
}

/** Where tasks are kept. */
export class TaskStore extends Context.Tag("@mcpx-fx/server/TaskStore")<TaskStore, {
  /** This process's lease-holder id; every row it creates names it. */
  readonly instance: string
  readonly create: (row: TaskRow) => Effect.Effect<void, TaskStoreError>
  /** The task, if it exists, has not expired, and belongs to `owner`; anything else is none. */
  readonly get: (taskId: string, owner: string) => Effect.Effect<Option.Option<TaskRow>, TaskStoreError>
  /**
   * Moves a task on, unless it is already terminal (a cancel that raced the result keeps
   * whichever came first). The row after the change, or none when it was terminal or gone.
   */
  readonly update: (taskId: string, update: TaskUpdate) => Effect.Effect<Option.Option<TaskRow>, TaskStoreError>
  /** The owner's unexpired tasks, newest first, `limit` per page. */
  readonly list: (owner: string, limit: number, cursor?: string) => Effect.Effect<TaskPage, TaskStoreError>
  /** How many non-terminal tasks exist: for `owner`, or in all when absent (the bounds). */
  readonly active: (owner?: string) => Effect.Effect<number, TaskStoreError>
  /**
   * Renews this instance's lease, fails the non-terminal tasks of instances whose lease is older
   * than `leaseMs` (with `message`), and deletes expired rows. Run at start and periodically.
   */
  readonly sweep: (leaseMs: number, message: string) => Effect.Effect<void, TaskStoreError>
  /** Fails this instance's own non-terminal tasks (a clean stop) and gives up its lease. */
  readonly release: (message: string) => Effect.Effect<void, TaskStoreError>
}>() {}
