/**
 * The conformance fixture's task table: one per process, shared by every server instance (a
 * modern HTTP request gets a fresh instance, and its follow-up `tasks/get` must find the task).
 * Era-neutral: it keeps each task's state, runs its body in the background, parks it on input
 * and cancels it; TaskTools renders a record in the era that asked (`ttl`/`pollInterval` and a
 * nested handle for 2025-11-25, `ttlMs`/`pollIntervalMs` and a flat handle for 2026-07-28).
 *
 * Task ids are random UUIDs: the extension lets a server treat them as bearer tokens, so they
 * must not be guessable.
 */
import { randomUUID } from "node:crypto"

export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled"

/** A JSON-RPC error a task failed with. */
export interface TaskError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

/** Thrown by a task body for a protocol-level failure: the task ends `failed` with this error. */
export class TaskFailure extends Error {
  constructor(readonly error: TaskError) {
    super(error.message)
  }
}

/** Thrown into a task body when its task was cancelled while it slept or waited for input. */
export class TaskCancelled extends Error {
  constructor() {
    super("task cancelled")
  }
}

/** One question a task asks its requestor: `{method, params}` as MRTR's input requests carry it. */
export type InputRequest = { readonly method: string; readonly params?: Record<string, unknown> }

/** What a task body can do besides computing. */
export interface Job {
  readonly taskId: string
  /** Waits `ms`, or throws TaskCancelled as soon as the task is cancelled. */
  readonly sleep: (ms: number) => Promise<void>
  /**
   * Parks the task in `input_required` with these questions (keys unique over the task's life)
   * and resolves once every one is answered, answers keyed alike.
   */
  readonly ask: (requests: Readonly<Record<string, InputRequest>>) => Promise<Record<string, Record<string, unknown>>>
}

/** A task as the store holds it. */
export interface TaskRecord {
  readonly taskId: string
  status: TaskStatus
  statusMessage?: string
  readonly createdAt: string
  lastUpdatedAt: string
  readonly ttlMs: number
  readonly pollIntervalMs: number
  result?: Record<string, unknown>
  error?: TaskError
  /** Questions not answered yet. */
  readonly pending: Map<string, InputRequest>
}

interface Entry {
  readonly record: TaskRecord
  readonly abort: AbortController
  readonly answers: Map<string, Record<string, unknown>>
  /** Woken whenever answers arrive. */
  wake: (() => void) | undefined
  readonly settled: Promise<void>
}

export interface TaskStoreOptions {
  /** How long a task stays readable after it was created. */
  readonly ttlMs: number
  readonly pollIntervalMs: number
  /** Page size of `tasks/list`. */
  readonly pageSize: number
  /** Told of every status change (2025-11-25 `notifications/tasks/status`). */
  readonly onChange?: (record: TaskRecord) => void
}

const now = () => new Date().toISOString()

const isTerminal = (status: TaskStatus): boolean => status === "completed" || status === "failed" || status === "cancelled"

export class TaskStore {
  readonly #entries = new Map<string, Entry>()
  readonly #options: TaskStoreOptions
  readonly #listeners = new Set<(record: TaskRecord) => void>()

  constructor(options: TaskStoreOptions) {
    this.#options = options
  }

  /** Listens to status changes until the returned function is called. */
  listen(listener: (record: TaskRecord) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /**
   * Creates a task and starts `body` in the background. The record is in the table before this
   * returns, so a `tasks/get` right after the handle arrives finds it (durable creation).
   */
  create(body: (job: Job) => Promise<Record<string, unknown>>, ttlMs?: number): TaskRecord {
    const createdAt = now()
    const record: TaskRecord = {
      taskId: randomUUID(),
      status: "working",
      createdAt,
      lastUpdatedAt: createdAt,
      ttlMs: Math.max(1, Math.round(Math.min(ttlMs ?? this.#options.ttlMs, this.#options.ttlMs))),
      pollIntervalMs: this.#options.pollIntervalMs,
      pending: new Map()
    }
    const abort = new AbortController()
    const answers = new Map<string, Record<string, unknown>>()
    let entry: Entry | undefined
    const job: Job = {
      taskId: record.taskId,
      sleep: (ms) => this.#sleep(abort.signal, ms),
      ask: (requests) => this.#ask(record, answers, () => entry, abort.signal, requests)
    }
    const settled = Promise.resolve()
      .then(() => body(job))
      .then(
        (result) => this.#finish(record, { status: "completed", result }),
        (error: unknown) =>
          error instanceof TaskCancelled
            ? undefined
            : this.#finish(record, {
              status: "failed",
              error: error instanceof TaskFailure ? error.error : { code: -32603, message: error instanceof Error ? error.message : String(error) }
            })
      )
    entry = { record, abort, answers, wake: undefined, settled }
    this.#entries.set(record.taskId, entry)
    // The table forgets a task once its ttl is over; unref'd so a finished fixture can exit.
    setTimeout(() => {
      abort.abort()
      this.#entries.delete(record.taskId)
    }, record.ttlMs).unref()
    return record
  }

  get(taskId: string): TaskRecord | undefined {
    return this.#entries.get(taskId)?.record
  }

  /** Every task, oldest first (the order `tasks/list` pages through). */
  all(): ReadonlyArray<TaskRecord> {
    return [...this.#entries.values()].map((e) => e.record)
  }

  get pageSize(): number {
    return this.#options.pageSize
  }

  /**
   * Records answers to outstanding questions; answers to keys that are not outstanding (never
   * asked, already answered) are ignored, as the extension tells servers to.
   */
  update(taskId: string, responses: Readonly<Record<string, Record<string, unknown>>>): boolean {
    const entry = this.#entries.get(taskId)
    if (entry === undefined) return false
    const { record } = entry
    let answered = false
    for (const [key, value] of Object.entries(responses)) {
      if (!record.pending.has(key)) continue
      record.pending.delete(key)
      entry.answers.set(key, value)
      answered = true
    }
    if (answered) {
      record.lastUpdatedAt = now()
      entry.wake?.()
    }
    return true
  }

  /** Cancels a task that has not ended; a task that has ended stays as it is. */
  cancel(taskId: string): boolean {
    const entry = this.#entries.get(taskId)
    if (entry === undefined) return false
    if (!isTerminal(entry.record.status)) {
      entry.record.pending.clear()
      this.#transition(entry.record, { status: "cancelled", statusMessage: "The task was cancelled on request." })
      entry.abort.abort()
    }
    return true
  }

  /** Resolves once the task has ended (or at once when it is unknown). */
  async settled(taskId: string): Promise<void> {
    const entry = this.#entries.get(taskId)
    if (entry === undefined || isTerminal(entry.record.status)) return
    await Promise.race([entry.settled, new Promise<void>((resolve) => entry.abort.signal.addEventListener("abort", () => resolve()))])
  }

  #finish(record: TaskRecord, outcome: { status: "completed"; result: Record<string, unknown> } | { status: "failed"; error: TaskError }) {
    // Once cancelled, a task stays cancelled, whatever its body did afterwards.
    if (isTerminal(record.status)) return
    if (outcome.status === "completed") record.result = outcome.result
    else record.error = outcome.error
    this.#transition(record, outcome.status === "failed" ? { status: "failed", statusMessage: outcome.error.message } : { status: "completed" })
  }

  #transition(record: TaskRecord, next: { status: TaskStatus; statusMessage?: string }) {
    record.status = next.status
    if (next.statusMessage === undefined) delete record.statusMessage
    else record.statusMessage = next.statusMessage
    record.lastUpdatedAt = now()
    this.#options.onChange?.(record)
    for (const listener of this.#listeners) listener(record)
  }

  #sleep(signal: AbortSignal, ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(new TaskCancelled())
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort)
        resolve()
      }, ms)
      const onAbort = () => {
        clearTimeout(timer)
        reject(new TaskCancelled())
      }
      signal.addEventListener("abort", onAbort, { once: true })
    })
  }

  async #ask(
    record: TaskRecord,
    answers: Map<string, Record<string, unknown>>,
    entry: () => Entry | undefined,
    signal: AbortSignal,
    requests: Readonly<Record<string, InputRequest>>
  ): Promise<Record<string, Record<string, unknown>>> {
    if (signal.aborted) throw new TaskCancelled()
    const keys = Object.keys(requests)
    for (const key of keys) record.pending.set(key, requests[key]!)
    this.#transition(record, { status: "input_required", statusMessage: "Waiting for the client's answers." })
    const current = entry()
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(new TaskCancelled())
      signal.addEventListener("abort", onAbort, { once: true })
      const check = () => {
        if (keys.every((k) => answers.has(k))) {
          signal.removeEventListener("abort", onAbort)
          if (current !== undefined) current.wake = undefined
          resolve()
        }
      }
      if (current !== undefined) current.wake = check
      check()
    })
    this.#transition(record, { status: "working" })
    return Object.fromEntries(keys.map((k) => [k, answers.get(k)!]))
  }
}
