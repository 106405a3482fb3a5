/**
 * Task changes pushed to the hosts that asked to be told rather than poll, from the rows HostTasks
 * publishes as it writes them (`statuses`):
 *
 * - 2025-11-25 (core tasks): `notifications/tasks/status` on a legacy connection (stdio, or a
 *   legacy HTTP session's GET stream), the task as that era's `tasks/get` renders it. A host that
 *   negotiated another revision was never declared `capabilities.tasks`, and is told nothing.
 * - 2026-07-28 (extension): `notifications/tasks` on a `subscriptions/listen` that named the task
 *   in `taskIds`, the detailed task as `tasks/get` would return it then (ListenTasks.ts).
 *
 * Either way a host hears only of its own callers' tasks (HostTasks.ownerOf), as `tasks/get`
 * would let it read them. Only what this process writes is pushed: a task another instance of a
 * fleet runs is still there to poll.
 */
import * as Capabilities from "@mcpx-fx/protocol/Capabilities"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Method from "@mcpx-fx/protocol/Method"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import type { HostTasks } from "../HostTasks.js"
import type { TaskRow } from "../TaskStore.js"
import type { Connection } from "./ServerConnection.js"
import * as TaskShapes from "./TaskShapes.js"

/** The one revision with core tasks. */
const TasksRevision = "2025-11-25"

/** 2025-11-25's push of a task's state. */
export const statusNotification = (row: TaskRow): JsonRpc.Notification => JsonRpc.notification(Method.NotificationsTasksStatus, TaskShapes.legacy(row))

/** What the Server keeps of the 2025-11-25 pushes. */
export interface LegacyFeed {
  /**
   * Makes `owner`'s tasks this connection's to hear of: one of its callers made a task under that
   * identity (the connection's own id, or the session identity a request named). Only these are
   * pushed: another connection presenting the same identity may read them, but never asked for them.
   */
  readonly claim: (connection: Connection, owner: string) => Effect.Effect<void>
  /**
   * Sends the connection `notifications/tasks/status` for its tasks' changes, once it is
   * initialized under 2025-11-25, for as long as the current scope lasts. Forwarding runs in a
   * fiber of that scope; it waits for a store still being opened (HostTasksWhenReady).
   */
  readonly follow: (connection: Connection, send: (n: JsonRpc.Notification) => Effect.Effect<void>) => Effect.Effect<void, never, Scope.Scope>
}

/** The 2025-11-25 pushes over `tasks`, when the Server's `capabilities` declare core tasks. */
export const makeLegacyFeed = (tasks: HostTasks["Type"], capabilities: JsonObject): LegacyFeed => {
  const declared = Capabilities.serverCapabilitiesFor(TasksRevision, capabilities).tasks !== undefined
  // Keyed by the connection itself, so an ended one takes its claims with it.
  const owners = new WeakMap<Connection, Set<string>>()

  const claim = (connection: Connection, owner: string) =>
    Effect.sync(() => {
      const held = owners.get(connection)
      if (held === undefined) owners.set(connection, new Set([owner]))
      else held.add(owner)
    })

  const wanted = (connection: Connection, row: TaskRow): Effect.Effect<boolean> =>
    owners.get(connection)?.has(row.owner) !== true
      ? Effect.succeed(false)
      : Effect.map(Ref.get(connection.negotiated), (n) => Option.isSome(n) && n.value.initialized && n.value.revision === TasksRevision)

  const follow = (connection: Connection, send: (n: JsonRpc.Notification) => Effect.Effect<void>) =>
    !declared ? Effect.void : Effect.gen(function*() {
      const queue = yield* tasks.statuses
      yield* Queue.take(queue).pipe(
        Effect.flatMap((row) => Effect.flatMap(wanted(connection, row), (ok) => (ok ? send(statusNotification(row)) : Effect.void))),
        Effect.forever,
        Effect.forkScoped
      )
    })

  return { claim, follow }
}
