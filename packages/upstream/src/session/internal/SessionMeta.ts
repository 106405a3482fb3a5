/**
 * The `_meta` an upstream request goes with: the protocol's reserved keys describe mcpx-fx's own
 * hop, so a caller's are never passed on; everything else (progress token, trace context,
 * third-party keys) is.
 */
import { type JsonObject, withKey } from "@mcpx-fx/protocol/Json"
import * as Meta from "@mcpx-fx/protocol/Meta"

/** Legacy: `params` without the reserved keys a modern caller may have sent. */
export const stripReservedMeta = (params: JsonObject | undefined): JsonObject | undefined => {
  const meta = Meta.metaOf(params)
  if (params === undefined || meta === undefined) return params
  const kept: Record<string, unknown> = {}
  const { _meta: _, ...rest } = params
  return Meta.copyUnreserved(meta, kept) > 0 ? withKey(rest, "_meta", kept) : rest
}

/** Modern: the caller's unreserved keys, then mcpx-fx's own envelope; one `_meta` built per call. */
export const withModernMeta = (params: JsonObject | undefined, fields: Meta.RequestMetaFields): JsonObject => {
  const meta: Record<string, unknown> = {}
  const callerMeta = Meta.metaOf(params)
  if (callerMeta !== undefined) Meta.copyUnreserved(callerMeta, meta)
  Meta.putRequestMeta(meta, fields)
  return withKey(params ?? {}, "_meta", meta)
}
