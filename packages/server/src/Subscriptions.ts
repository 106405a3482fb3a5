/**
 * Change delivery to hosts, transport-free: which Backend changes a host is told about, and how.
 *
 * - Legacy (2024-11-05 … 2025-11-25): a host is told every list_changed the Server declared
 *   `listChanged` for (declaring it is the whole opt-in), and `notifications/resources/updated`
 *   for the URIs it subscribed to with `resources/subscribe` on this connection or session.
 *   A subscription is held in the Backend (`watchResource`) until `resources/unsubscribe` or
 *   the end of the connection.
 * - Modern (2026-07-28): `subscriptions/listen` is a request that stays open. Its first message is
 *   the acknowledgement naming what is honoured, every later one is tagged with the listen id, and
 *   it ends when the transport interrupts it (stdio `notifications/cancelled`, a closed HTTP stream).
 *   With the tasks extension declared, it also follows the caller's own tasks it names in
 *   `taskIds` (`notifications/tasks`, internal/ListenTasks.ts).
 *
 * The transport supplies a `Channel`: how to send a notification on the request's own stream, and
 * the legacy connection's resource watches. The same code serves stdio and Streamable HTTP.
 */
import { describeParseError, isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Method from "@mcpx-fx/protocol/Method"
import * as ProtocolSubscriptions from "@mcpx-fx/protocol/Subscriptions"
import * as TasksExtension from "@mcpx-fx/protocol/TasksExtension"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { type Backend, type BackendError, type Caller, CapabilityRequired, type Change } from "./Backend.js"
import type { HostTasks } from "./HostTasks.js"
import * as ListenTasks from "./internal/ListenTasks.js"

type BackendService = typeof Backend.Service

/** A subscription request the Server turns into a JSON-RPC error (the codes are chosen there). */
export class SubscriptionRefused extends Data.TaggedError("SubscriptionRefused")<{
  readonly reason: "invalid-params" | "not-served"
  readonly detail: string
}> {}

/** A legacy connection's (stdio) or session's (HTTP) resource subscriptions, each held in its own scope. */
export interface Watches {
  readonly held: Map<string, Scope.CloseableScope>
  /** Closing it ends every subscription (the connection or session ended). */
  readonly scope: Scope.Scope
}

/** Fresh watches that all end with the current scope. */
export const makeWatches: Effect.Effect<Watches, never, Scope.Scope> = Effect.map(Effect.scope, (scope) => ({
  held: new Map(),
  scope
}))

/** What a transport lends the Server for subscription requests. */
export interface Channel {
  /** Sends a notification on this request's own stream (stdio: stdout; HTTP: the POST's SSE stream). */
  readonly notify?: (notification: JsonRpc.Notification) => Effect.Effect<void>
  /** The legacy connection's or session's resource subscriptions. */
  readonly watches?: Watches
}

/** The notification that tells a host about a change. */
export const notificationOf = (change: Change): JsonRpc.Notification => {
  switch (change._tag) {
    case "ToolsListChanged":
      return JsonRpc.notification(Method.NotificationsToolsListChanged)
    case "PromptsListChanged":
      return JsonRpc.notification(Method.NotificationsPromptsListChanged)
    case "ResourcesListChanged":
      return JsonRpc.notification(Method.NotificationsResourcesListChanged)
    case "ResourceUpdated":
      return JsonRpc.notification(Method.NotificationsResourcesUpdated, { uri: change.uri })
  }
}

const flag = (capabilities: JsonObject, feature: string, key: string): boolean => {
  const f = capabilities[feature]
  return isJsonObject(f) && f[key] === true
}

/** Whether the Server declares `listChanged` for the list a change is about. */
const declaresListChanged = (capabilities: JsonObject, change: Change): boolean => {
  switch (change._tag) {
    case "ToolsListChanged":
      return flag(capabilities, "tools", "listChanged")
    case "PromptsListChanged":
      return flag(capabilities, "prompts", "listChanged")
    case "ResourcesListChanged":
      return flag(capabilities, "resources", "listChanged")
    case "ResourceUpdated":
      return false
  }
}

/**
 * What a legacy host is sent for a change, if anything: a list_changed it was declared, or an
 * update of a resource it subscribed to.
 */
export const forLegacy = (capabilities: JsonObject, watches: Watches | undefined, change: Change): JsonRpc.Notification | undefined =>
  change._tag === "ResourceUpdated"
    ? watches?.held.has(change.uri) === true ? notificationOf(change) : undefined
    : declaresListChanged(capabilities, change)
    ? notificationOf(change)
    : undefined

/**
 * Forwards changes to a legacy connection for as long as it lasts. The subscription is in place
 * when this returns; forwarding runs in a fiber of the current scope.
 */
export const forwardToLegacy = (
  backend: BackendService,
  capabilities: JsonObject,
  watches: Watches | undefined,
  ready: Effect.Effect<boolean>,
  send: (notification: JsonRpc.Notification) => Effect.Effect<void>
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    if (backend.changes === undefined) return
    const queue = yield* backend.changes
    yield* Queue.take(queue).pipe(
      Effect.flatMap((change) =>
        Effect.flatMap(ready, (open) => {
          const n = open ? forLegacy(capabilities, watches, change) : undefined
          return n === undefined ? Effect.void : send(n)
        })
      ),
      Effect.forever,
      Effect.forkScoped
    )
  })

/**
 * The part of a listen filter the Server honours: the list_changed kinds it declares, resource
 * subscriptions when it declares `resources.subscribe`, and task ids when it declares the tasks
 * extension and so did the request (`tasksDeclared`).
 */
export const honoured = (
  capabilities: JsonObject,
  filter: ProtocolSubscriptions.SubscriptionFilter,
  tasksDeclared = false
): ProtocolSubscriptions.SubscriptionFilter => ({
  ...(filter.toolsListChanged === true && flag(capabilities, "tools", "listChanged") ? { toolsListChanged: true } : {}),
  ...(filter.promptsListChanged === true && flag(capabilities, "prompts", "listChanged") ? { promptsListChanged: true } : {}),
  ...(filter.resourcesListChanged === true && flag(capabilities, "resources", "listChanged") ? { resourcesListChanged: true } : {}),
  ...(filter.resourceSubscriptions !== undefined && flag(capabilities, "resources", "subscribe")
    ? { resourceSubscriptions: filter.resourceSubscriptions }
    : {}),
  ...(filter.taskIds !== undefined && tasksDeclared && TasksExtension.declared(capabilities) ? { taskIds: filter.taskIds } : {})
})

const decode = <A, I>(schema: Schema.Schema<A, I>, params: JsonObject): Effect.Effect<A, SubscriptionRefused> =>
  Either.match(Schema.decodeUnknownEither(schema)(params), {
    onLeft: (e) => Effect.fail(new SubscriptionRefused({ reason: "invalid-params", detail: describeParseError(e) })),
    onRight: Effect.succeed
  })

/**
 * Serves a `subscriptions/listen` until it is interrupted: the changes subscription, the resource
 * watches and the task rows are in place before the acknowledgement goes out, so nothing that
 * happens after it is missed. A resource the Backend cannot watch, or a task that is not the
 * caller's, is left out of the acknowledgement (the client compares it with what it asked for);
 * each task followed is sent as it is now right after it. Task ids from a request that did not
 * declare the tasks extension are -32021, as the extension has it. Never completes on its own: a
 * Backend's changes never end.
 */
export const listen = (
  backend: BackendService,
  tasks: HostTasks["Type"],
  capabilities: JsonObject,
  caller: Caller,
  listenId: JsonRpc.RequestId,
  params: JsonObject,
  channel: Channel | undefined
): Effect.Effect<JsonObject, SubscriptionRefused | CapabilityRequired> =>
  Effect.scoped(Effect.gen(function*() {
    const notify = channel?.notify
    if (notify === undefined) {
      return yield* new SubscriptionRefused({ reason: "not-served", detail: "this transport cannot keep a subscription open" })
    }
    const request = yield* decode(ProtocolSubscriptions.ListenParams, params)
    const tasksDeclared = TasksExtension.declared(caller.clientCapabilities)
    if (request.notifications.taskIds !== undefined && !tasksDeclared && TasksExtension.declared(capabilities)) {
      return yield* new CapabilityRequired({ requiredCapabilities: TasksExtension.requiredCapabilities })
    }
    const asked = honoured(capabilities, request.notifications, tasksDeclared)
    const queue = backend.changes === undefined ? undefined : yield* backend.changes
    const watched: Array<string> = []
    for (const uri of asked.resourceSubscriptions ?? []) {
      const ok = backend.watchResource === undefined ? false : yield* Effect.isSuccess(backend.watchResource(caller, uri))
      if (ok) watched.push(uri)
    }
    const followed = asked.taskIds === undefined ? undefined : yield* ListenTasks.follow(tasks, caller, asked.taskIds)
    const { resourceSubscriptions: _, taskIds: _ids, ...lists } = asked
    const filter: ProtocolSubscriptions.SubscriptionFilter = {
      ...lists,
      ...(asked.resourceSubscriptions === undefined ? {} : { resourceSubscriptions: watched }),
      ...(followed === undefined ? {} : { taskIds: followed.taskIds })
    }
    yield* notify(ProtocolSubscriptions.acknowledged(listenId, filter))
    if (followed !== undefined && followed.taskIds.length > 0) {
      for (const n of followed.current) yield* notify(ProtocolSubscriptions.tag(n, listenId))
      yield* Queue.take(followed.next).pipe(
        // Only the caller's own tasks were acknowledged, which keeps everyone else's out.
        Effect.flatMap((row) =>
          followed.taskIds.includes(row.taskId) ? notify(ProtocolSubscriptions.tag(ListenTasks.notification(row), listenId)) : Effect.void
        ),
        Effect.forever,
        Effect.forkScoped
      )
    }
    if (queue === undefined) return yield* Effect.never
    return yield* Queue.take(queue).pipe(
      Effect.flatMap((change) => {
        const n = notificationOf(change)
        return ProtocolSubscriptions.wants(filter, n.method, n.params)
          ? notify(ProtocolSubscriptions.tag(n, listenId))
          : Effect.void
      }),
      Effect.forever
    )
  }))

const UriParams = Schema.Struct({ uri: Schema.String })

/**
 * Serves a legacy `resources/subscribe` or `resources/unsubscribe`. Subscribing twice to one URI
 * is one subscription; unsubscribing from one never made succeeds (the wanted state holds).
 */
export const resourceRequest = (
  backend: BackendService,
  capabilities: JsonObject,
  caller: Caller,
  method: string,
  params: JsonObject,
  channel: Channel | undefined
): Effect.Effect<JsonObject, SubscriptionRefused | BackendError> =>
  Effect.gen(function*() {
    const watches = channel?.watches
    const watch = backend.watchResource
    if (!flag(capabilities, "resources", "subscribe") || watches === undefined || watch === undefined) {
      return yield* new SubscriptionRefused({ reason: "not-served", detail: `${method}: mcpx-fx does not declare resources.subscribe here` })
    }
    const { uri } = yield* decode(UriParams, params)
    const held = watches.held.get(uri)
    if (method === Method.ResourcesUnsubscribe) {
      if (held !== undefined) {
        watches.held.delete(uri)
        yield* Scope.close(held, Exit.void)
      }
      return {}
    }
    if (held !== undefined) return {}
    const scope = yield* Scope.fork(watches.scope, ExecutionStrategy.sequential)
    yield* Scope.extend(watch(caller, uri), scope).pipe(
      Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Scope.close(scope, exit)))
    )
    // Two subscribes of one URI may have raced; the first one kept is the subscription.
    if (watches.held.has(uri)) yield* Scope.close(scope, Exit.void)
    else watches.held.set(uri, scope)
    return {}
  })
