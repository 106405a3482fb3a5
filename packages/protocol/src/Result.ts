/**
 * Fields every result may carry, per era.
 *
 * Legacy results are open objects with an optional `_meta`. Modern results add `resultType`
 * (absent means "complete": that is how a legacy server's answer reads) and, on cacheable results,
 * `ttlMs` and `cacheScope`. The schemas here accept both eras; Shape produces the modern form.
 */
import * as Schema from "effect/Schema"
import { JsonObject, open, optionalKey } from "./Json.js"
import { ResultMeta } from "./Meta.js"

/** `resultType` values this package understands; extensions may define more. */
export const KnownResultType = Schema.Literal("complete", "input_required", "task")
/** A `resultType` this package understands. */
export type KnownResultType = typeof KnownResultType.Type

/** Who may reuse a cached result: anyone, or only the same authorisation context. */
export const CacheScope = Schema.Literal("public", "private")
/** Who may reuse a cached result. */
export type CacheScope = typeof CacheScope.Type

/** The common result fields, to spread into result schemas. All optional so both eras decode. */
export const resultFields = {
  _meta: optionalKey(ResultMeta),
  resultType: optionalKey(Schema.String),
  // A negative ttlMs is read as 0 (Shape), not rejected: the spec tells clients to tolerate it.
  ttlMs: optionalKey(Schema.Number),
  cacheScope: optionalKey(CacheScope)
}

/** A result with no defined payload (e.g. `ping`, `tasks/cancel`): common fields, anything else kept. */
export const EmptyResult = open(resultFields)
/** A result with no defined payload. */
export type EmptyResult = typeof EmptyResult.Type

/** The pagination cursor of list requests and results. */
export const Cursor = Schema.String

/** Params of a paginated list request. */
export const PaginatedParams = open({ cursor: optionalKey(Cursor), _meta: optionalKey(JsonObject) })
/** Params of a paginated list request. */
export type PaginatedParams = typeof PaginatedParams.Type
