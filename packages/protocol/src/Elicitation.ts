/**
 * `elicitation/create`: asking the user. Form mode (a flat schema of primitive fields) since
 * 2025-06-18; URL mode (send the user to a page) since 2025-11-25, where it carries an
 * `elicitationId` and finishes with `notifications/elicitation/complete`. 2026-07-28 keeps URL mode
 * without the id or the notification.
 */
import * as Schema from "effect/Schema"
import { JsonObject, open, optionalKey } from "./Json.js"

/** The restricted JSON Schema a form asks for: top-level primitive properties only. */
export const RequestedSchema = open({
  $schema: optionalKey(Schema.String),
  type: Schema.Literal("object"),
  properties: Schema.Record({ key: Schema.String, value: JsonObject }),
  required: optionalKey(Schema.Array(Schema.String))
})
/** The schema a form asks for. */
export type RequestedSchema = typeof RequestedSchema.Type

/** Form-mode params; `mode` may be omitted (form is the default). */
export const ElicitFormParams = open({
  mode: optionalKey(Schema.Literal("form")),
  message: Schema.String,
  requestedSchema: RequestedSchema,
  _meta: optionalKey(JsonObject)
})
/** Form-mode params. */
export type ElicitFormParams = typeof ElicitFormParams.Type

/** URL-mode params (`elicitationId` only in 2025-11-25). */
export const ElicitUrlParams = open({
  mode: Schema.Literal("url"),
  message: Schema.String,
  url: Schema.String,
  elicitationId: optionalKey(Schema.String),
  _meta: optionalKey(JsonObject)
})
/** URL-mode params. */
export type ElicitUrlParams = typeof ElicitUrlParams.Type

/** Params of `elicitation/create`, either mode. */
export const ElicitParams = Schema.Union(ElicitUrlParams, ElicitFormParams)
/** Params of `elicitation/create`. */
export type ElicitParams = typeof ElicitParams.Type

/** What the user did. */
export const ElicitAction = Schema.Literal("accept", "decline", "cancel")
/** What the user did. */
export type ElicitAction = typeof ElicitAction.Type

/** Result of `elicitation/create`; `content` only for an accepted form. */
export const ElicitResult = open({
  action: ElicitAction,
  content: optionalKey(
    Schema.Record({
      key: Schema.String,
      value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Array(Schema.String))
    })
  ),
  _meta: optionalKey(JsonObject)
})
/** Result of `elicitation/create`. */
export type ElicitResult = typeof ElicitResult.Type

/** Params of `notifications/elicitation/complete` (2025-11-25 only). */
export const ElicitationCompleteParams = open({ elicitationId: Schema.String, _meta: optionalKey(JsonObject) })
/** Params of `notifications/elicitation/complete`. */
export type ElicitationCompleteParams = typeof ElicitationCompleteParams.Type

/** The mode of elicitation params (absent means form). */
export const modeOf = (params: ElicitParams): "form" | "url" => (params.mode === "url" ? "url" : "form")

/** The answer a gateway gives on behalf of a client that cannot be asked. */
export const cancelled: ElicitResult = { action: "cancel" }
