/**
 * Shaping a result for the caller's revision, in both directions.
 *
 * - `toModern` gives a result the modern envelope: `resultType` ("complete" when absent), caching
 *   hints on cacheable complete results, server identity in `_meta`. `upgrade` is the same for a
 *   result that came from a legacy server (absent `ttlMs` reads as 0).
 * - `downgrade` gives a result to a legacy caller: modern-only fields go, and whatever the caller's
 *   revision cannot express is rewritten or dropped (structured content becomes text before
 *   2025-06-18, resource links become text before 2025-06-18, audio becomes text for 2024-11-05,
 *   tool/prompt/resource fields a revision lacks are removed).
 *
 * All functions work on raw JSON objects and return new ones; unknown fields pass through.
 */
import { serverCapabilitiesFor } from "./Capabilities.js"
import * as ErrorCode from "./ErrorCode.js"
import type { Implementation } from "./Implementation.js"
import { hasKey, isJsonObject, jsonEqual, type JsonObject, omitKeys } from "./Json.js"
import { ServerInfoKey } from "./Meta.js"
import * as Method from "./Method.js"
import type { CacheScope } from "./Result.js"
import { atLeast, type LegacyRevision } from "./Revision.js"

/** Fields only modern results carry. */
export const ModernOnlyResultFields: ReadonlyArray<string> = ["resultType", "ttlMs", "cacheScope"]

/** A result's `resultType`; absent (a legacy server's answer) reads as "complete". */
export const resultTypeOf = (result: JsonObject): string => (typeof result.resultType === "string" ? result.resultType : "complete")

/** A result's `ttlMs` as a client must read it: absent, non-numeric or negative is 0. */
export const ttlMsOf = (result: JsonObject): number => typeof result.ttlMs === "number" && Number.isFinite(result.ttlMs) && result.ttlMs > 0 ? result.ttlMs : 0

/** Defaults `toModern` fills in. */
export interface ModernShapeOptions {
  /** ttlMs for a cacheable result that has none (default 0: immediately stale). */
  readonly ttlMs?: number
  /** cacheScope for a cacheable result that has none (default "private": never shared across callers). */
  readonly cacheScope?: CacheScope
  /**
   * Identity to put in `_meta["io.modelcontextprotocol/serverInfo"]`. It replaces an upstream's:
   * the host's server is the one that answered `server/discover`, and a result naming another
   * would contradict it.
   */
  readonly serverInfo?: Implementation
}

/**
 * The modern form of a result of `method`. Caching hints are required on the complete results of
 * cacheable methods and forbidden on `input_required`; existing hints are kept (a negative ttlMs
 * becomes 0).
 */
export const toModern = (result: JsonObject, method: string, options: ModernShapeOptions = {}): JsonObject => {
  const resultType = resultTypeOf(result)
  // Every modern answer passes through here. The keys it adds are put in the literal before the
  // result's own (a key added after a spread is V8's slow path, docs/performance.md); the
  // result's own came second and won, so the values that must win are set again.
  let meta: Record<string, unknown> | undefined
  if (options.serverInfo !== undefined) {
    meta = { [ServerInfoKey]: options.serverInfo, ...(isJsonObject(result._meta) ? result._meta : {}) }
    meta[ServerInfoKey] = options.serverInfo
  }
  let out: Record<string, unknown>
  if (resultType === "complete" && Method.isCacheable(method)) {
    const ttlMs = hasKey(result, "ttlMs") ? ttlMsOf(result) : Math.max(0, options.ttlMs ?? 0)
    const cacheScope = result.cacheScope === "public" || result.cacheScope === "private" ? result.cacheScope : options.cacheScope ?? "private"
    out = meta === undefined ? { resultType, ttlMs, cacheScope, ...result } : { resultType, ttlMs, cacheScope, _meta: meta, ...result }
    out.ttlMs = ttlMs
    out.cacheScope = cacheScope
  } else {
    out = meta === undefined ? { resultType, ...result } : { resultType, _meta: meta, ...result }
    if (resultType === "input_required") {
      delete out.ttlMs
      delete out.cacheScope
    }
  }
  out.resultType = resultType
  if (meta !== undefined) out._meta = meta
  return out
}

/**
 * A legacy server's result as a modern caller receives it: absent `resultType` is "complete" and
 * absent `ttlMs` is 0, as the spec tells modern clients to read older servers.
 */
export const upgrade = (result: JsonObject, method: string, options: ModernShapeOptions = {}): JsonObject => toModern(result, method, options)

/** The modern code for a legacy error code: resource-not-found moved from -32002 to -32602. */
export const upgradeErrorCode = (code: number): number => (code === ErrorCode.ResourceNotFound ? ErrorCode.InvalidParams : code)

// ---------------------------------------------------------------------------------------------
// Downgrade

const has2503 = (r: LegacyRevision) => atLeast(r, "2025-03-26")
const has2506 = (r: LegacyRevision) => atLeast(r, "2025-06-18")
const has2511 = (r: LegacyRevision) => atLeast(r, "2025-11-25")

const mapArray = (v: unknown, f: (o: JsonObject) => JsonObject): unknown => Array.isArray(v) ? v.map((x) => (isJsonObject(x) ? f(x) : x)) : v

/** `o` with the objects of its array field `key` mapped (absent or non-array fields untouched). */
const mapField = (o: JsonObject, key: string, f: (x: JsonObject) => JsonObject): JsonObject => Array.isArray(o[key]) ? { ...o, [key]: mapArray(o[key], f) } : o

const withoutLastModified = (o: JsonObject, revision: LegacyRevision): JsonObject =>
  !has2506(revision) && isJsonObject(o.annotations) && hasKey(o.annotations, "lastModified")
    ? { ...o, annotations: omitKeys(o.annotations, ["lastModified"]) }
    : o

/** Keys of `o` that `revision` does not have, given the revision each key arrived in. */
const dropNewer = (o: JsonObject, revision: LegacyRevision, since: { readonly [key: string]: (r: LegacyRevision) => boolean }): JsonObject =>
  omitKeys(o, Object.keys(since).filter((k) => since[k]?.(revision) === false))

const linkText = (link: JsonObject): string => {
  const label = typeof link.title === "string" ? link.title : typeof link.name === "string" ? link.name : undefined
  const uri = typeof link.uri === "string" ? link.uri : ""
  const head = label !== undefined && label !== uri ? `${label}: ${uri}` : uri
  return typeof link.description === "string" ? `${head}\n${link.description}` : head
}

const textBlock = (text: string, from: JsonObject): JsonObject =>
  isJsonObject(from.annotations) ? { type: "text", text, annotations: from.annotations } : { type: "text", text }

/**
 * One content block as `revision` can carry it. A resource link (2025-06-18) becomes a text block
 * naming the link, since a legacy embedded resource would need contents the link does not have;
 * audio (2025-03-26) becomes a text block saying what was left out.
 */
export const downgradeContent = (block: JsonObject, revision: LegacyRevision): JsonObject => {
  let b = block
  if (b.type === "resource_link" && !has2506(revision)) b = textBlock(linkText(b), b)
  if (b.type === "audio" && !has2503(revision)) {
    const mime = typeof b.mimeType === "string" ? b.mimeType : "audio"
    b = textBlock(`[${mime} audio omitted: MCP ${revision} cannot carry audio]`, b)
  }
  if (!has2506(revision)) b = omitKeys(b, ["_meta"])
  return withoutLastModified(b, revision)
}

const structuredText = (structured: unknown): string => JSON.stringify(structured) ?? "null"

// A text block already carrying the structured value (servers are told to include one) makes a
// second copy redundant.
const alreadyText = (content: ReadonlyArray<unknown>, structured: unknown): boolean =>
  content.some((b) => {
    if (!isJsonObject(b) || b.type !== "text" || typeof b.text !== "string") return false
    try {
      return jsonEqual(JSON.parse(b.text), structured)
    } catch {
      return false
    }
  })

/** A `tools/call` result for a legacy caller. */
const downgradeCallToolResult = (result: JsonObject, revision: LegacyRevision): JsonObject => {
  let content: ReadonlyArray<unknown> = Array.isArray(result.content) ? result.content : []
  let out: JsonObject = result
  if (hasKey(result, "structuredContent")) {
    const structured = result.structuredContent
    // 2025-06-18 and 2025-11-25 only know object-valued structured content.
    if (!has2506(revision) || !isJsonObject(structured)) {
      if (!alreadyText(content, structured)) content = [...content, { type: "text", text: structuredText(structured) }]
      out = omitKeys(out, ["structuredContent"])
    }
  }
  return { ...out, content: content.map((b) => (isJsonObject(b) ? downgradeContent(b, revision) : b)) }
}

const downgradeTool = (tool: JsonObject, revision: LegacyRevision): JsonObject => {
  let t = dropNewer(tool, revision, {
    annotations: has2503,
    title: has2506,
    outputSchema: has2506,
    _meta: has2506,
    icons: has2511,
    execution: has2511
  })
  // Legacy output schemas describe an object; a modern tool may declare any output type, whose
  // value a legacy caller receives as text instead.
  if (isJsonObject(t.outputSchema) && t.outputSchema.type !== "object") t = omitKeys(t, ["outputSchema"])
  return t
}

const downgradeDescribed = (o: JsonObject, revision: LegacyRevision): JsonObject =>
  withoutLastModified(dropNewer(o, revision, { title: has2506, _meta: has2506, icons: has2511 }), revision)

const downgradePrompt = (prompt: JsonObject, revision: LegacyRevision): JsonObject => {
  const p = dropNewer(prompt, revision, { title: has2506, _meta: has2506, icons: has2511 })
  return mapField(p, "arguments", (a) => dropNewer(a, revision, { title: has2506 }))
}

/** An `Implementation` (serverInfo, clientInfo) as `revision` has it. */
export const downgradeImplementation = (impl: JsonObject, revision: LegacyRevision): JsonObject =>
  dropNewer(impl, revision, { title: has2506, icons: has2511, description: has2511, websiteUrl: has2511 })

// A modern upstream names itself in every result's _meta; a legacy caller learned who it talks
// to at initialize, and that name is mcpx-fx's, not the upstream's.
const ModernResultMetaKeys: ReadonlyArray<string> = [ServerInfoKey]

const withoutModernMeta = (result: JsonObject): JsonObject => {
  if (!isJsonObject(result._meta) || !ModernResultMetaKeys.some((k) => hasKey(result._meta as JsonObject, k))) return result
  const meta = omitKeys(result._meta, ModernResultMetaKeys)
  return Object.keys(meta).length === 0 ? omitKeys(result, ["_meta"]) : { ...result, _meta: meta }
}

/**
 * A result of `method` as a caller speaking the legacy `revision` can read it: `resultType`,
 * `ttlMs`, `cacheScope` and the modern serverInfo in `_meta` removed, and the method's payload
 * rewritten to what the revision has.
 * An `input_required` result cannot be downgraded (its questions must become requests first);
 * callers handle it before calling this.
 */
export const downgrade = (result: JsonObject, method: string, revision: LegacyRevision): JsonObject => {
  const r = withoutModernMeta(omitKeys(result, ModernOnlyResultFields))
  switch (method) {
    case Method.ToolsCall:
      return downgradeCallToolResult(r, revision)
    case Method.ToolsList:
      return mapField(r, "tools", (t) => downgradeTool(t, revision))
    case Method.PromptsList:
      return mapField(r, "prompts", (p) => downgradePrompt(p, revision))
    case Method.PromptsGet:
      return mapField(r, "messages", (m) => (isJsonObject(m.content) ? { ...m, content: downgradeContent(m.content, revision) } : m))
    case Method.ResourcesList:
      return mapField(r, "resources", (x) => downgradeDescribed(x, revision))
    case Method.ResourcesTemplatesList:
      return mapField(r, "resourceTemplates", (x) => downgradeDescribed(x, revision))
    case Method.ResourcesRead:
      return has2506(revision) ? r : mapField(r, "contents", (c) => omitKeys(c, ["_meta"]))
    case Method.Initialize: {
      const out: Record<string, unknown> = { ...r }
      if (isJsonObject(r.serverInfo)) out.serverInfo = downgradeImplementation(r.serverInfo, revision)
      if (isJsonObject(r.capabilities)) out.capabilities = serverCapabilitiesFor(revision, r.capabilities)
      return out
    }
    default:
      return r
  }
}
