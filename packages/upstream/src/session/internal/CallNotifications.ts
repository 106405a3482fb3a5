/**
 * What a session does to a call's own notifications on their way to its caller: the progress token
 * the call went upstream with (one of the session's, since two callers may pick the same) is the
 * caller's again, and a log message no call could be given goes to the daemon's log.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Meta from "@mcpx-fx/protocol/Meta"
import * as Effect from "effect/Effect"

/** `params` with its `_meta.progressToken` replaced by `token`. */
export const withProgressToken = (params: JsonObject, token: JsonRpc.RequestId): JsonObject => ({
  ...params,
  _meta: { ...Meta.metaOf(params), [Meta.ProgressTokenKey]: token }
})

/**
 * A notification of a call as its caller sent the token: progress names it at top level, a log
 * message tied to the call by it in `_meta`.
 */
export const progressFor = (m: JsonRpc.Notification, callerToken: JsonObject[string]): JsonRpc.Notification => {
  const params = m.params
  if (params === undefined) return m
  if (m.method === Method.NotificationsProgress) return { ...m, params: { ...params, progressToken: callerToken } }
  const meta = Meta.metaOf(params)
  return meta?.[Meta.ProgressTokenKey] === undefined ? m : { ...m, params: { ...params, _meta: { ...meta, [Meta.ProgressTokenKey]: callerToken } } }
}

/** An upstream's log message that no call was tied to, for the daemon's own log at its level. */
export const logUntied = (name: string, m: JsonRpc.Notification): Effect.Effect<void> => {
  const level = typeof m.params?.level === "string" ? m.params.level : "info"
  const logger = typeof m.params?.logger === "string" ? ` ${m.params.logger}` : ""
  const data = m.params?.data
  const text = `${name}${logger}: ${typeof data === "string" ? data : JSON.stringify(data)}`
  switch (level) {
    case "debug":
      return Effect.logDebug(text)
    case "info":
    case "notice":
      return Effect.logInfo(text)
    case "warning":
      return Effect.logWarning(text)
    default:
      return Effect.logError(text)
  }
}
