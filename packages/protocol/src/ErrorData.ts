/**
 * The data of the three modern error codes, and builders for their error responses.
 *
 * `-32020` HeaderMismatch has no data defined by the spec; mcpx-fx sends `{header, reason}` so a
 * client can tell which header was wrong. `-32021` carries `requiredCapabilities` (an object keyed
 * by capability, never an array). `-32022` carries `supported` and echoes `requested`.
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ModernClientCapabilities } from "./Capabilities.js"
import * as ErrorCode from "./ErrorCode.js"
import { type JsonObject, open, optionalKey } from "./Json.js"
import * as JsonRpc from "./JsonRpc.js"

/** Data of `-32020` as mcpx-fx sends it (other senders may send none). */
export const HeaderMismatchData = open({ header: optionalKey(Schema.String), reason: optionalKey(Schema.String) })
/** Data of `-32020`. */
export type HeaderMismatchData = typeof HeaderMismatchData.Type

/** Data of `-32021`. */
export const MissingRequiredClientCapabilityData = open({ requiredCapabilities: ModernClientCapabilities })
/** Data of `-32021`. */
export type MissingRequiredClientCapabilityData = typeof MissingRequiredClientCapabilityData.Type

/** Data of `-32022`. */
export const UnsupportedProtocolVersionData = open({ supported: Schema.Array(Schema.String), requested: Schema.String })
/** Data of `-32022`. */
export type UnsupportedProtocolVersionData = typeof UnsupportedProtocolVersionData.Type

/** A `-32020` response. */
export const headerMismatch = (id: JsonRpc.RequestId | undefined, reason: string, header?: string): JsonRpc.ErrorResponse =>
  JsonRpc.failure(id, ErrorCode.HeaderMismatch, `Header mismatch: ${reason}`, header === undefined ? { reason } : { header, reason })

/** A `-32021` response. */
export const missingRequiredClientCapability = (
  id: JsonRpc.RequestId | undefined,
  requiredCapabilities: JsonObject
): JsonRpc.ErrorResponse => JsonRpc.failure(id, ErrorCode.MissingRequiredClientCapability, "Missing required client capability", { requiredCapabilities })

/** A `-32022` response. */
export const unsupportedProtocolVersion = (
  id: JsonRpc.RequestId | undefined,
  supported: ReadonlyArray<string>,
  requested: string
): JsonRpc.ErrorResponse =>
  JsonRpc.failure(id, ErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version: ${requested}`, {
    supported: [...supported],
    requested
  })

/**
 * The `-32022` data of an error, when it is a well-formed `-32022`. A `-32022` without a usable
 * `supported` list is not something a client can retry from.
 */
export const readUnsupportedProtocolVersion = (error: JsonRpc.ErrorObject): Option.Option<UnsupportedProtocolVersionData> =>
  error.code === ErrorCode.UnsupportedProtocolVersion
    ? Schema.decodeUnknownOption(UnsupportedProtocolVersionData)(error.data)
    : Option.none()

/** The `-32021` data of an error, when it is a well-formed `-32021`. */
export const readMissingRequiredClientCapability = (
  error: JsonRpc.ErrorObject
): Option.Option<MissingRequiredClientCapabilityData> =>
  error.code === ErrorCode.MissingRequiredClientCapability
    ? Schema.decodeUnknownOption(MissingRequiredClientCapabilityData)(error.data)
    : Option.none()
