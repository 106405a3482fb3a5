/**
 * `subscriptions/listen` (2026-07-28): the one way a modern client receives change notifications.
 *
 * The client opts into notification types; the server's first message tagged with the listen
 * request's id is `notifications/subscriptions/acknowledged` naming what it will honour; every
 * notification on the stream carries `_meta["io.modelcontextprotocol/subscriptionId"]` = that id;
 * a graceful end is a result carrying the same tag.
 */
import * as Schema from "effect/Schema"
import { isJsonObject, JsonObject, open, optionalKey } from "./Json.js"
import * as JsonRpc from "./JsonRpc.js"
import { SubscriptionIdKey } from "./Meta.js"
import * as Method from "./Method.js"
import { resultFields } from "./Result.js"

/** The notification types a listen request opts into (`taskIds` from the tasks extension). */
export const SubscriptionFilter = open({
  toolsListChanged: optionalKey(Schema.Boolean),
  promptsListChanged: optionalKey(Schema.Boolean),
  resourcesListChanged: optionalKey(Schema.Boolean),
  resourceSubscriptions: optionalKey(Schema.Array(Schema.String)),
  taskIds: optionalKey(Schema.Array(Schema.String))
})
/** The notification types a listen request opts into. */
export type SubscriptionFilter = typeof SubscriptionFilter.Type

/** Params of `subscriptions/listen` (the `_meta` is the modern request envelope, see Meta). */
export const ListenParams = open({ notifications: SubscriptionFilter, _meta: optionalKey(JsonObject) })
/** Params of `subscriptions/listen`. */
export type ListenParams = typeof ListenParams.Type

const tagged = open({ [SubscriptionIdKey]: JsonRpc.RequestId })

/** Params of `notifications/subscriptions/acknowledged`: the subset the server honours. */
export const AcknowledgedParams = open({ notifications: SubscriptionFilter, _meta: tagged })
/** Params of `notifications/subscriptions/acknowledged`. */
export type AcknowledgedParams = typeof AcknowledgedParams.Type

/** The result that ends a subscription gracefully. */
export const ListenResult = open({ ...resultFields, _meta: tagged })
/** The result that ends a subscription gracefully. */
export type ListenResult = typeof ListenResult.Type

/** The acknowledgement that must open a listen stream. */
export const acknowledged = (listenId: JsonRpc.RequestId, honoured: SubscriptionFilter): JsonRpc.Notification =>
  JsonRpc.notification(Method.NotificationsSubscriptionsAcknowledged, {
    notifications: honoured,
    _meta: { [SubscriptionIdKey]: listenId }
  })

/** Tags a notification for delivery on the listen stream `listenId` (other `_meta` keys kept). */
export const tag = (n: JsonRpc.Notification, listenId: JsonRpc.RequestId): JsonRpc.Notification => {
  const params = n.params ?? {}
  const meta = isJsonObject(params._meta) ? params._meta : {}
  return JsonRpc.notification(n.method, { ...params, _meta: { ...meta, [SubscriptionIdKey]: listenId } })
}

/** The listen id a notification is tagged with, if any. */
export const subscriptionIdOf = (params: unknown): JsonRpc.RequestId | undefined => {
  const meta = isJsonObject(params) && isJsonObject(params._meta) ? params._meta : undefined
  const id = meta?.[SubscriptionIdKey]
  return typeof id === "string" || typeof id === "number" ? id : undefined
}

/** The response that closes a listen stream gracefully. */
export const closed = (listenId: JsonRpc.RequestId): JsonRpc.SuccessResponse =>
  JsonRpc.success(listenId, { resultType: "complete", _meta: { [SubscriptionIdKey]: listenId } })

/** Which notification method a filter field opts into (for filtering a stream). */
export const wants = (filter: SubscriptionFilter, method: string, params?: JsonObject): boolean => {
  switch (method) {
    case Method.NotificationsToolsListChanged:
      return filter.toolsListChanged === true
    case Method.NotificationsPromptsListChanged:
      return filter.promptsListChanged === true
    case Method.NotificationsResourcesListChanged:
      return filter.resourcesListChanged === true
    case Method.NotificationsResourcesUpdated:
      return typeof params?.uri === "string" && (filter.resourceSubscriptions ?? []).includes(params.uri)
    case Method.NotificationsTasks:
      return typeof params?.taskId === "string" && (filter.taskIds ?? []).includes(params.taskId)
    default:
      return false
  }
}
