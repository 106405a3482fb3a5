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
  const kept: Record<string, unknown> = {}
  const { _meta: _, ...rest } = params
  // `_meta` before the copy: a key added after a spread is V8's slow path (docs/performance.md).
  return Meta.copyUnreserved(meta, kept) > 0 ? { _meta: kept, ...rest } : rest
}

/** Modern: the caller's unreserved keys, then mcpx-fx's own envelope; one `_meta` built per call. */
export const withModernMeta = (params: JsonObject | undefined, fields: Meta.RequestMetaFields): JsonObject => {
  const meta: Record<string, unknown> = {}
  const callerMeta = Meta.metaOf(params)
  if (callerMeta !== undefined) Meta.copyUnreserved(callerMeta, meta)
  Meta.putRequestMeta(meta, fields)
  // `_meta` before the copy, set again over params' own (a key added after a spread is V8's slow path).
  const out: Record<string, unknown> = { _meta: meta, ...params }
  out._meta = meta
  return out
}
