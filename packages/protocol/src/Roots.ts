/**
 * `roots/list`: the client's filesystem roots. A server→client request in the legacy era, an
 * input request inside `input_required` in the modern one (deprecated there, still functional).
 */
import * as Schema from "effect/Schema"
import { JsonObject, open, optionalKey } from "./Json.js"

/** One root (a `file://` URI). */
export const Root = open({ uri: Schema.String, name: optionalKey(Schema.String), _meta: optionalKey(JsonObject) })
/** One root. */
export type Root = typeof Root.Type

/** Params of `roots/list`. */
export const ListRootsParams = open({ _meta: optionalKey(JsonObject) })
/** Params of `roots/list`. */
export type ListRootsParams = typeof ListRootsParams.Type

/** Result of `roots/list`. */
export const ListRootsResult = open({ roots: Schema.Array(Root), _meta: optionalKey(JsonObject) })
/** Result of `roots/list`. */
export type ListRootsResult = typeof ListRootsResult.Type
