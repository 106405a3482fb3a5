/**
 * JSON-RPC and MCP error codes. Only the edge of the program (the host-facing server and the
 * upstream transports) deals in these numbers; services raise typed errors.
 */

/** Invalid JSON was received. */
export const ParseError = -32700
/** The JSON sent is not a valid request object. */
export const InvalidRequest = -32600
/** The method does not exist or is not available (HTTP 404 in the modern era). */
export const MethodNotFound = -32601
/** Invalid method parameters, including a modern request missing required `_meta` (HTTP 400). */
export const InvalidParams = -32602
/** Internal error. */
export const InternalError = -32603
/** Legacy resource-not-found (2025-11-25 and earlier; modern servers use -32602). */
export const ResourceNotFound = -32002
/** Legacy URL elicitation required (2025-11-25 only). */
export const UrlElicitationRequired = -32042
/** A mirrored HTTP header disagrees with the body, is missing, or is malformed (2026-07-28). */
export const HeaderMismatch = -32020
/** The request lacks a client capability the server needs; data.requiredCapabilities (2026-07-28). */
export const MissingRequiredClientCapability = -32021
/** The requested protocol version is not supported; data.supported and data.requested (2026-07-28). */
export const UnsupportedProtocolVersion = -32022

/** The codes whose presence proves a server speaks the modern era. */
export const ModernErrorCodes: ReadonlyArray<number> = [
  HeaderMismatch,
  MissingRequiredClientCapability,
  UnsupportedProtocolVersion
]

/** Whether an error code proves the peer is modern. */
export const isModernErrorCode = (code: number): boolean => ModernErrorCodes.includes(code)
