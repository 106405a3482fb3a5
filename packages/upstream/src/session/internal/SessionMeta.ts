/**
 * The `_meta` an upstream request goes with: the protocol's reserved keys describe mcpx-fx's own
 * hop, so a caller's are never passed on; everything else (progress token, trace context,
 * third-party keys) is.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Meta from "@mcpx-fx/protocol/Meta"

/** Legacy: `params` without the reserved keys a modern caller may have sent. */
export const stripReservedMeta = (params: JsonObject | undefined): JsonObject | undefined => {
  const meta = Meta.metaOf(params)
  if (params === undefined || meta === undefined) return params
  const kept = Object.fromEntries(Object.entries(meta).filter(([k]) => !Meta.isReservedKey(k)))
  const { _meta: _, ...rest } = params
  return Object.keys(kept).length > 0 ? { ...rest, _meta: kept } : rest
}

/** Modern: the caller's unreserved keys beside mcpx-fx's own envelope. */
export const withModernMeta = (params: JsonObject | undefined, meta: JsonObject): JsonObject => {
  const callerMeta = Meta.metaOf(params) ?? {}
  const kept = Object.fromEntries(Object.entries(callerMeta).filter(([k]) => !Meta.isReservedKey(k)))
  return { ...(params ?? {}), _meta: { ...kept, ...meta } }
}
