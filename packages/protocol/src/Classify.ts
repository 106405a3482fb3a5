/**
 * Which era an HTTP POST belongs to, decided from the body first and the headers second.
 *
 * - A request whose `_meta` carries `io.modelcontextprotocol/protocolVersion` is modern, whatever
 *   else it carries; a malformed envelope is `-32602`, never quietly served as legacy.
 * - `initialize` without that claim is legacy; with it, it is modern (and the server answers
 *   `-32601`, as the conformance suite expects of a dual-era server).
 * - A body without the claim whose `MCP-Protocol-Version` names a modern revision is `-32602`
 *   (its required `_meta` fields are missing), not `-32020` and not legacy.
 * - A body without the claim and with a legacy header, or none, is legacy.
 * - For a modern request the checks run in the conformance suite's order: header missing (`-32020`),
 *   `_meta` malformed (`-32602`), header disagrees with body (`-32020`), version not served
 *   (`-32022`). So header 2026 + body v999 is `-32020`, header v999 + body v999 is `-32022`.
 * - Batches are legacy-only: classified element by element, any modern element (or a modern
 *   header) rejects the whole batch with `-32600`.
 *
 * `Mcp-Param-*` headers are not checked here: they need the called tool's schema, which the server
 * has once it knows the tool (`HeaderCodec.checkParams`).
 *
 * Whether a legacy batch is allowed (2025-03-26 only) depends on the session's negotiated
 * revision, which the transport knows and this module does not.
 */
import * as Either from "effect/Either"
import * as ErrorCode from "./ErrorCode.js"
import * as HeaderCodec from "./HeaderCodec.js"
import * as JsonRpc from "./JsonRpc.js"
import { hasVersionClaim, metaErrorObject, metaOf, parseRequestMeta, ProtocolVersionKey, type RequestMeta } from "./Meta.js"
import * as Method from "./Method.js"
import { isLegacyRevision, type LegacyRevision, LegacyRevisions, type ModernRevision, ModernRevisions } from "./Revision.js"

/** The revisions a server is willing to serve, per era. */
export interface ClassifyOptions {
  readonly modern?: ReadonlyArray<ModernRevision>
  readonly legacy?: ReadonlyArray<LegacyRevision>
}

/** Served statelessly under `revision`; `meta` is the validated envelope (absent on notifications). */
export interface Modern {
  readonly _tag: "Modern"
  readonly revision: ModernRevision
  readonly meta: RequestMeta | undefined
}

/**
 * Served by the legacy path. `revision` is what a sessionless request speaks: its
 * `MCP-Protocol-Version`, or 2025-03-26 without one (the spec's default). Undefined means the
 * revision negotiated for the request's session governs, even over a header naming another
 * supported revision (clients SHOULD send the negotiated one; a stray header is tolerated), or,
 * for `initialize`, the negotiation to come.
 */
export interface Legacy {
  readonly _tag: "Legacy"
  readonly revision: LegacyRevision | undefined
}

/** Refused before dispatch with this JSON-RPC error (and the request's id, when it has one). */
export interface Rejected {
  readonly _tag: "Rejected"
  readonly id: JsonRpc.RequestId | undefined
  readonly error: JsonRpc.ErrorObject
}

/** The outcome of classifying a POST. */
export type Classification = Modern | Legacy | Rejected

/** The revision a legacy request without `MCP-Protocol-Version` is assumed to speak. */
export const DefaultLegacyRevision: LegacyRevision = "2025-03-26"

const FirstModern = "2026-07-28"

/**
 * Whether a header value names the modern era: a modern revision, or any later date (a modern
 * revision this server does not serve is still a modern request, to be refused as one).
 */
export const namesModernRevision = (header: string): boolean => /^\d{4}-\d{2}-\d{2}$/.test(header) && header >= FirstModern

const reject = (id: JsonRpc.RequestId | undefined, code: number, message: string, data?: unknown): Rejected => ({
  _tag: "Rejected",
  id,
  error: data === undefined ? { code, message } : { code, message, data }
})

const versionHeader = (headers: HeaderCodec.Headers): string | undefined => {
  const raw = HeaderCodec.getHeader(headers, HeaderCodec.ProtocolVersionHeader)
  return raw === undefined ? undefined : raw.replace(/^[ \t]+|[ \t]+$/g, "")
}

const legacy = (
  id: JsonRpc.RequestId | undefined,
  headers: HeaderCodec.Headers,
  served: ReadonlyArray<LegacyRevision>
): Legacy | Rejected => {
  const header = versionHeader(headers)
  const inSession = HeaderCodec.getHeader(headers, HeaderCodec.SessionIdHeader) !== undefined
  if (header === undefined) return { _tag: "Legacy", revision: inSession ? undefined : DefaultLegacyRevision }
  if (isLegacyRevision(header) && served.includes(header)) return { _tag: "Legacy", revision: inSession ? undefined : header }
  return reject(id, ErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version: ${header}`, {
    supported: [...served],
    requested: header
  })
}

const modernRequest = (
  message: JsonRpc.Request,
  headers: HeaderCodec.Headers,
  served: ReadonlyArray<ModernRevision>
): Modern | Rejected => {
  const id = message.id
  if (HeaderCodec.getHeader(headers, HeaderCodec.ProtocolVersionHeader) === undefined) {
    return reject(id, ErrorCode.HeaderMismatch, "Header mismatch: MCP-Protocol-Version header is missing", {
      header: HeaderCodec.ProtocolVersionHeader,
      reason: "MCP-Protocol-Version header is missing"
    })
  }
  const meta = parseRequestMeta(message.params)
  if (Either.isLeft(meta)) {
    const e = metaErrorObject(meta.left)
    return reject(id, e.code, e.message, e.data)
  }
  const headerCheck = HeaderCodec.checkStandard(headers, message)
  if (Either.isLeft(headerCheck)) return { _tag: "Rejected", id, error: HeaderCodec.mismatchResponse(id, headerCheck.left).error }
  const requested = meta.right[ProtocolVersionKey]
  const revision = served.find((r) => r === requested)
  if (revision === undefined) {
    return reject(id, ErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version: ${requested}`, {
      supported: [...served],
      requested
    })
  }
  return { _tag: "Modern", revision, meta: meta.right }
}

const modernNotification = (
  message: JsonRpc.Notification,
  headers: HeaderCodec.Headers,
  served: ReadonlyArray<ModernRevision>
): Modern | Rejected => {
  const headerCheck = HeaderCodec.checkStandard(headers, message)
  if (Either.isLeft(headerCheck)) return { _tag: "Rejected", id: undefined, error: HeaderCodec.mismatchResponse(undefined, headerCheck.left).error }
  const requested = hasVersionClaim(message.params) ? metaOf(message.params)?.[ProtocolVersionKey] : versionHeader(headers)
  if (typeof requested !== "string") {
    return reject(undefined, ErrorCode.InvalidParams, "Invalid params: _meta protocolVersion must be a string", {
      invalid: [{ field: ProtocolVersionKey, reason: "must be a non-empty string" }]
    })
  }
  const revision = served.find((r) => r === requested)
  if (revision === undefined) {
    return reject(undefined, ErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version: ${requested}`, {
      supported: [...served],
      requested
    })
  }
  return { _tag: "Modern", revision, meta: undefined }
}

/** Classifies one message of a POST body against the request's headers. */
export const classifyMessage = (
  message: JsonRpc.Message,
  headers: HeaderCodec.Headers,
  options: ClassifyOptions = {}
): Classification => {
  const modern = options.modern ?? ModernRevisions
  const served = options.legacy ?? LegacyRevisions
  const header = versionHeader(headers)
  const headerIsModern = header !== undefined && namesModernRevision(header)
  if (JsonRpc.isResponse(message)) {
    // Modern clients never POST responses: there are no server→client requests to answer.
    if (headerIsModern) {
      return reject(JsonRpc.idOf(message), ErrorCode.InvalidRequest, "Invalid Request: a 2026-07-28 client must not POST responses")
    }
    return legacy(undefined, headers, served)
  }
  const id = JsonRpc.idOf(message)
  if (hasVersionClaim(message.params)) {
    return JsonRpc.isRequest(message) ? modernRequest(message, headers, modern) : modernNotification(message, headers, modern)
  }
  // Legacy clients send no MCP-Protocol-Version on initialize (nothing is negotiated yet), so the
  // header says nothing about an initialize without a modern envelope.
  if (message.method === Method.Initialize) return { _tag: "Legacy", revision: undefined }
  if (headerIsModern) {
    if (JsonRpc.isNotification(message)) return modernNotification(message, headers, modern)
    const e = Either.match(parseRequestMeta(message.params), {
      onLeft: metaErrorObject,
      // Unreachable without a version claim; kept total rather than asserted.
      onRight: () => ({ code: ErrorCode.InvalidParams, message: "Invalid params: _meta protocolVersion is required", data: undefined })
    })
    return reject(id, e.code, e.message, e.data)
  }
  return legacy(id, headers, served)
}

/**
 * Classifies a decoded POST body. Invalid batch elements carry no era claim and are left to the
 * transport to answer one by one.
 */
export const classify = (
  frame: JsonRpc.Frame,
  headers: HeaderCodec.Headers,
  options: ClassifyOptions = {}
): Classification => {
  if (frame._tag === "Single") return classifyMessage(frame.parsed.message, headers, options)
  const header = versionHeader(headers)
  if (header !== undefined && namesModernRevision(header)) {
    return reject(undefined, ErrorCode.InvalidRequest, "Invalid Request: batches are not part of 2026-07-28")
  }
  const served = options.legacy ?? LegacyRevisions
  for (const [i, element] of frame.elements.entries()) {
    if (Either.isLeft(element)) continue
    const m = element.right.message
    if (!JsonRpc.isResponse(m) && hasVersionClaim(m.params)) {
      return reject(undefined, ErrorCode.InvalidRequest, `Invalid Request: batch element ${i} carries a modern _meta; batches are legacy-only`)
    }
  }
  return legacy(undefined, headers, served)
}

/** The JSON-RPC error response for a rejected POST (its HTTP status is `HttpStatus.modernStatus`). */
export const rejectionResponse = (r: Rejected): JsonRpc.ErrorResponse => JsonRpc.failure(r.id, r.error.code, r.error.message, r.error.data)
