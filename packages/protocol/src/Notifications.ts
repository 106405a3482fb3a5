/**
 * Params of the notifications not owned by a feature module: cancellation, progress, log messages,
 * the list_changed family and `initialized`. (Resource updates live in Resources, subscription
 * acknowledgements in Subscriptions, task pushes in Tasks and TasksExtension.)
 */
import * as Schema from "effect/Schema"
import { JsonObject, open, optionalKey } from "./Json.js"
import * as JsonRpc from "./JsonRpc.js"
import { LoggingLevel, ProgressToken } from "./Meta.js"
import * as Method from "./Method.js"

/**
 * Params of `notifications/cancelled`. `requestId` is optional only in 2025-11-25 (where tasks are
 * cancelled otherwise); every other revision requires it.
 */
export const CancelledParams = open({
  requestId: optionalKey(JsonRpc.RequestId),
  reason: optionalKey(Schema.String),
  _meta: optionalKey(JsonObject)
})
/** Params of `notifications/cancelled`. */
export type CancelledParams = typeof CancelledParams.Type

/** Params of `notifications/progress` (`message` since 2025-03-26). */
export const ProgressParams = open({
  progressToken: ProgressToken,
  progress: Schema.Number,
  total: optionalKey(Schema.Number),
  message: optionalKey(Schema.String),
  _meta: optionalKey(JsonObject)
})
/** Params of `notifications/progress`. */
export type ProgressParams = typeof ProgressParams.Type

/** Params of `notifications/message`. */
export const LoggingMessageParams = open({
  level: LoggingLevel,
  logger: optionalKey(Schema.String),
  data: Schema.Unknown,
  _meta: optionalKey(JsonObject)
})
/** Params of `notifications/message`. */
export type LoggingMessageParams = typeof LoggingMessageParams.Type

/** Params of the list_changed notifications, `initialized` and roots list_changed: only `_meta`. */
export const EmptyNotificationParams = open({ _meta: optionalKey(JsonObject) })
/** Params with nothing but `_meta`. */
export type EmptyNotificationParams = typeof EmptyNotificationParams.Type

/** Builds `notifications/cancelled`. */
export const cancelled = (requestId: JsonRpc.RequestId, reason?: string): JsonRpc.Notification =>
  JsonRpc.notification(Method.NotificationsCancelled, reason === undefined ? { requestId } : { requestId, reason })

/** Builds `notifications/progress`. */
export const progress = (params: ProgressParams): JsonRpc.Notification => JsonRpc.notification(Method.NotificationsProgress, params)

/** Builds `notifications/initialized`. */
export const initialized: JsonRpc.Notification = JsonRpc.notification(Method.Initialized)

/** The list_changed notification methods. */
export const ListChangedMethods: ReadonlyArray<string> = [
  Method.NotificationsToolsListChanged,
  Method.NotificationsPromptsListChanged,
  Method.NotificationsResourcesListChanged
]
