/**
 * The HTTP status of a modern Streamable HTTP response, as a function of the JSON-RPC response
 * alone, so it is decided in one place and never by whichever handler produced the error.
 *
 * The spec mandates 400 for -32020, -32021, -32022 and a -32602 for missing `_meta`, and 404 for
 * -32601. Every -32602 is 400 here (an invalid-params error is always the client's), as are the
 * malformed-message codes -32600 and -32700. Every other code travels on 200 with its JSON-RPC
 * body (seed 002): it is about the request, not the transport, so a client that reads bodies sees
 * it and no HTTP-level retry logic mistakes an upstream's failure (-32603, -32000…) for an outage.
 */
import * as ErrorCode from "./ErrorCode.js"
import * as JsonRpc from "./JsonRpc.js"

/** 200: a result, or an application-level error carried in the body. */
export const Ok = 200
/** 202: a notification (or, legacy only, a response) was accepted; no body. */
export const Accepted = 202
/** 400: the request was malformed, disagreed with its headers, or named an unsupported version. */
export const BadRequest = 400
/** 404: the server has no such method (or the legacy session is unknown). */
export const NotFound = 404

const clientErrors: ReadonlyArray<number> = [
  ErrorCode.ParseError,
  ErrorCode.InvalidRequest,
  ErrorCode.InvalidParams,
  ErrorCode.HeaderMismatch,
  ErrorCode.MissingRequiredClientCapability,
  ErrorCode.UnsupportedProtocolVersion
]

/** The HTTP status for a JSON-RPC error code. */
export const statusForErrorCode = (code: number): number => {
  if (clientErrors.includes(code)) return BadRequest
  if (code === ErrorCode.MethodNotFound) return NotFound
  return Ok
}

/** The HTTP status for a modern response: 200 for a result, otherwise by error code. */
export const modernStatus = (response: JsonRpc.Response): number => JsonRpc.isErrorResponse(response) ? statusForErrorCode(response.error.code) : Ok
