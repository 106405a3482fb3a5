/**
 * HostTasks still being built (its store opened): each request waits for it, and a task request
 * fails with the build's error if it failed. `serve` answers a host's `initialize` before the store
 * is open (as BackendWhenReady does for the gateway).
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type { HostTasks } from "./HostTasks.js"
import type { TaskRow, TaskStoreError } from "./TaskStore.js"

export const whenReady = (ready: Effect.Effect<HostTasks["Type"], TaskStoreError>): HostTasks["Type"] => ({
  // A store that could not open makes no call fail: a modern host's call answers in its request,
  // as for a host without tasks. A 2025-11-25 host asked for a task, and is told why there is none.
  call: (caller, method, immediate, round, ttlMs, abandon) =>
    Effect.matchEffect(ready, {
      onFailure: (e) => (caller.era === "modern" ? round(caller, caller.retry) : Effect.fail(e)),
      onSuccess: (t) => t.call(caller, method, immediate, round, ttlMs, abandon)
    }),
  get: (caller, taskId) => Effect.flatMap(ready, (t) => t.get(caller, taskId)),
  update: (caller, taskId, inputResponses) => Effect.flatMap(ready, (t) => t.update(caller, taskId, inputResponses)),
  cancel: (caller, taskId) => Effect.flatMap(ready, (t) => t.cancel(caller, taskId)),
  result: (caller, taskId) => Effect.flatMap(ready, (t) => t.result(caller, taskId)),
  list: (caller, cursor) => Effect.flatMap(ready, (t) => t.list(caller, cursor)),
  // Without a store there are no tasks, so nothing is ever published: a queue nobody fills.
  statuses: Effect.matchEffect(ready, { onFailure: () => Queue.unbounded<TaskRow>(), onSuccess: (t) => t.statuses })
})
