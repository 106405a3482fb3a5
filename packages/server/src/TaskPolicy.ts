/** How HostTasks makes and keeps tasks: the `tasks.*` settings, in milliseconds and counts. */

/** How tasks are made and kept. */
export interface TaskPolicy {
  /** A call that has not answered within this becomes a task (for a host that declared tasks). */
  readonly afterMs: number
  /** How long a task stays readable after it was created. */
  readonly ttlMs: number
  /** How often a host is told to poll. */
  readonly pollIntervalMs: number
  /** Tasks not yet finished, per caller and in all. */
  readonly perCaller: number
  readonly total: number
  /** How long a process's lease on its running tasks lasts without renewal. */
  readonly leaseMs: number
}

/** The defaults of the `tasks.*` settings. */
export const DefaultPolicy: TaskPolicy = {
  afterMs: 2_000,
  ttlMs: 3_600_000,
  pollIntervalMs: 1_000,
  perCaller: 64,
  total: 1_024,
  leaseMs: 30_000
}
