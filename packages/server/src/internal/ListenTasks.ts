/**
 * The tasks extension's part of a `subscriptions/listen` (Subscriptions.ts): the caller's own tasks
 * it named in `taskIds`, followed with `notifications/tasks` from the rows HostTasks publishes as
 * it writes them, each the detailed task as `tasks/get` would return it then. 2025-11-25's pushes
 * are TaskNotices.ts'.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Method from "@mcpx-fx/protocol/Method"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type { Caller } from "../Backend.js"
import type { HostTasks } from "../HostTasks.js"
import type { TaskRow } from "../TaskStore.js"
import * as TaskShapes from "./TaskShapes.js"

/** The extension's push of a task as `tasks/get` answered it, without that method's `resultType`. */
export const ofGet = (task: JsonObject): JsonRpc.Notification => {
  const { resultType: _, ...detailed } = task
  return JsonRpc.notification(Method.NotificationsTasks, detailed)
}

/** The tasks a listen follows, and what it is told first. */
export interface ListenTasks {
  /** Of the ids it named, those of the caller's own tasks: the acknowledgement's `taskIds`. */
  readonly taskIds: ReadonlyArray<string>
  /** Each followed task as it is now, sent right after the acknowledgement. */
  readonly current: ReadonlyArray<JsonRpc.Notification>
  /** The rows written from before `current` was read on: those of `taskIds` are pushed. */
  readonly next: Queue.Dequeue<TaskRow>
}

/**
 * Follows the tasks a listen named. A task the caller does not own, or that does not exist, is
 * left out (the client compares the acknowledgement with what it asked for). Each followed task's
 * state comes first, so one that ended before the listen is not waited for in vain; the rows are
 * subscribed to before it is read, so nothing written after it is missed.
 */
export const follow = (
  tasks: HostTasks["Type"],
  caller: Caller,
  taskIds: ReadonlyArray<string>
): Effect.Effect<ListenTasks, never, Scope.Scope> =>
  Effect.gen(function*() {
    const next = yield* tasks.statuses
    const followed: Array<string> = []
    const now: Array<JsonRpc.Notification> = []
    for (const taskId of new Set(taskIds)) {
      const task = yield* Effect.option(tasks.get(caller, taskId))
      if (Option.isNone(task)) continue
      followed.push(taskId)
      now.push(ofGet(task.value))
    }
    return { taskIds: followed, current: now, next }
  })

/** The extension's push of a row written to a task: the detailed task, as `tasks/get` would answer it now. */
export const notification = (row: TaskRow): JsonRpc.Notification => JsonRpc.notification(Method.NotificationsTasks, TaskShapes.detailed(row))
