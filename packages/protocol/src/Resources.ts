/**
 * Resources: `resources/list`, `resources/templates/list`, `resources/read`, and the legacy
 * `resources/subscribe`/`unsubscribe` (modern clients subscribe through `subscriptions/listen`).
 * A missing resource is `-32002` up to 2025-11-25 and `-32602` in 2026-07-28.
 */
import * as Schema from "effect/Schema"
import { Annotations, ResourceContents } from "./Content.js"
import { Icon } from "./Implementation.js"
import { retryFields } from "./InputRequired.js"
import { JsonObject, open, optionalKey } from "./Json.js"
import { Cursor, resultFields } from "./Result.js"

const described = {
  name: Schema.String,
  title: optionalKey(Schema.String),
  description: optionalKey(Schema.String),
  mimeType: optionalKey(Schema.String),
  annotations: optionalKey(Annotations),
  icons: optionalKey(Schema.Array(Icon)),
  _meta: optionalKey(JsonObject)
}

/** A readable resource. */
export const Resource = open({ uri: Schema.String, size: optionalKey(Schema.Number), ...described })
/** A readable resource. */
export type Resource = typeof Resource.Type

/** A family of resources addressed by an RFC 6570 URI template. */
export const ResourceTemplate = open({ uriTemplate: Schema.String, ...described })
/** A resource template. */
export type ResourceTemplate = typeof ResourceTemplate.Type

/** Result of `resources/list`. */
export const ListResourcesResult = open({ resources: Schema.Array(Resource), nextCursor: optionalKey(Cursor), ...resultFields })
/** Result of `resources/list`. */
export type ListResourcesResult = typeof ListResourcesResult.Type

/** Result of `resources/templates/list`. */
export const ListResourceTemplatesResult = open({
  resourceTemplates: Schema.Array(ResourceTemplate),
  nextCursor: optionalKey(Cursor),
  ...resultFields
})
/** Result of `resources/templates/list`. */
export type ListResourceTemplatesResult = typeof ListResourceTemplatesResult.Type

/** Params of `resources/read` (MRTR retries allowed). */
export const ReadResourceParams = open({ uri: Schema.String, ...retryFields, _meta: optionalKey(JsonObject) })
/** Params of `resources/read`. */
export type ReadResourceParams = typeof ReadResourceParams.Type

/** Result of `resources/read`. */
export const ReadResourceResult = open({ contents: Schema.Array(ResourceContents), ...resultFields })
/** Result of `resources/read`. */
export type ReadResourceResult = typeof ReadResourceResult.Type

/** Params of the legacy `resources/subscribe` and `resources/unsubscribe`. */
export const SubscribeParams = open({ uri: Schema.String, _meta: optionalKey(JsonObject) })
/** Params of `resources/subscribe` and `resources/unsubscribe`. */
export type SubscribeParams = typeof SubscribeParams.Type

/** Params of `notifications/resources/updated`. */
export const ResourceUpdatedParams = open({ uri: Schema.String, _meta: optionalKey(JsonObject) })
/** Params of `notifications/resources/updated`. */
export type ResourceUpdatedParams = typeof ResourceUpdatedParams.Type
