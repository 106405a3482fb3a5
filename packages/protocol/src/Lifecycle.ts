/**
 * How a conversation starts in each era: `initialize` (legacy) and `server/discover` (modern).
 *
 * The discover result lists `supportedVersions` (not `protocolVersions`), carries server identity in
 * `result._meta["io.modelcontextprotocol/serverInfo"]` (not a top-level `serverInfo`), and is a
 * cacheable complete result, so `resultType`, `ttlMs` and `cacheScope` are required.
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { LegacyClientCapabilities, LegacyServerCapabilities, ModernServerCapabilities } from "./Capabilities.js"
import { Implementation } from "./Implementation.js"
import { isJsonObject, JsonObject, open, optionalKey } from "./Json.js"
import { ResultMeta, ServerInfoKey } from "./Meta.js"
import { CacheScope } from "./Result.js"

/** Params of `initialize`. */
export const InitializeParams = open({
  protocolVersion: Schema.String,
  capabilities: LegacyClientCapabilities,
  clientInfo: Implementation,
  _meta: optionalKey(JsonObject)
})
/** Params of `initialize`. */
export type InitializeParams = typeof InitializeParams.Type

/** Result of `initialize`. */
export const InitializeResult = open({
  protocolVersion: Schema.String,
  capabilities: LegacyServerCapabilities,
  serverInfo: Implementation,
  instructions: optionalKey(Schema.String),
  _meta: optionalKey(JsonObject)
})
/** Result of `initialize`. */
export type InitializeResult = typeof InitializeResult.Type

/** Params of `server/discover`: only the modern request `_meta` (validated by Meta). */
export const DiscoverParams = open({ _meta: JsonObject })
/** Params of `server/discover`. */
export type DiscoverParams = typeof DiscoverParams.Type

/** Result of `server/discover`. */
export const DiscoverResult = open({
  resultType: Schema.Literal("complete"),
  supportedVersions: Schema.Array(Schema.String),
  capabilities: ModernServerCapabilities,
  instructions: optionalKey(Schema.String),
  ttlMs: Schema.Number,
  cacheScope: CacheScope,
  _meta: optionalKey(ResultMeta)
})
/** Result of `server/discover`. */
export type DiscoverResult = typeof DiscoverResult.Type

/** Builds a discover result. */
export const discoverResult = (options: {
  readonly supportedVersions: ReadonlyArray<string>
  readonly capabilities: JsonObject
  readonly serverInfo?: Implementation
  readonly instructions?: string
  readonly ttlMs: number
  readonly cacheScope: CacheScope
}): JsonObject => ({
  resultType: "complete",
  supportedVersions: [...options.supportedVersions],
  capabilities: options.capabilities,
  ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
  ttlMs: options.ttlMs,
  cacheScope: options.cacheScope,
  ...(options.serverInfo !== undefined ? { _meta: { [ServerInfoKey]: options.serverInfo } } : {})
})

/**
 * The server identity in a result: `_meta` serverInfo for a modern result, the top-level
 * `serverInfo` of an `initialize` result. Undefined when absent or malformed.
 */
export const serverInfoOf = (result: JsonObject): Implementation | undefined => {
  const candidate = isJsonObject(result._meta) ? result._meta[ServerInfoKey] : result.serverInfo
  return Option.getOrUndefined(Schema.decodeUnknownOption(Implementation)(candidate))
}
